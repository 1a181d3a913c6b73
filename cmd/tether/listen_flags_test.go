package main

import (
	"github.com/spf13/pflag"
	"io"
	"testing"
)

// TestListenDatabaseURLFlag: --listen-database-url, else
// $TETHER_LISTEN_DATABASE_URL, reaches server.AppConfig.ListenDatabaseURL;
// without either it is empty (the App listens on the database URL).
func TestListenDatabaseURLFlag(t *testing.T) {
	none := func(*pflag.FlagSet, *serveOptions) {}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, ""},
		{"postgres://db-host/tether", nil, "postgres://db-host/tether"},
		{"postgres://db-host/tether", []string{"--listen-database-url", "postgres://other/tether"}, "postgres://other/tether"},
	} {
		t.Setenv(envListenDatabaseURL, tc.env)
		for _, name := range []string{"tether server", "tether dev"} {
			o, _, err := parseServe(name, tc.args, io.Discard, none)
			if err != nil {
				t.Fatal(err)
			}
			if got := o.appConfig(nil).ListenDatabaseURL; got != tc.want {
				t.Fatalf("%s %v with $%s=%q: ListenDatabaseURL %q, want %q", name, tc.args, envListenDatabaseURL, tc.env, got, tc.want)
			}
		}
	}
}
