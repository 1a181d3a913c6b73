package client

import (
	"crypto/tls"
	"errors"

	"google.golang.org/grpc"
)

// ConnectionOptions configure the connection to the server (Temporal's
// client.ConnectionOptions; Tether's connection is HTTP).
type ConnectionOptions struct {
	// TLS configures TLS (as Options.TLSConfig); set, it makes a
	// "host:port" address https.
	TLS *tls.Config
	// DialOptions are Temporal's gRPC dial options: accepted and not used
	// (Tether's client speaks HTTP; an API key goes in Credentials).
	DialOptions []grpc.DialOption
}

// Credentials authenticate the client (Temporal's client.Credentials):
// NewAPIKeyStaticCredentials or NewMTLSCredentials.
type Credentials interface {
	// apply sets the credentials on options.
	apply(o *Options) error
}

// apiKeyCredentials is an API key.
type apiKeyCredentials string

func (k apiKeyCredentials) apply(o *Options) error {
	if o.APIKey != "" && o.APIKey != string(k) {
		return errors.New("tether: Options.APIKey and Options.Credentials give different API keys")
	}
	o.APIKey = string(k)
	return nil
}

// NewAPIKeyStaticCredentials returns credentials sending apiKey as a bearer
// token on every request (as Options.APIKey).
func NewAPIKeyStaticCredentials(apiKey string) Credentials { return apiKeyCredentials(apiKey) }

// mtlsCredentials is a client certificate.
type mtlsCredentials tls.Certificate

func (c mtlsCredentials) apply(o *Options) error {
	cfg := o.ConnectionOptions.TLS
	if cfg == nil {
		cfg = o.TLSConfig
	}
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		cfg = cfg.Clone()
	}
	cfg.Certificates = append(cfg.Certificates, tls.Certificate(c))
	o.ConnectionOptions.TLS, o.TLSConfig = nil, cfg
	return nil
}

// NewMTLSCredentials returns credentials presenting certificate to the
// server in TLS (a server behind a proxy that checks client certificates;
// Tether's own server authenticates by API key).
func NewMTLSCredentials(certificate tls.Certificate) Credentials { return mtlsCredentials(certificate) }

// applyTemporalOptions folds Temporal's ConnectionOptions and Credentials
// into Tether's fields, and reports whether the connection uses TLS.
func applyTemporalOptions(o *Options) (usesTLS bool, err error) {
	if o.ConnectionOptions.TLS != nil {
		if o.TLSConfig != nil {
			return false, errors.New("tether: set Options.TLSConfig or Options.ConnectionOptions.TLS, not both")
		}
		o.TLSConfig, o.ConnectionOptions.TLS = o.ConnectionOptions.TLS, nil
	}
	if o.Credentials != nil {
		if err := o.Credentials.apply(o); err != nil {
			return false, err
		}
	}
	return o.TLSConfig != nil || o.CAFile != "", nil
}
