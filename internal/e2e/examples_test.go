package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// withEnv is the test's environment with TETHER_ADDRESS (and no API key:
// the test servers run without authentication) set to addr.
func withEnv(addr string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TETHER_ADDRESS=") && !strings.HasPrefix(kv, "TETHER_API_KEY=") {
			env = append(env, kv)
		}
	}
	return append(env, "TETHER_ADDRESS="+addr)
}

// examples/hello finds its server from TETHER_ADDRESS, and -address
// overrides it.
func TestHelloExampleAddress(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(t.TempDir(), "hello")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/tetherhq/tether/examples/hello").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/hello: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "Ada")
	cmd.Env = withEnv(e.addr)
	cmd.Stderr = &logWriter{t: t}
	out, err := cmd.Output()
	if err != nil || string(out) != "Hello, Ada!\n" {
		t.Fatalf("TETHER_ADDRESS: %v, %q", err, out)
	}

	// A closed port in the environment; the flag names the server.
	cmd = exec.Command(bin, "-address", e.addr, "Bob")
	cmd.Env = withEnv("http://127.0.0.1:1")
	cmd.Stderr = &logWriter{t: t}
	out, err = cmd.Output()
	if err != nil || string(out) != "Hello, Bob!\n" {
		t.Fatalf("-address: %v, %q", err, out)
	}
}

// The sample worker takes its server from TETHER_ADDRESS, and -pid-file
// holds its own process id: killing that kills the host.
func TestSampleWorkerPidFile(t *testing.T) {
	e := newEnv(t)
	bin := buildSampleWorker(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "host1.pid")
	cmd := exec.Command(bin, "-dir", filepath.Join(dir, "host1"), "-pid-file", pidFile, "-log-level", "warn")
	cmd.Env = withEnv(e.addr)
	cmd.Stderr = &logWriter{t: t}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") {
				ready <- true
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the sample worker did not start (is TETHER_ADDRESS read?)")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid != cmd.Process.Pid {
		t.Fatalf("pid file says %q; the worker is %d", b, cmd.Process.Pid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Fatal("the worker exited cleanly; want killed")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("killing the pid of the pid file did not end the worker")
	}
}
