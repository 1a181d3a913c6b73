package pgtest_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

func TestNewDatabaseIsMigratedAndEmpty(t *testing.T) {
	pool := pgtest.New(t)
	ctx := context.Background()

	var namespaces int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM namespaces`).Scan(&namespaces); err != nil {
		t.Fatal(err)
	}
	if namespaces != 1 {
		t.Fatalf("namespaces: got %d rows, want 1 (the default namespace)", namespaces)
	}
	for _, table := range []string{"instances", "history", "orchestrator_queue", "worker_queue", "workers"} {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s: got %d rows in a fresh database, want 0", table, n)
		}
	}
}

func TestTestsGetDifferentDatabases(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{}
	for _, name := range []string{"first", "second", "third"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			pool := pgtest.New(t)
			ctx := context.Background()
			var db string
			if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			if other, dup := seen[db]; dup {
				t.Errorf("test %s got database %s, already given to %s", name, db, other)
			}
			seen[db] = name
			mu.Unlock()
			// A row written here is invisible to the other tests.
			if _, err := pool.Exec(ctx, `INSERT INTO namespaces (name) VALUES ($1)`, name); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM namespaces`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 2 {
				t.Errorf("namespaces: got %d rows, want 2 (default and %s)", n, name)
			}
		})
	}
}

func TestNewURLIsDroppedAtCleanup(t *testing.T) {
	var dbname string
	t.Run("inner", func(t *testing.T) {
		u := pgtest.NewURL(t)
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: the cleanup must drop the database anyway.
		if err := conn.QueryRow(context.Background(), `SELECT current_database()`).Scan(&dbname); err != nil {
			t.Fatal(err)
		}
	})
	s, err := pgtest.Shared()
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(context.Background(),
		`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, dbname).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after its test ended", dbname)
	}
}

func TestSharedClusterIsDurable(t *testing.T) {
	if _, ok := pgtest.URLFromEnv(); ok {
		t.Log("using " + pgtest.EnvURL + "; its settings are its own")
		return
	}
	pool := pgtest.New(t)
	for setting, want := range map[string]string{"fsync": "on", "synchronous_commit": "on", "max_connections": "200", "listen_addresses": "127.0.0.1"} {
		var got string
		if err := pool.QueryRow(context.Background(), `SELECT current_setting($1)`, setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
}

func TestStartStopLeavesNothingBehind(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, pgtest.Options{
		DisableFsync: true,
		ExtraConfig:  map[string]string{"application_name": "pgtest_probe"},
		Logf:         t.Logf,
	})
	if err != nil {
		if errors.Is(err, pgtest.ErrNoPostgres) {
			t.Fatalf("tests need PostgreSQL: %v", err)
		}
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()

	pid := c.PID()
	pidFile, err := os.ReadFile(c.DataDir() + "/postmaster.pid")
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(pidFile), "\n"); first != strconv.Itoa(pid) {
		t.Fatalf("postmaster.pid names %q, the cluster says %d", first, pid)
	}
	if !alive(pid) {
		t.Fatalf("postmaster %d not running", pid)
	}
	if os.Geteuid() == 0 {
		// As root, the server must run as the postgres user.
		status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err == nil && strings.Contains(string(status), "\nUid:\t0\t") {
			t.Errorf("postmaster runs as root:\n%s", status)
		}
	}

	if err := c.CreateDatabase(ctx, "probe"); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateDatabaseFromTemplate(ctx, "probe_copy", "probe"); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, c.URL("probe_copy"))
	if err != nil {
		t.Fatal(err)
	}
	var fsync, appName string
	if err := conn.QueryRow(ctx, `SELECT current_setting('fsync'), current_setting('application_name')`).Scan(&fsync, &appName); err != nil {
		t.Fatal(err)
	}
	if fsync != "off" || appName != "pgtest_probe" {
		t.Errorf("fsync=%q application_name=%q, want off and pgtest_probe", fsync, appName)
	}
	// Also reachable over the unix socket, by SocketURL: no TCP client.
	sock, err := pgx.Connect(ctx, c.SocketURL("probe"))
	if err != nil {
		t.Fatalf("unix socket %s: %v", c.SocketURL("probe"), err)
	}
	var addr *string
	if err := sock.QueryRow(ctx, `SELECT inet_client_addr()::text`).Scan(&addr); err != nil {
		t.Fatal(err)
	}
	if addr != nil {
		t.Errorf("SocketURL connected over TCP from %s", *addr)
	}
	_ = sock.Close(ctx)
	// A connection still open does not prevent the fast shutdown.

	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	_ = conn.Close(ctx)
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alive(pid) {
		t.Errorf("postmaster %d still running after Stop", pid)
	}
	if _, err := os.Stat(c.DataDir()); !os.IsNotExist(err) {
		t.Errorf("data directory %s still there after Stop (stat: %v)", c.DataDir(), err)
	}
	if _, err := os.Stat(c.SocketDir()); !os.IsNotExist(err) {
		t.Errorf("socket directory %s still there after Stop (stat: %v)", c.SocketDir(), err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func TestRestartImmediateKeepsCommittedRowsAndPort(t *testing.T) {
	ctx := context.Background()
	c, err := pgtest.Start(ctx, pgtest.Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Stop() }()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`); err != nil {
		t.Fatal(err)
	}
	oldPID, port := c.PID(), c.Port()
	if err := c.RestartImmediate(ctx, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// The old session was cut by the immediate shutdown.
	if err := conn.Ping(ctx); err == nil {
		t.Error("a connection opened before the restart still answers")
	}
	_ = conn.Close(ctx)
	if alive(oldPID) {
		t.Errorf("old postmaster %d still running", oldPID)
	}
	if c.PID() == oldPID || c.Port() != port {
		t.Errorf("after restart pid %d port %d; before pid %d port %d", c.PID(), c.Port(), oldPID, port)
	}
	conn, err = pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 42 {
		t.Fatalf("committed row after the restart: %d, %v", v, err)
	}
}
