package envconfig_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/contrib/envconfig"
)

type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }

const sample = `
[profile.default]
address = "localhost:7070"
namespace = "default"

[profile.default.grpc_meta]
trace-id = "dev"

[profile.prod]
address = "tether.example.com:443"
namespace = "prod"
api_key = "tk_secret"

[profile.prod.tls]
server_ca_cert_path = "/etc/tether/ca.pem"
`

func TestLoadClientOptions_ProfileThenEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(path, []byte(sample), 0o600))

	opts, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: path, ConfigFileProfile: "prod", EnvLookup: mapEnv{}})
	require.NoError(t, err)
	require.Equal(t, "tether.example.com:443", opts.HostPort)
	require.Equal(t, "prod", opts.Namespace)
	require.Equal(t, "tk_secret", opts.APIKey)
	require.Equal(t, "/etc/tether/ca.pem", opts.CAFile)

	// The environment wins over the file; Temporal's names are read too.
	opts, err = envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: path, EnvLookup: mapEnv{
		"TEMPORAL_ADDRESS": "127.0.0.1:7071", "TETHER_NAMESPACE": "orders",
	}})
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:7071", opts.HostPort)
	require.Equal(t, "orders", opts.Namespace)

	// TETHER_ names win over TEMPORAL_ ones.
	opts, err = envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{DisableFile: true, EnvLookup: mapEnv{
		"TEMPORAL_ADDRESS": "a:1", "TETHER_ADDRESS": "b:2",
	}})
	require.NoError(t, err)
	require.Equal(t, "b:2", opts.HostPort)
}

func TestLoadClientOptions_Errors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(path, []byte(sample), 0o600))

	_, err := envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: path, ConfigFileProfile: "staging", EnvLookup: mapEnv{}})
	require.ErrorContains(t, err, `no profile "staging"`)

	_, err = envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: filepath.Join(t.TempDir(), "missing.toml"), EnvLookup: mapEnv{}})
	require.ErrorContains(t, err, "missing.toml")

	_, err = envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFileData: []byte("[profile.default\n"), EnvLookup: mapEnv{}})
	require.ErrorContains(t, err, "parsing")

	_, err = envconfig.LoadClientOptions(envconfig.LoadClientOptionsRequest{ConfigFilePath: path, ConfigFileStrict: true, EnvLookup: mapEnv{}})
	require.ErrorContains(t, err, "grpc_meta")
}

func TestLoadDefaultClientOptions_NoFileIsFine(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("TETHER_CONFIG_FILE", "")
	t.Setenv("TEMPORAL_CONFIG_FILE", "")
	t.Setenv("TETHER_PROFILE", "")
	t.Setenv("TEMPORAL_PROFILE", "")
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("TETHER_ADDRESS", "127.0.0.1:9999")
	opts := envconfig.MustLoadDefaultClientOptions()
	require.Equal(t, "127.0.0.1:9999", opts.HostPort)
}
