package envconfig_test

import (
	"testing"

	"github.com/tetherhq/tether/sdk/contrib/envconfig"
)

func TestLoadDefaultClientOptions(t *testing.T) {
	t.Setenv("TETHER_ADDRESS", "")
	t.Setenv("TEMPORAL_ADDRESS", "localhost:7233")
	t.Setenv("TETHER_NAMESPACE", "orders")
	t.Setenv("TEMPORAL_NAMESPACE", "ignored")
	t.Setenv("TETHER_API_KEY", "")
	t.Setenv("TEMPORAL_API_KEY", "tk_x")
	o := envconfig.MustLoadDefaultClientOptions()
	if o.Address != "localhost:7233" || o.Namespace != "orders" || o.APIKey != "tk_x" {
		t.Fatalf("options %+v", o)
	}
}

type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }

func TestLoadClientOptions(t *testing.T) {
	o, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{EnvLookup: mapEnv{"TETHER_ADDRESS": "http://h:1", "TEMPORAL_ADDRESS": "x:2"}})
	if err != nil || o.Address != "http://h:1" {
		t.Fatalf("%+v %v", o, err)
	}
	if _, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: "config.toml"}); err == nil {
		t.Fatal("a configuration file accepted")
	}
}
