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
	"os"

	"github.com/tetherhq/tether/sdk/client"
)

// LoadDefaultClientOptions returns the client options the environment
// gives. It never fails today; the error is Temporal's signature.
func LoadDefaultClientOptions() (client.Options, error) {
	return client.Options{
		Address:   first("TETHER_ADDRESS", "TEMPORAL_ADDRESS"),
		Namespace: first("TETHER_NAMESPACE", "TEMPORAL_NAMESPACE"),
		APIKey:    first("TETHER_API_KEY", "TEMPORAL_API_KEY"),
	}, nil
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
func first(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}
