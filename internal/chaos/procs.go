package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Build builds the tether binary and the chaos worker into dir and
// returns their paths. It runs `go build`, so the go tool and the module's
// source must be at hand (as in `go test`).
func Build(ctx context.Context, dir string) (tetherBin, workerBin string, err error) {
	tetherBin = filepath.Join(dir, "tether")
	workerBin = filepath.Join(dir, "chaosworker")
	for bin, pkg := range map[string]string{
		tetherBin: "github.com/tetherhq/tether/cmd/tether",
		workerBin: "github.com/tetherhq/tether/internal/chaos/chaosworker",
	} {
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput()
		if err != nil {
			return "", "", fmt.Errorf("chaos: go build %s: %w\n%s", pkg, err, out)
		}
	}
	return tetherBin, workerBin, nil
}

// proc is a child process. Its stderr goes to a log file; its stdout lines
// are handed to lines.
type proc struct {
	name   string
	cmd    *exec.Cmd
	lines  chan string
	exited chan struct{}
}

// startProc starts bin with args, its stderr appended to logPath.
func startProc(name, bin string, args []string, logPath string) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logFile
	// No child outlives the suite, even when it is killed itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, lines: make(chan string, 16), exited: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default: // nobody listens any more
			}
		}
		_ = cmd.Wait() // only once stdout is drained
		close(p.exited)
	}()
	return p, nil
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill sends SIGKILL (and SIGCONT, should it be stopped) and waits for the
// process to exit.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	<-p.exited
}

// terminate sends SIGTERM and waits up to timeout for the process to exit,
// then kills it.
func (p *proc) terminate(timeout time.Duration) {
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(timeout):
		p.kill()
	}
}

// signal sends sig to the process.
func (p *proc) signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("chaos: signal %v to %s: %w", sig, p.name, err)
	}
	return nil
}

// waitLine waits for a stdout line starting with prefix and returns the
// rest of it.
func (p *proc) waitLine(ctx context.Context, prefix string, timeout time.Duration) (string, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case l := <-p.lines:
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				return rest, nil
			}
		case <-p.exited:
			return "", fmt.Errorf("chaos: %s exited before printing %q", p.name, prefix)
		case <-t.C:
			return "", fmt.Errorf("chaos: %s did not print %q within %s", p.name, prefix, timeout)
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// serverProc is a `tether server` process on a fixed address, which can be
// killed and started again on the same address.
type serverProc struct {
	bin, addr, dbURL, logPath string
	sweep                     time.Duration
	// citus starts the server with --citus.
	citus bool
	p     *proc
}

// start starts the server and waits until it answers /readyz.
func (s *serverProc) start(ctx context.Context) error {
	args := []string{
		"server",
		"--addr", s.addr,
		"--database-url", s.dbURL,
		"--sweep-interval", s.sweep.String(),
		"--min-lease", "1s",
		"--log-level", "warn",
		"--insecure-no-auth", // the suite tests delivery, not access: docs/security.md
	}
	if s.citus {
		args = append(args, "--citus")
	}
	p, err := startProc("tether server", s.bin, args, s.logPath)
	if err != nil {
		return err
	}
	s.p = p
	return waitHTTP(ctx, p, "http://"+s.addr+"/readyz", 60*time.Second)
}

// waitHTTP polls url until it answers 200 OK.
func waitHTTP(ctx context.Context, p *proc, url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
		resp, err := hc.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("chaos: %s exited during start-up", p.name)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: %s not ready at %s within %s (last error: %v)", p.name, url, timeout, err)
		}
	}
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("chaos: pick a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("chaos: %w", err)
	}
	return addr, nil
}
