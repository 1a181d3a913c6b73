// Package pgtest runs a throwaway PostgreSQL cluster for tests and for
// `tether dev`.
//
// A Cluster is a real PostgreSQL server started with the installed initdb,
// pg_ctl and postgres binaries on a temporary data directory. It listens on a
// free TCP port on 127.0.0.1 and on a unix socket in its own directory, uses
// trust authentication and the superuser "postgres", and keeps durable
// settings (fsync, synchronous_commit) unless told otherwise.
//
// PostgreSQL refuses to run as root. When the calling process is root, the
// cluster's processes run as the unprivileged "postgres" system user
// (installed with the PostgreSQL server package) on directories that user
// owns.
//
// For tests, New and NewURL hand out a fresh, migrated database per test from
// one cluster per test binary; see RunMain for the TestMain that stops it.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint tells how to get the PostgreSQL server binaries. It is part of
// the error returned when they cannot be found.
const InstallHint = "install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql; " +
	"macOS: brew install postgresql), put its bin directory on PATH, " +
	"or point TETHER_TEST_DATABASE_URL at an existing server"

// ErrNoPostgres is returned (wrapped) when initdb, pg_ctl and postgres cannot
// be found.
var ErrNoPostgres = errors.New("pgtest: PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")

// Options configures a cluster started by Start. The zero value gives a
// durable cluster: fsync and synchronous_commit on.
type Options struct {
	// DisableFsync sets fsync=off. Faster, but a crash of the machine can
	// corrupt the cluster; leave it false where durability is measured.
	DisableFsync bool
	// DisableSynchronousCommit sets synchronous_commit=off: commits return
	// before their WAL is flushed.
	DisableSynchronousCommit bool
	// SocketOnly makes the cluster listen on its unix socket alone (in a
	// directory only its owner may enter), not on TCP: no other local user
	// can connect. URL then names the socket too.
	SocketOnly bool
	// ExtraConfig holds more server settings, passed as `-c key=value`.
	// They override the defaults of this package.
	ExtraConfig map[string]string
	// BinDir is the directory holding initdb, pg_ctl and postgres. Empty
	// means: search PATH, then /usr/lib/postgresql/*/bin (highest version).
	BinDir string
	// Logf, if set, receives progress messages.
	Logf func(format string, args ...any)
	// StartTimeout bounds how long Start waits for the server to accept
	// connections. Zero means 60 seconds.
	StartTimeout time.Duration
}

// Cluster is a running PostgreSQL cluster started by Start. Its methods are
// safe for concurrent use.
type Cluster struct {
	binDir  string
	baseDir string
	dataDir string
	sockDir string
	logPath string
	port    int
	cred    *syscall.Credential
	logf    func(string, ...any)
	opts    Options       // as given to Start, for restarts
	timeout time.Duration // start-up bound, for restarts

	// mu guards the fields below: Restart replaces the postmaster.
	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has been waited for
	waitErr error         // set before exited is closed

	stopOnce sync.Once
	stopErr  error
}

// Superuser is the name of the cluster's superuser.
const Superuser = "postgres"

