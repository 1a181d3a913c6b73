package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncerInstallHint tells how to get PgBouncer. It is part of the error
// returned when it cannot be found.
const PgBouncerInstallHint = "install PgBouncer (Debian/Ubuntu: apt-get install pgbouncer; macOS: brew install pgbouncer) " +
	"or put the pgbouncer binary on PATH"

// ErrNoPgBouncer is returned (wrapped) when the pgbouncer binary cannot be
// found.
var ErrNoPgBouncer = errors.New("pgtest: pgbouncer not found")

// PgBouncerOptions configures a PgBouncer started by StartPgBouncer.
type PgBouncerOptions struct {
	// Host, Port, User and Password are where PgBouncer connects: the
	// PostgreSQL server it pools, and the role its server connections log
	// in as, whatever user a client names. Host may be a unix socket
	// directory. Required: Host, Port and User.
	Host     string
	Port     uint16
	User     string
	Password string
	// PoolMode is PgBouncer's pool_mode: "transaction" (the default),
	// "session" or "statement".
	PoolMode string
	// PoolSize is the most server connections per database (PgBouncer's
	// default_pool_size). Default 4: fewer than a Tether pool's clients,
	// so that they share server connections.
	PoolSize int
	// Logf, if set, receives progress messages.
	Logf func(format string, args ...any)
}

// PgBouncer is a running PgBouncer process in front of a PostgreSQL server,
// started by StartPgBouncer. It serves every database of the server (its
// "*" fallback), listens on a free TCP port on 127.0.0.1 and lets any
// client in without a password (auth_type any): for tests on one machine
// only.
type PgBouncer struct {
	dir     string
	logPath string
	port    int
	cmd     *exec.Cmd
	exited  chan struct{}
	waitErr error // set before exited is closed
	logf    func(string, ...any)

	stopOnce sync.Once
	stopErr  error
}

