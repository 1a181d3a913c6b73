package testsuite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/tetherhq/tether/sdk/client"
)

// DevServerOptions configures StartDevServer (Temporal's
// testsuite.DevServerOptions).
type DevServerOptions struct {
	// ExistingPath is the path of the tether binary; empty: "tether" on
	// the PATH. (Temporal's downloads its CLI when it finds none; Tether
	// does not download.)
	ExistingPath string
	// ClientOptions are the options of the client Client returns. Their
	// HostPort (or Address) is where the server listens; empty: a free
	// port of 127.0.0.1.
	ClientOptions *client.Options
	// LogLevel is the server's --log-level (empty: warn).
	LogLevel string
	// CachedDownload is Temporal's download of its CLI: accepted and not
	// used (Tether does not download; see ExistingPath).
	CachedDownload CachedDownload
	// ExtraArgs are passed to `tether dev` after the others, except
	// Temporal's --dynamic-config-value pairs, which turn on features of
	// Temporal's server (standalone activities, …) that Tether's has
	// without configuration: they are dropped.
	ExtraArgs []string
	// Stdout and Stderr receive the server's output (nil: discarded).
	Stdout, Stderr io.Writer
}

// CachedDownload is Temporal's testsuite.CachedDownload (which CLI
// version to download, and where): accepted by DevServerOptions and not
// used.
type CachedDownload struct {
	// Version is the version Temporal would download.
	Version string
	// DestDir is where Temporal would keep it.
	DestDir string
}

// tetherArgs returns extra without Temporal's --dynamic-config-value
// pairs ("--dynamic-config-value k=v" and "--dynamic-config-value=k=v").
func tetherArgs(extra []string) []string {
	var out []string
	for i := 0; i < len(extra); i++ {
		switch a := extra[i]; {
		case a == "--dynamic-config-value":
			i++
		case strings.HasPrefix(a, "--dynamic-config-value="):
		default:
			out = append(out, a)
		}
	}
	return out
}

// DevServer is a `tether dev` server StartDevServer started: a server on a
// throwaway PostgreSQL of its own, removed when it stops.
type DevServer struct {
	cmd    *exec.Cmd
	exited chan error
	addr   string
	client client.Client
}

// StartDevServer starts `tether dev` and returns once it answers, with a
// client of it (Temporal's testsuite.StartDevServer). Stop it when done.
func StartDevServer(ctx context.Context, options DevServerOptions) (*DevServer, error) {
	bin := options.ExistingPath
	if bin == "" {
		p, err := exec.LookPath("tether")
		if err != nil {
			return nil, fmt.Errorf("testsuite: StartDevServer: no tether binary (set DevServerOptions.ExistingPath): %w", err)
		}
		bin = p
	}
	var copts client.Options
	if options.ClientOptions != nil {
		copts = *options.ClientOptions
	}
	addr := strings.TrimPrefix(strings.TrimPrefix(cmpOr(copts.Address, copts.HostPort), "http://"), "https://")
	if addr == "" {
		free, err := freeAddr()
		if err != nil {
			return nil, fmt.Errorf("testsuite: StartDevServer: %w", err)
		}
		addr = free
	}
	copts.Address, copts.HostPort = "http://"+addr, ""
	args := append([]string{"dev", "--addr", addr, "--log-level", cmpOr(options.LogLevel, "warn")}, tetherArgs(options.ExtraArgs)...)
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = options.Stdout, options.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("testsuite: StartDevServer: %w", err)
	}
	s := &DevServer{cmd: cmd, exited: make(chan error, 1), addr: addr}
	go func() { s.exited <- cmd.Wait() }()
	if err := s.waitReady(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	c, err := client.Dial(copts)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("testsuite: StartDevServer: %w", err), s.Stop())
	}
	s.client = c
	return s, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// freeAddr returns an address of 127.0.0.1 with a port nobody listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// waitReady polls /readyz until the server answers 200, exits, or ctx
// ends (a minute at most: the throwaway database starts first).
func (s *DevServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.addr+"/readyz", nil)
		if err != nil {
			return fmt.Errorf("testsuite: StartDevServer: %w", err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case err := <-s.exited:
			s.exited <- err
			return fmt.Errorf("testsuite: StartDevServer: tether dev exited: %v", err)
		case <-ctx.Done():
			return fmt.Errorf("testsuite: StartDevServer: not ready at %s: %w", s.addr, ctx.Err())
		case <-tick.C:
		}
	}
}

// Client returns the client of the server (made with
// DevServerOptions.ClientOptions).
func (s *DevServer) Client() client.Client { return s.client }

// FrontendHostPort returns the host:port the server listens on.
func (s *DevServer) FrontendHostPort() string { return s.addr }

// Stop closes the client and stops the server (an interrupt, as Ctrl-C:
// it removes its database), waiting for it to exit.
func (s *DevServer) Stop() error {
	if s.client != nil {
		s.client.Close()
	}
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("testsuite: stop the dev server: %w", err)
	}
	select {
	case err := <-s.exited:
		s.exited <- err
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			return fmt.Errorf("testsuite: stop the dev server: %w", err)
		}
		return nil
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		return errors.New("testsuite: stop the dev server: it did not exit within 30s; killed")
	}
}
