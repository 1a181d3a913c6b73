package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Launcher returns the command that runs a bench child process: the tether
// binary's hidden `tether bench <args>`, where args[0] is the child's role
// ("worker" or "heartbeat-load"). The bench sets the command's standard
// streams itself. The child must run ChildMain with args.
type Launcher func(ctx context.Context, args []string) (*exec.Cmd, error)

// SelfLauncher runs the current executable with prefix followed by the
// child's arguments (for the tether binary: SelfLauncher("bench")).
func SelfLauncher(prefix ...string) Launcher {
	return func(ctx context.Context, args []string) (*exec.Cmd, error) {
		exe, err := executable()
		if err != nil {
			return nil, err
		}
		return exec.CommandContext(ctx, exe, append(append([]string(nil), prefix...), args...)...), nil
	}
}

// child is a running child process. Its standard input is a pipe: the
// child stops when it is closed (or when this process dies).
type child struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	exited chan struct{}
	err    error // set before exited is closed
}

// children are the child processes of an Env.
type children struct {
	launch Launcher
	stderr io.Writer
	logger *slog.Logger
	mu     sync.Mutex
	live   map[*child]struct{}
}

func newChildren(l Launcher, stderr io.Writer, logger *slog.Logger) *children {
	return &children{launch: l, stderr: stderr, logger: logger, live: map[*child]struct{}{}}
}

// errNoLauncher: a scenario needs child processes and none can be started.
var errNoLauncher = errors.New("this bench cannot start child processes (no launcher): use in-process workers")

// start runs a child with args; onLine receives each line it prints on
// stdout (from one goroutine, in order).
func (cs *children) start(ctx context.Context, name string, args []string, onLine func(string)) (*child, error) {
	if cs.launch == nil {
		return nil, errNoLauncher
	}
	// The child's life is bounded by stop/kill and by this process, not by
	// ctx: a cancelled scenario still stops its children in order.
	cmd, err := cs.launch(context.WithoutCancel(ctx), args)
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cs.stderr
	setDeathSignal(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, exited: make(chan struct{})}
	cs.mu.Lock()
	cs.live[c] = struct{}{}
	cs.mu.Unlock()
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		// Wait only once stdout is drained (exec's rule for StdoutPipe).
		c.err = cmd.Wait()
		close(c.exited)
		cs.mu.Lock()
		delete(cs.live, c)
		cs.mu.Unlock()
	}()
	cs.logger.Debug("child started", "child", name, "pid", cmd.Process.Pid)
	return c, nil
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the child to stop (closes its stdin) and waits up to timeout,
// then kills it.
func (c *child) stop(timeout time.Duration) error {
	_ = c.stdin.Close()
	select {
	case <-c.exited:
		return c.exitErr()
	case <-time.After(timeout):
	}
	c.kill()
	return fmt.Errorf("%s did not stop within %s: killed", c.name, timeout)
}

// kill ends the child with SIGKILL and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.exited
}

func (c *child) exitErr() error {
	if c.err != nil {
		return fmt.Errorf("%s: %w", c.name, c.err)
	}
	return nil
}

// stopAll stops every child still running.
func (cs *children) stopAll() error {
	cs.mu.Lock()
	live := make([]*child, 0, len(cs.live))
	for c := range cs.live {
		live = append(live, c)
	}
	cs.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(live))
	for i, c := range live {
		wg.Go(func() { errs[i] = c.stop(15 * time.Second) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// ChildMain runs a bench child process: args[0] is its role ("worker",
// "heartbeat-load" or "hop-client"), the rest its flags. It returns when its work is done,
// when ctx ends or when stdin reaches its end (the parent closed it or
// died). The tether binary calls it for `tether bench worker …` and
// `tether bench heartbeat-load …`.
func ChildMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("bench child: no role")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		cancel()
	}()
	out := &lineWriter{w: stdout}
	switch args[0] {
	case "worker":
		return runWorkerChild(ctx, args[1:], out, stderr)
	case "heartbeat-load":
		return runHeartbeatChild(ctx, args[1:], out, stderr)
	case "hop-client":
		return runHopsChild(ctx, args[1:], out, stderr)
	}
	return fmt.Errorf("bench child: unknown role %q", args[0])
}

// IsChildRole reports whether name is the role of a bench child process
// (the hidden subcommands of `tether bench`).
func IsChildRole(name string) bool {
	return name == "worker" || name == "heartbeat-load" || name == "hop-client"
}

// lineWriter writes whole lines, one write each, from many goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = fmt.Fprintf(l.w, format+"\n", args...)
}

// fields splits a protocol line.
func fields(line string) []string { return strings.Fields(line) }
