package apptest_test

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tetherhq/tether/internal/apptest"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

// TestStartServesOverHTTP starts an App and asks it, over real HTTP, whether
// it is ready: Start returns only once the listener has connected.
func TestStartServesOverHTTP(t *testing.T) {
	app := apptest.Start(t, server.AppConfig{})
	if !strings.HasPrefix(app.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL %q, want one on 127.0.0.1", app.URL())
	}
	resp, err := http.Get(app.URL() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"connected"`) {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
}