// Start initialises a new cluster in a temporary directory and starts it. The
// caller must call Stop, which also removes the directory. If the calling
// process dies first, the server receives SIGINT (a fast shutdown); the
// directory left behind is removed by a later Start.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	binDir := opts.BinDir
	if binDir == "" {
		var err error
		if binDir, err = FindBinDir(); err != nil {
			return nil, err
		}
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	removeStaleDirs(logf)

	base, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c := &Cluster{
		opts:    opts,
		binDir:  binDir,
		baseDir: base,
		dataDir: filepath.Join(base, "data"),
		sockDir: filepath.Join(base, "sock"),
		logPath: filepath.Join(base, "postgres.log"),
		cred:    cred,
		logf:    logf,
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(base)
		}
	}()
	// Mark the directory as ours so that removeStaleDirs can clean it up
	// after a crash of this process.
	if err := os.WriteFile(filepath.Join(base, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if err := os.Mkdir(c.sockDir, 0o700); err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if cred != nil {
		for _, d := range []string{base, c.sockDir} {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return nil, fmt.Errorf("pgtest: chown %s to the postgres user: %w", d, err)
			}
		}
		// The postgres user must be able to reach the directory.
		if err := checkReachable(base, cred); err != nil {
			return nil, err
		}
	}
	if len(filepath.Join(c.sockDir, ".s.PGSQL.65535")) > 100 {
		return nil, fmt.Errorf("pgtest: socket directory %s is too long for a unix socket path; set TMPDIR to a shorter directory", c.sockDir)
	}

	t0 := time.Now()
	initdb := c.command(ctx, "initdb",
		"-D", c.dataDir,
		"--username="+Superuser,
		"--auth=trust",
		"--encoding=UTF8",
		"--locale=C",
		"--no-sync",
	)
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("pgtest: initdb failed: %w\n%s", err, out)
	}
	logf("pgtest: initdb %s in %v", c.dataDir, time.Since(t0).Round(time.Millisecond))

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	c.timeout = timeout
	// The port is picked free and then released, so another process may
	// take it before postgres binds it: try again with another port.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c.port = port
		err = c.startServer(ctx, opts, timeout)
		if err == nil {
			break
		}
		if attempt < 5 && errors.Is(err, errPortInUse) {
			logf("pgtest: port %d taken, trying another", port)
			continue
		}
		return nil, err
	}
	logf("pgtest: PostgreSQL up on 127.0.0.1:%d (socket %s) in %v", c.port, c.sockDir, time.Since(t0).Round(time.Millisecond))
	ok = true
	return c, nil
}

var errPortInUse = errors.New("port in use")

