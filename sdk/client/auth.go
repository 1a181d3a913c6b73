package client

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/tetherhq/tether/sdk/internal/protocol"
)

// EnvAPIKey is the environment variable read when Options.APIKey is empty.
const EnvAPIKey = "TETHER_API_KEY"

// workerSecretHeader carries a worker session's secret (see
// protocol.WithWorkerSecret); the server's name for it is
// server.WorkerSecretHeader.
const workerSecretHeader = "Tether-Worker-Secret"

// authHeaders sets the request's API key and worker secret.
func (c *TetherClient) authHeaders(req *http.Request) {
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	if s := protocol.WorkerSecret(req.Context()); s != "" {
		req.Header.Set(workerSecretHeader, s)
	}
}

// tlsConfig is the TLS configuration of opts (nil: the defaults).
func tlsConfig(opts Options) (*tls.Config, error) {
	if opts.TLSConfig == nil && opts.CAFile == "" {
		return nil, nil
	}
	if opts.HTTPClient != nil {
		return nil, errors.New("tether: Options.TLSConfig and CAFile apply to the client's own transport: configure TLS on Options.HTTPClient instead")
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.TLSConfig != nil {
		cfg = opts.TLSConfig.Clone()
	}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("tether: read Options.CAFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tether: Options.CAFile %s holds no PEM certificate", opts.CAFile)
		}
		cfg.RootCAs = pool
	}
	return cfg, nil
}
