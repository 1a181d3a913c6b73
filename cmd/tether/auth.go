package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server"
	"github.com/tetherhq/tether/server/storage"
)

// authOptions are the authentication and TLS settings of `tether server`
// and `tether dev` (docs/security.md).
type authOptions struct {
	// off: no API keys (server --insecure-no-auth; dev without --auth).
	off          bool
	metricsAuth  bool
	cacheTTL     time.Duration
	startRate    float64
	startBurst   int
	keyBeatRate  float64
	keyBeatBurst int
	unauthRate   float64
	unauthBurst  int
	tlsCert      string
	tlsKey       string
	// requireKey: refuse to start while no API key exists (server).
	requireKey bool
	// devKey: create an admin key of every namespace at start (dev
	// --auth); onDevKey receives it.
	devKey   bool
	onDevKey func(key string)
}

// sharedFlags declares the flags common to server and dev.
func (a *authOptions) sharedFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&a.metricsAuth, "metrics-auth", false, "require an admin API key on /metrics too")
	fs.DurationVar(&a.cacheTTL, "auth-cache-ttl", 5*time.Second, "how long a verified API key and the set of namespaces are trusted without reading the database (a key revoked through another replica stops working within it)")
	fs.Float64Var(&a.startRate, "start-rate", 1000, "workflow starts per second allowed per API key, per server (negative: no limit)")
	fs.IntVar(&a.startBurst, "start-burst", 2000, "workflow start burst allowed per API key")
	fs.Float64Var(&a.keyBeatRate, "key-heartbeat-rate", 2000, "worker heartbeats per second allowed per API key, all its workers together, per server (negative: no limit)")
	fs.IntVar(&a.keyBeatBurst, "key-heartbeat-burst", 4000, "worker heartbeat burst allowed per API key")
	fs.Float64Var(&a.unauthRate, "unauth-rate", 100, "requests per second allowed per client address without a recently verified API key, counted before the key is looked up (negative: no limit)")
	fs.IntVar(&a.unauthBurst, "unauth-burst", 200, "burst of requests without a recently verified API key allowed per client address")
	fs.StringVar(&a.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) file (with --tls-key)")
	fs.StringVar(&a.tlsKey, "tls-key", "", "the PEM private key of --tls-cert")
}

// serverFlags declares the flags of `tether server`: authentication is on
// unless --insecure-no-auth.
func (a *authOptions) serverFlags(fs *pflag.FlagSet) {
	a.sharedFlags(fs)
	fs.BoolVar(&a.off, "insecure-no-auth", false, "serve without authentication: anyone who reaches the port may do anything")
	a.requireKey = true
}

// devFlags declares the flags of `tether dev`: open unless --auth.
func (a *authOptions) devFlags(fs *pflag.FlagSet, withAuth *bool) {
	a.sharedFlags(fs)
	fs.BoolVar(withAuth, "auth", false, "require API keys; an admin key of every namespace is created and printed in the banner")
}

// config is the server's AuthConfig.
func (a authOptions) config() server.AuthConfig {
	return server.AuthConfig{Required: !a.off, MetricsAuth: a.metricsAuth, CacheTTL: a.cacheTTL,
		StartRate: a.startRate, StartBurst: a.startBurst, KeyHeartbeatRate: a.keyBeatRate, KeyHeartbeatBurst: a.keyBeatBurst,
		UnauthRate: a.unauthRate, UnauthBurst: a.unauthBurst}
}

// tlsConfig loads the certificate when one is given (nil: plain HTTP).
func (a authOptions) tlsConfig() (*tls.Config, error) {
	if a.tlsCert == "" && a.tlsKey == "" {
		return nil, nil
	}
	if a.tlsCert == "" || a.tlsKey == "" {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	cert, err := tls.LoadX509KeyPair(a.tlsCert, a.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("load the TLS certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}}, nil
}

// prepare runs once the schema is migrated: it refuses to start a server
// that requires keys while none exists, and creates dev's admin key.
func (a authOptions) prepare(ctx context.Context, st storage.Keys, logger *slog.Logger) error {
	if a.off {
		logger.Warn("authentication is off: anyone who reaches the port may do anything")
		return nil
	}
	if a.devKey {
		k, err := st.CreateAPIKey(ctx, &storage.CreateAPIKeyParams{Namespace: api.AllNamespaces, Role: api.RoleAdmin, Name: "tether dev"})
		if err != nil {
			return err
		}
		if a.onDevKey != nil {
			a.onDevKey(k.Key)
		}
		return nil
	}
	if a.requireKey {
		keys, err := st.ListAPIKeys(ctx, &storage.ListAPIKeysParams{CountValid: true})
		if err != nil {
			return err
		}
		if keys.Valid == 0 {
			return errors.New("authentication is on and no API key exists: create the first one with " +
				"'tether apikey create --namespace \"*\" --role admin', or start with --insecure-no-auth")
		}
	}
	return nil
}

// devLoopback is where an open `tether dev` listens unless told otherwise.
const devLoopback = "127.0.0.1:7070"

// devSetup applies dev's --auth: with it, an admin key is made at start
// (into *key); without it, the server is open. Either way dev listens on
// the loopback interface unless --addr or $TETHER_ADDR named an address
// (addrSet). It returns the address to listen on.
func (a *authOptions) devSetup(addrSet bool, addr string, withAuth bool, key *string) string {
	a.off = !withAuth
	a.devKey = withAuth
	a.onDevKey = func(k string) { *key = k }
	if !addrSet && os.Getenv(envAddr) == "" {
		return devLoopback
	}
	return addr
}
