package testsuite_test

import (
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/worker"
)

// Goal: samples-go's helloworld Test_Using_DevServer: a dev server
// started by the test, a worker and a workflow on it, then stopped.
func TestStartDevServer(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "tether")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/tetherhq/tether/cmd/tether").CombinedOutput()
	require.NoError(t, err, "build tether: %s", out)

	ctx := context.Background()
	// Temporal's download and dynamic-config options are accepted (the
	// options of samples-go's standalone-activity test).
	server, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: bin, ClientOptions: &client.Options{HostPort: ""},
		CachedDownload: testsuite.CachedDownload{Version: "v1.5.2-standalone-activity-server"},
		ExtraArgs:      []string{"--dynamic-config-value", "activity.enableStandalone=true", "--dynamic-config-value=history.enableChasm=true"}})
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_ = server.Stop()
		}
	}()

	c := server.Client()
	w := worker.New(c, "hello-dev-server", worker.Options{})
	require.NoError(t, w.AddWorkflow(Greeting))
	require.NoError(t, w.AddActivity(Greet))
	require.NoError(t, w.Start())
	defer w.Stop()

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "hello_dev_server", TaskQueue: "hello-dev-server"}, Greeting, "Temporal")
	require.NoError(t, err)
	var result string
	require.NoError(t, run.Get(ctx, &result))
	require.Equal(t, "Hello Temporal!", result)

	// A standalone activity on the same worker.
	handle, err := c.ExecuteActivity(ctx, client.StartActivityOptions{ID: "test-activity-id", TaskQueue: "hello-dev-server",
		ScheduleToCloseTimeout: 10 * time.Second}, Greet, "World")
	require.NoError(t, err)
	require.NotEmpty(t, handle.GetRunID())
	require.NoError(t, handle.Get(ctx, &result))
	require.Equal(t, "Hello World!", result)

	w.Stop()
	require.NoError(t, server.Stop())
	stopped = true
	hc := http.Client{Timeout: 2 * time.Second}
	_, err = hc.Get("http://" + server.FrontendHostPort() + "/readyz")
	require.Error(t, err, "the server is gone")
}

// Goal: without a tether binary StartDevServer says so.
func TestStartDevServerWithoutBinary(t *testing.T) {
	_, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{ExistingPath: filepath.Join(t.TempDir(), "missing")})
	require.ErrorContains(t, err, "StartDevServer")
	t.Setenv("PATH", t.TempDir())
	_, err = testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{})
	require.ErrorContains(t, err, "ExistingPath")
}
