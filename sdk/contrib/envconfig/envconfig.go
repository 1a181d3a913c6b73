// Package envconfig loads client options from the environment and from a
// TOML profile file, in the shape of Temporal's
// go.temporal.io/sdk/contrib/envconfig, so that a sample's
//
//	c, err := client.Dial(envconfig.MustLoadDefaultClientOptions())
//
// works unchanged against Tether.
//
// Settings come from, in increasing precedence: the profile file
// (ConfigFilePath, else $TETHER_CONFIG_FILE, else
// <user config dir>/tether/tether.toml when it exists), then the
// environment: TETHER_ADDRESS, TETHER_NAMESPACE, TETHER_API_KEY,
// TETHER_TLS_CA_FILE, TETHER_PROFILE. Temporal's variables
// (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY,
// TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_PROFILE,
// TEMPORAL_CONFIG_FILE) are read where the TETHER_ one is unset.
//
// The file holds profiles in Temporal's layout:
//
//	[profile.default]
//	address = "localhost:7070"
//	namespace = "default"
//	api_key = "…"
//	[profile.default.tls]
//	server_ca_cert_path = "/etc/tether/ca.pem"
//
// Keys Tether has no use for (grpc_meta, client certificates) are refused
// when ConfigFileStrict is set and ignored otherwise.
package envconfig

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/tetherhq/tether/sdk/client"
)

// DefaultConfigFileProfile is the profile read when none is named.
const DefaultConfigFileProfile = "default"

// LoadClientOptionsRequest says where to load client options from
// (Temporal's envconfig.LoadClientOptionsRequest).
type LoadClientOptionsRequest struct {
	// ConfigFilePath is the TOML file to read; empty: $TETHER_CONFIG_FILE
	// (or $TEMPORAL_CONFIG_FILE), else <user config dir>/tether/tether.toml
	// when it exists.
	ConfigFilePath string
	// ConfigFileProfile is the profile to read; empty: $TETHER_PROFILE (or
	// $TEMPORAL_PROFILE), else "default".
	ConfigFileProfile string
	// ConfigFileData is TOML to read instead of a file.
	ConfigFileData []byte
	// ConfigFileStrict refuses keys this package does not know.
	ConfigFileStrict bool
	// DisableFile reads no file.
	DisableFile bool
	// DisableEnv reads no environment variable.
	DisableEnv bool
	// EnvLookup replaces os.LookupEnv (for tests).
	EnvLookup EnvLookup
}

// EnvLookup looks up an environment variable, as os.LookupEnv does.
type EnvLookup interface {
	LookupEnv(key string) (string, bool)
}

type osEnv struct{}

func (osEnv) LookupEnv(key string) (string, bool) { return os.LookupEnv(key) }

// profile is one [profile.NAME] table of the file.
type profile struct {
	Address   string `toml:"address"`
	Namespace string `toml:"namespace"`
	APIKey    string `toml:"api_key"`
	TLS       *struct {
		Disabled         bool   `toml:"disabled"`
		ServerCACertPath string `toml:"server_ca_cert_path"`
		ServerName       string `toml:"server_name"`
	} `toml:"tls"`
	GRPCMeta map[string]string `toml:"grpc_meta"`
}

type file struct {
	Profile map[string]profile `toml:"profile"`
}

// LoadClientOptions returns client options from the file and the
// environment the request names. A profile named explicitly that the file
// lacks, a file that does not parse or (with ConfigFileStrict) a key not
// known is an error; so is an explicitly named file that cannot be read.
func LoadClientOptions(req LoadClientOptionsRequest) (client.Options, error) {
	var opts client.Options
	env := req.EnvLookup
	if env == nil {
		env = osEnv{}
	}
	get := func(names ...string) string {
		if req.DisableEnv {
			return ""
		}
		for _, n := range names {
			if v, ok := env.LookupEnv(n); ok && v != "" {
				return v
			}
		}
		return ""
	}
	if !req.DisableFile {
		p, err := loadProfile(req, get)
		if err != nil {
			return opts, err
		}
		if p != nil {
			opts.HostPort = p.Address
			opts.Namespace = p.Namespace
			opts.APIKey = p.APIKey
			if p.TLS != nil && !p.TLS.Disabled {
				opts.CAFile = p.TLS.ServerCACertPath
			}
		}
	}
	if v := get("TETHER_ADDRESS", "TEMPORAL_ADDRESS"); v != "" {
		opts.HostPort = v
	}
	if v := get("TETHER_NAMESPACE", "TEMPORAL_NAMESPACE"); v != "" {
		opts.Namespace = v
	}
	if v := get("TETHER_API_KEY", "TEMPORAL_API_KEY"); v != "" {
		opts.APIKey = v
	}
	if v := get("TETHER_TLS_CA_FILE", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"); v != "" {
		opts.CAFile = v
	}
	return opts, nil
}

// loadProfile reads the request's profile; nil when there is no file to
// read and none was named.
func loadProfile(req LoadClientOptionsRequest, get func(...string) string) (*profile, error) {
	name := req.ConfigFileProfile
	named := name != ""
	if name == "" {
		name = get("TETHER_PROFILE", "TEMPORAL_PROFILE")
		named = name != ""
	}
	if name == "" {
		name = DefaultConfigFileProfile
	}
	data := req.ConfigFileData
	path := req.ConfigFilePath
	if data == nil {
		explicit := path != ""
		if path == "" {
			path = get("TETHER_CONFIG_FILE", "TEMPORAL_CONFIG_FILE")
			explicit = path != ""
		}
		if path == "" {
			dir, err := os.UserConfigDir()
			if err != nil {
				return nil, nil //nolint:nilerr // no config dir: no default file
			}
			path = filepath.Join(dir, "tether", "tether.toml")
		}
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			data = b
		case !explicit && errors.Is(err, os.ErrNotExist):
			if named {
				return nil, fmt.Errorf("envconfig: profile %q: no config file at %s", name, path)
			}
			return nil, nil
		default:
			return nil, fmt.Errorf("envconfig: reading %s: %w", path, err)
		}
	}
	var f file
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		return nil, fmt.Errorf("envconfig: parsing %s: %w", describe(path), err)
	}
	if req.ConfigFileStrict {
		if und := md.Undecoded(); len(und) > 0 {
			return nil, fmt.Errorf("envconfig: %s: unknown key %s", describe(path), und[0])
		}
	}
	p, ok := f.Profile[name]
	if !ok {
		if named || name != DefaultConfigFileProfile {
			return nil, fmt.Errorf("envconfig: %s has no profile %q", describe(path), name)
		}
		return nil, nil
	}
	if req.ConfigFileStrict && len(p.GRPCMeta) > 0 {
		return nil, fmt.Errorf("envconfig: profile %q: grpc_meta is not supported (Tether speaks HTTP)", name)
	}
	return &p, nil
}

func describe(path string) string {
	if path == "" {
		return "the config data"
	}
	return path
}

// LoadDefaultClientOptions is LoadClientOptions with the default request:
// the default file and profile, and the environment.
func LoadDefaultClientOptions() (client.Options, error) {
	return LoadClientOptions(LoadClientOptionsRequest{})
}

// MustLoadDefaultClientOptions is LoadDefaultClientOptions, panicking on an
// error (Temporal's).
func MustLoadDefaultClientOptions() client.Options {
	opts, err := LoadDefaultClientOptions()
	if err != nil {
		panic(err)
	}
	return opts
}
