// Package envconfig loads client options from the environment, as
// Temporal's go.temporal.io/sdk/contrib/envconfig does for its samples:
// client.Dial(envconfig.MustLoadDefaultClientOptions()).
//
// It reads environment variables only (no configuration file):
//
//   - TETHER_ADDRESS, else TEMPORAL_ADDRESS: the server (client.Options.Address);
//     empty: client.DefaultHostPort;
//   - TETHER_NAMESPACE, else TEMPORAL_NAMESPACE: the namespace;
//   - TETHER_API_KEY, else TEMPORAL_API_KEY: the API key.
package envconfig

import (
	"errors"
	"os"

	"github.com/tetherhq/tether/sdk/client"
)

// LoadClientOptionsRequest configures LoadClientOptions (Temporal's). Tether
// reads no configuration file: a request naming one is refused.
type LoadClientOptionsRequest struct {
	// ConfigFilePath is refused when set (no configuration files).
	ConfigFilePath string
	// ConfigFileProfile is refused when set (no profiles).
	ConfigFileProfile string
	// ConfigFileData is refused when set.
	ConfigFileData []byte
	// DisableFile is accepted (there is no file).
	DisableFile bool
	// DisableEnv ignores the environment: the options are empty.
	DisableEnv bool
	// EnvLookup replaces os.LookupEnv (nil: the process environment).
	EnvLookup EnvLookup
}

// EnvLookup looks environment variables up.
type EnvLookup interface {
	// LookupEnv is os.LookupEnv.
	LookupEnv(key string) (string, bool)
}

// osEnv is the process environment.
type osEnv struct{}

func (osEnv) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// LoadClientOptions returns the client options the environment gives.
func LoadClientOptions(req LoadClientOptionsRequest) (client.Options, error) {
	if req.ConfigFilePath != "" || req.ConfigFileProfile != "" || len(req.ConfigFileData) > 0 {
		return client.Options{}, errors.New("envconfig: configuration files and profiles are not supported: set TETHER_ADDRESS (or TEMPORAL_ADDRESS), TETHER_NAMESPACE and TETHER_API_KEY")
	}
	if req.DisableEnv {
		return client.Options{}, nil
	}
	env := req.EnvLookup
	if env == nil {
		env = osEnv{}
	}
	return client.Options{
		Address:   first(env, "TETHER_ADDRESS", "TEMPORAL_ADDRESS"),
		Namespace: first(env, "TETHER_NAMESPACE", "TEMPORAL_NAMESPACE"),
		APIKey:    first(env, "TETHER_API_KEY", "TEMPORAL_API_KEY"),
	}, nil
}

// LoadDefaultClientOptions returns the client options the environment
// gives (LoadClientOptions of an empty request).
func LoadDefaultClientOptions() (client.Options, error) {
	return LoadClientOptions(LoadClientOptionsRequest{})
}

// MustLoadDefaultClientOptions is LoadDefaultClientOptions that panics on
// an error.
func MustLoadDefaultClientOptions() client.Options {
	o, err := LoadDefaultClientOptions()
	if err != nil {
		panic(err)
	}
	return o
}

// first returns the first non-empty value of the variables.
func first(env EnvLookup, names ...string) string {
	for _, n := range names {
		if v, _ := env.LookupEnv(n); v != "" {
			return v
		}
	}
	return ""
}