func (c *Cluster) startServer(ctx context.Context, opts Options, timeout time.Duration) error {
	settings := map[string]string{
		"listen_addresses":        "127.0.0.1",
		"unix_socket_directories": c.sockDir,
		"fsync":                   onOff(!opts.DisableFsync),
		"synchronous_commit":      onOff(!opts.DisableSynchronousCommit),
		"max_connections":         "200",
		"shared_buffers":          "256MB",
		"logging_collector":       "off",
	}
	if opts.SocketOnly {
		settings["listen_addresses"] = ""
	}
	for k, v := range opts.ExtraConfig {
		settings[k] = v
	}
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := []string{"-D", c.dataDir, "-p", strconv.Itoa(c.port)}
	for _, k := range keys {
		args = append(args, "-c", k+"="+settings[k])
	}

	logFile, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logFile.Close() // the child has its own descriptor

	// postgres runs as our child, not detached by pg_ctl, so that it gets
	// SIGINT (fast shutdown) if this process dies without calling Stop.
	cmd := c.command(context.Background(), "postgres", args...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr.Pdeathsig = syscall.SIGINT
	cmd.SysProcAttr.Setpgid = true // a ^C in the terminal reaches only us; we stop it
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	exited := make(chan struct{})
	c.mu.Lock()
	c.cmd = cmd
	c.exited = exited
	c.mu.Unlock()
	go func() {
		err := cmd.Wait()
		c.mu.Lock()
		c.waitErr = err
		c.mu.Unlock()
		close(exited)
	}()

	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		select {
		case <-exited:
			log := c.logTail()
			if strings.Contains(log, "could not bind") || strings.Contains(log, "Address already in use") {
				return errPortInUse
			}
			c.mu.Lock()
			waitErr := c.waitErr
			c.mu.Unlock()
			return fmt.Errorf("pgtest: postgres exited during start-up (%v); log %s:\n%s", waitErr, c.logPath, log)
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(pctx, c.URL("postgres"))
		if err == nil {
			err = conn.Ping(pctx)
			_ = conn.Close(pctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		lastErr = err
		if ctx.Err() != nil || time.Now().After(deadline) {
			c.kill()
			if ctx.Err() != nil {
				return fmt.Errorf("pgtest: waiting for postgres: %w", ctx.Err())
			}
			return fmt.Errorf("pgtest: postgres did not accept connections within %v (last error: %v); log %s:\n%s",
				timeout, lastErr, c.logPath, c.logTail())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// URL returns a connection URL (for pgx) to database dbname of the cluster
// over TCP on 127.0.0.1, as the superuser (over the unix socket with
// Options.SocketOnly).
func (c *Cluster) URL(dbname string) string {
	if c.opts.SocketOnly {
		return c.SocketURL(dbname)
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + dbname,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// SocketURL returns a connection URL (for pgx or psql) to database dbname
// of the cluster over its unix socket, as the superuser. On one machine it
// is the cheaper path: no TCP stack on either side of every round trip.
func (c *Cluster) SocketURL(dbname string) string {
	q := url.Values{}
	q.Set("host", c.sockDir)
	q.Set("port", strconv.Itoa(c.port))
	q.Set("sslmode", "disable")
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Path:     "/" + dbname,
		RawQuery: q.Encode(),
	}
	return u.String()
}

// Port returns the TCP port the cluster listens on (on 127.0.0.1).
func (c *Cluster) Port() int { return c.port }

// SocketDir returns the directory holding the cluster's unix socket; use it
// as the host of a connection string (host=/path).
func (c *Cluster) SocketDir() string { return c.sockDir }

// DataDir returns the cluster's data directory.
func (c *Cluster) DataDir() string { return c.dataDir }

// PID returns the process id of the cluster's postmaster.
func (c *Cluster) PID() int {
	cmd, _ := c.current()
	if cmd == nil || cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// current returns the running postmaster's command and its exit channel.
func (c *Cluster) current() (*exec.Cmd, chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cmd, c.exited
}

// RestartImmediate stops the cluster in immediate mode — SIGQUIT to the
// postmaster, as `pg_ctl stop -m immediate` does: every backend exits at
// once, nothing is checkpointed, and the next start runs crash recovery —
// waits for it to exit, waits down (when positive) with the server gone,
// then starts it again on the same port and data directory with the same
// settings. Connections of clients are broken; committed transactions
// survive (they are in the WAL). It returns once the server accepts
// connections again.
func (c *Cluster) RestartImmediate(ctx context.Context, down time.Duration) error {
	c.kill()
	if down > 0 {
		t := time.NewTimer(down)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("pgtest: restart: %w", ctx.Err())
		}
	}
	// The old postmaster has exited, so its port is free again; another
	// process may take it meanwhile, which then fails the restart.
	if err := c.startServer(ctx, c.opts, c.timeout); err != nil {
		return fmt.Errorf("pgtest: restart on port %d: %w", c.port, err)
	}
	c.logf("pgtest: PostgreSQL on port %d restarted after an immediate shutdown", c.port)
	return nil
}

// LogPath returns the file the server logs to. It is removed by Stop.
func (c *Cluster) LogPath() string { return c.logPath }

// CreateDatabase creates database name in the cluster.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) error {
	return execAdmin(ctx, c.URL("postgres"), "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
}

// CreateDatabaseFromTemplate creates database name as a copy of database
// template, which must have no open connections.
func (c *Cluster) CreateDatabaseFromTemplate(ctx context.Context, name, template string) error {
	return execAdmin(ctx, c.URL("postgres"),
		"CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{template}.Sanitize())
}

// DropDatabase drops database name if it exists, closing its connections.
func (c *Cluster) DropDatabase(ctx context.Context, name string) error {
	return execAdmin(ctx, c.URL("postgres"), dropSQL(name))
}

func dropSQL(name string) string {
	return "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
}

func execAdmin(ctx context.Context, connURL, sql string) error {
	conn, err := pgx.Connect(ctx, connURL)
	if err != nil {
		return fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

// Stop shuts the cluster down (pg_ctl stop -m fast), waits for the postmaster
// to exit and removes the cluster's directories. It is safe to call more
// than once; later calls return the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	var errs []error
	_, exited := c.current()
	select {
	case <-exited:
	default:
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := c.command(ctx, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w", "-t", "50").CombinedOutput()
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out))
		}
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			errs = append(errs, errors.New("pgtest: postmaster still running after pg_ctl stop; killing it"))
			c.kill()
		}
	}
	if err := os.RemoveAll(c.baseDir); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: remove %s: %w", c.baseDir, err))
	}
	if len(errs) == 0 {
		c.logf("pgtest: PostgreSQL on port %d stopped", c.port)
	}
	return errors.Join(errs...)
}

// kill ends the postmaster and its children at once and waits for it.
func (c *Cluster) kill() {
	cmd, exited := c.current()
	if cmd == nil || cmd.Process == nil {
		return
	}
	// SIGQUIT: immediate shutdown; the postmaster takes its children along.
	_ = cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-exited:
		return
	case <-time.After(5 * time.Second):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// command builds a command running binary name of the cluster's
// installation, as the postgres user when we are root.
func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, name), args...)
	cmd.Dir = c.baseDir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "LANG=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if c.cred != nil {
		cmd.SysProcAttr.Credential = c.cred
		cmd.Env = append(cmd.Env, "HOME="+c.baseDir, "USER="+Superuser, "LOGNAME="+Superuser)
	}
	return cmd
}

func (c *Cluster) logTail() string {
	b, err := os.ReadFile(c.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(bytes.TrimSpace(b))
}

// credential returns the credential to run PostgreSQL with: nil when the
// process is not root, else the postgres system user's.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses to run as root, "+
			"but there is no 'postgres' system user to run it as (%v); %s", err, InstallHint)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user postgres has a non-numeric uid/gid %q/%q", u.Uid, u.Gid)
	}
	if uid == 0 {
		return nil, errors.New("pgtest: the 'postgres' user is root; PostgreSQL will not run as root")
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// checkReachable reports a clear error when the postgres user cannot reach
// dir (for example when TMPDIR is under /root).
func checkReachable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		if ok {
			reachable := mode&0o001 != 0 ||
				(st.Uid == cred.Uid && mode&0o100 != 0) ||
				(st.Gid == cred.Gid && mode&0o010 != 0)
			if !reachable {
				return fmt.Errorf("pgtest: the postgres user cannot enter %s (mode %v), which holds the temporary cluster %s; "+
					"set TMPDIR to a directory it can reach, such as /tmp", d, mode, dir)
			}
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: pick a free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	return port, nil
}

// FindBinDir returns the directory holding initdb, pg_ctl and postgres: the
// one of initdb on PATH (symbolic links resolved), else the highest version
// under /usr/lib/postgresql/*/bin. The error wraps ErrNoPostgres and says how
// to install PostgreSQL.
func FindBinDir() (string, error) {
	var candidates []string
	if p, err := exec.LookPath("initdb"); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			candidates = append(candidates, filepath.Dir(r))
		}
		candidates = append(candidates, filepath.Dir(p))
	}
	candidates = append(candidates, debianBinDirs()...)
	for _, d := range candidates {
		if hasBinaries(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("%w on PATH or under /usr/lib/postgresql/*/bin; %s", ErrNoPostgres, InstallHint)
}

var versionRE = regexp.MustCompile(`^/usr/lib/postgresql/([0-9]+)(?:\.([0-9]+))?/bin$`)

// debianBinDirs lists /usr/lib/postgresql/*/bin, highest version first.
func debianBinDirs() []string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(d string) (int, int) {
		m := versionRE.FindStringSubmatch(d)
		if m == nil {
			return -1, -1
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		return major, minor
	}
	sort.SliceStable(dirs, func(i, j int) bool {
		mi, ni := version(dirs[i])
		mj, nj := version(dirs[j])
		if mi != mj {
			return mi > mj
		}
		return ni > nj
	})
	return dirs
}

func hasBinaries(dir string) bool {
	for _, name := range []string{"initdb", "pg_ctl", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

const (
	dirPrefix = "tether-pgtest-"
	ownerFile = "owner.pid"
)

// removeStaleDirs removes the directories of clusters whose owning process
// has died (a test binary killed by a timeout, say). Its postmaster got
// SIGINT through Pdeathsig; a directory whose postmaster still runs is kept.
func removeStaleDirs(logf func(string, ...any)) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // being created, or not ours
		}
		owner, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || owner <= 0 || processAlive(owner) {
			continue
		}
		if pidb, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			line, _, _ := strings.Cut(string(pidb), "\n")
			if pm, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && processAlive(pm) {
				continue
			}
		}
		if err := os.RemoveAll(d); err == nil {
			logf("pgtest: removed stale cluster directory %s", d)
		}
	}
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