// FindPgBouncer returns the path of the pgbouncer binary: on PATH, else in
// /usr/sbin or /usr/local/sbin (where packages install it, off the PATH of
// most users). The error wraps ErrNoPgBouncer and says how to install it.
func FindPgBouncer() (string, error) {
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	for _, p := range []string{"/usr/sbin/pgbouncer", "/usr/local/sbin/pgbouncer", "/usr/local/bin/pgbouncer"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w on PATH or in /usr/sbin; %s", ErrNoPgBouncer, PgBouncerInstallHint)
}

// StartPgBouncer starts PgBouncer in front of the server opts names, in a
// temporary directory (its configuration and log), and returns once it
// accepts connections. The caller must call Stop. When the calling process
// is root, PgBouncer (which refuses to run as root) runs as the postgres
// system user, as a Cluster does.
func StartPgBouncer(ctx context.Context, opts PgBouncerOptions) (*PgBouncer, error) {
	if opts.Host == "" || opts.Port == 0 || opts.User == "" {
		return nil, errors.New("pgtest: StartPgBouncer needs the server's host, port and user")
	}
	if opts.PoolMode == "" {
		opts.PoolMode = "transaction"
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 4
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	bin, err := FindPgBouncer()
	if err != nil {
		return nil, err
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	removeStaleDirs(logf)
	dir, err := os.MkdirTemp("", dirPrefix+"pgbouncer-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	b := &PgBouncer{dir: dir, logPath: filepath.Join(dir, "pgbouncer.log"), logf: logf}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, fmt.Errorf("pgtest: chown %s to the postgres user: %w", dir, err)
		}
		if err := checkReachable(dir, cred); err != nil {
			return nil, err
		}
	}
	// The port is picked free and then released, so another process may
	// take it before PgBouncer binds it: try again with another port.
	for attempt := 1; ; attempt++ {
		if b.port, err = freePort(); err != nil {
			return nil, err
		}
		err = b.start(ctx, bin, cred, opts)
		if err == nil {
			break
		}
		if attempt < 5 && errors.Is(err, errPortInUse) {
			logf("pgtest: port %d taken, trying another for PgBouncer", b.port)
			continue
		}
		return nil, err
	}
	logf("pgtest: PgBouncer (%s pooling) up on 127.0.0.1:%d in front of %s:%d", opts.PoolMode, b.port, opts.Host, opts.Port)
	ok = true
	return b, nil
}

// config is PgBouncer's configuration file for opts, listening on b.port.
func (b *PgBouncer) config(opts PgBouncerOptions) string {
	target := "host=" + quoteConnValue(opts.Host) + " port=" + strconv.Itoa(int(opts.Port)) + " user=" + quoteConnValue(opts.User)
	if opts.Password != "" {
		target += " password=" + quoteConnValue(opts.Password)
	}
	return "[databases]\n" +
		"* = " + target + "\n\n" +
		"[pgbouncer]\n" +
		"listen_addr = 127.0.0.1\n" +
		"listen_port = " + strconv.Itoa(b.port) + "\n" +
		"unix_socket_dir =\n" +
		"auth_type = any\n" +
		"pool_mode = " + opts.PoolMode + "\n" +
		"default_pool_size = " + strconv.Itoa(opts.PoolSize) + "\n" +
		"max_client_conn = 1000\n" +
		"ignore_startup_parameters = extra_float_digits\n"
}

// quoteConnValue quotes a value of PgBouncer's connection string when it
// holds a space or a quote (a quote doubled inside the quotes).
func quoteConnValue(v string) string {
	if v != "" && !strings.ContainsAny(v, " '") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

func (b *PgBouncer) start(ctx context.Context, bin string, cred *syscall.Credential, opts PgBouncerOptions) error {
	cfgPath := filepath.Join(b.dir, "pgbouncer.ini")
	if err := os.WriteFile(cfgPath, []byte(b.config(opts)), 0o644); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	logFile, err := os.OpenFile(b.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, cfgPath)
	cmd.Dir = b.dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	if cred != nil {
		cmd.SysProcAttr.Credential = cred
		cmd.Env = append(cmd.Env, "HOME="+b.dir, "USER="+Superuser, "LOGNAME="+Superuser)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start pgbouncer: %w", err)
	}
	exited := make(chan struct{})
	b.cmd, b.exited = cmd, exited
	go func() {
		b.waitErr = cmd.Wait()
		close(exited)
	}()

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			log := b.logTail()
			if strings.Contains(log, "Address already in use") {
				return errPortInUse
			}
			return fmt.Errorf("pgtest: pgbouncer exited during start-up (%v); log %s:\n%s", b.waitErr, b.logPath, log)
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(pctx, b.URL("postgres"))
		if err == nil {
			err = conn.Ping(pctx)
			_ = conn.Close(pctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			b.kill()
			return fmt.Errorf("pgtest: pgbouncer did not accept connections (last error: %v); log %s:\n%s", err, b.logPath, b.logTail())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// URL returns a connection URL (for pgx) to database dbname through
// PgBouncer, as the superuser.
func (b *PgBouncer) URL(dbname string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(b.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port returns the TCP port PgBouncer listens on (on 127.0.0.1).
func (b *PgBouncer) Port() int { return b.port }

// Stop shuts PgBouncer down (SIGTERM: at once, closing its connections),
// waits for it and removes its directory. It is safe to call more than
// once; later calls return the first call's result.
func (b *PgBouncer) Stop() error {
	b.stopOnce.Do(func() {
		b.kill()
		if err := os.RemoveAll(b.dir); err != nil {
			b.stopErr = fmt.Errorf("pgtest: remove %s: %w", b.dir, err)
			return
		}
		b.logf("pgtest: PgBouncer on port %d stopped", b.port)
	})
	return b.stopErr
}

// kill ends the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (b *PgBouncer) kill() {
	if b.cmd == nil || b.cmd.Process == nil {
		return
	}
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
		return
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	<-b.exited
}

func (b *PgBouncer) logTail() string {
	data, err := os.ReadFile(b.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return strings.TrimSpace(string(data))
}

var (
	bouncerOnce sync.Once
	bouncerMu   sync.Mutex
	bouncer     *PgBouncer
	bouncerErr  error
)

// SharedPgBouncer returns the test binary's PgBouncer, in transaction
// pooling mode in front of the Shared server, starting both on first use.
// A failure is remembered and returned to every caller. RunMain stops it.
func SharedPgBouncer() (*PgBouncer, error) {
	bouncerOnce.Do(func() {
		b, err := startSharedPgBouncer()
		bouncerMu.Lock()
		bouncer, bouncerErr = b, err
		bouncerMu.Unlock()
	})
	bouncerMu.Lock()
	defer bouncerMu.Unlock()
	return bouncer, bouncerErr
}

func startSharedPgBouncer() (*PgBouncer, error) {
	s, err := Shared()
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(s.base.String())
	if err != nil {
		return nil, fmt.Errorf("pgtest: the server's URL: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return StartPgBouncer(ctx, PgBouncerOptions{Host: cfg.Host, Port: cfg.Port, User: cfg.User, Password: cfg.Password})
}

// closeSharedPgBouncer stops the shared PgBouncer, if one was started.
func closeSharedPgBouncer() error {
	bouncerMu.Lock()
	b := bouncer
	bouncer = nil
	if b != nil && bouncerErr == nil {
		bouncerErr = errors.New("pgtest: the shared PgBouncer was stopped by RunMain")
	}
	bouncerMu.Unlock()
	if b == nil {
		return nil
	}
	return b.Stop()
}

// NewPgBouncerURL makes a fresh database with the schema migrated, as
// NewURL does, and returns its URL through the test binary's PgBouncer in
// transaction pooling mode (SharedPgBouncer), and its direct URL. It fails
// the test when PgBouncer or PostgreSQL is missing, saying how to install
// it; it never skips.
func NewPgBouncerURL(t testing.TB) (pooled, direct string) {
	t.Helper()
	direct = NewURL(t)
	b, err := SharedPgBouncer()
	if err != nil {
		if errors.Is(err, ErrNoPgBouncer) {
			t.Fatalf("pgtest: this test runs Tether through PgBouncer, which is not installed: %v", err)
		}
		t.Fatalf("pgtest: cannot start PgBouncer: %v", err)
	}
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return b.URL(strings.TrimPrefix(u.Path, "/")), direct
}
