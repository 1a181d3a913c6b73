package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/db/migrations"
)

// EnvURL names the environment variable holding the URL of an existing
// PostgreSQL server for tests. When it is set, New and NewURL create their
// databases there (the role needs CREATEDB) instead of starting a cluster.
const EnvURL = "TETHER_TEST_DATABASE_URL"

// URLFromEnv returns the value of TETHER_TEST_DATABASE_URL and whether it is
// set (and not empty).
func URLFromEnv() (string, bool) {
	u := strings.TrimSpace(os.Getenv(EnvURL))
	return u, u != ""
}

// Server is where a test binary's databases live: a Cluster this package
// started, or the server named by TETHER_TEST_DATABASE_URL. It holds a
// template database with the schema migrated, from which each test's
// database is copied.
type Server struct {
	cluster  *Cluster // nil for an external server
	base     *url.URL // any database of the server; the path is replaced
	template string
	prefix   string     // unique to this process, for database names
	workers  []*url.URL // a Citus cluster's workers (s.base is its coordinator)
	seq      atomic.Int64
	spares   citusSpares // test databases made ahead on Citus
}

var (
	sharedOnce   sync.Once
	sharedMu     sync.Mutex
	sharedServer *Server
	sharedErr    error
)

// Shared returns the test binary's Server, starting it on first use: the
// server of TETHER_TEST_DATABASE_URL if set, else a new durable Cluster. A
// failure is remembered and returned to every caller. RunMain closes it.
func Shared() (*Server, error) {
	sharedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		s, err := newServer(ctx)
		sharedMu.Lock()
		sharedServer, sharedErr = s, err
		sharedMu.Unlock()
	})
	sharedMu.Lock()
	defer sharedMu.Unlock()
	return sharedServer, sharedErr
}

// RunMain runs the tests and then stops the shared PgBouncer, if one was
// started, and closes the shared Server (stopping the cluster, or dropping
// the template database from an external server). A
// package whose tests use New or NewURL calls it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }
func RunMain(m *testing.M) int {
	code := m.Run()
	if err := closeSharedPgBouncer(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	if err := closeShared(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

func closeShared() error {
	sharedMu.Lock()
	s := sharedServer
	sharedServer = nil
	if s != nil && sharedErr == nil {
		sharedErr = errors.New("pgtest: the shared server was closed by RunMain")
	}
	sharedMu.Unlock()
	if s == nil {
		return nil
	}
	return s.Close()
}

func newServer(ctx context.Context) (*Server, error) {
	var b [4]byte
	_, _ = rand.Read(b[:])
	s := &Server{prefix: fmt.Sprintf("tether_%d_%s", os.Getpid(), hex.EncodeToString(b[:]))}
	s.template = s.prefix + "_template"
	if raw, ok := URLFromEnv(); ok {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("pgtest: %s must be a postgres:// URL, got %q", EnvURL, raw)
		}
		s.base = u
		if s.workers, err = citusWorkersFromEnv(); err != nil {
			return nil, err
		}
	} else {
		if OnCitus() {
			return nil, fmt.Errorf("pgtest: %s needs %s, the URL of the coordinator", EnvCitusWorkerURLs, EnvURL)
		}
		c, err := Start(ctx, Options{})
		if err != nil {
			return nil, err
		}
		s.cluster = c
		s.base, _ = url.Parse(c.URL("postgres"))
	}
	if err := s.makeTemplate(ctx); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Server) makeTemplate(ctx context.Context) error {
	if s.Citus() {
		return s.makeCitusTemplate(ctx)
	}
	if err := execAdmin(ctx, s.adminURL(), "CREATE DATABASE "+pgx.Identifier{s.template}.Sanitize()); err != nil {
		return err
	}
	pool, err := pgxpool.New(ctx, s.URL(s.template))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer pool.Close()
	if _, err := migrations.Up(ctx, pool); err != nil {
		return fmt.Errorf("pgtest: migrate the template database: %w", err)
	}
	return nil
}

// Cluster returns the cluster this Server started, or nil when it uses the
// server of TETHER_TEST_DATABASE_URL.
func (s *Server) Cluster() *Cluster { return s.cluster }

// URL returns the connection URL of database dbname on the server.
func (s *Server) URL(dbname string) string {
	u := *s.base
	u.Path = "/" + dbname
	u.RawPath = ""
	return u.String()
}

// adminURL is the URL to run CREATE/DROP DATABASE from: the server's
// "postgres" database for a cluster, the given database for an external one.
func (s *Server) adminURL() string {
	if s.cluster != nil {
		return s.URL("postgres")
	}
	return s.base.String()
}

// CreateDatabase creates a fresh database with the schema migrated (a copy of
// the template) and returns its name. The name starts with hint, cleaned up.
func (s *Server) CreateDatabase(ctx context.Context, hint string) (string, error) {
	name := fmt.Sprintf("%s_%d_%s", s.prefix, s.seq.Add(1), sanitize(hint))
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "_")
	}
	var err error
	if s.Citus() {
		name, err = s.takeCitusDatabase(ctx, name)
	} else {
		err = execAdmin(ctx, s.adminURL(),
			"CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+" TEMPLATE "+pgx.Identifier{s.template}.Sanitize())
	}
	if err != nil {
		return "", err
	}
	return name, nil
}

// DropDatabase drops database name, closing any connection to it.
func (s *Server) DropDatabase(ctx context.Context, name string) error {
	if s.Citus() {
		return s.dropCitusDatabase(ctx, name)
	}
	return execAdmin(ctx, s.adminURL(), dropSQL(name))
}

// Close drops the template database and stops the cluster, if this Server
// started one.
func (s *Server) Close() error {
	if s.cluster != nil {
		return s.cluster.Stop()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if s.Citus() {
		s.stopSpares()
		return s.dropCitusDatabase(ctx, s.template)
	}
	return execAdmin(ctx, s.adminURL(), dropSQL(s.template))
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// NewURL returns the URL of a fresh database with the schema migrated, made
// for this test alone and dropped when it ends (closing any connection left
// to it). It fails the test when no PostgreSQL is available, saying how to
// install it; it never skips.
func NewURL(t testing.TB) string {
	t.Helper()
	s, err := Shared()
	if err != nil {
		if errors.Is(err, ErrNoPostgres) {
			t.Fatalf("pgtest: tests need PostgreSQL: %v", err)
		}
		t.Fatalf("pgtest: cannot start the test database server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name, err := s.CreateDatabase(ctx, t.Name())
	if err != nil {
		t.Fatalf("pgtest: create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDatabase(ctx, name); err != nil {
			t.Errorf("pgtest: drop test database: %v", err)
		}
	})
	return s.URL(name)
}

// New returns a pool on a fresh database with the schema migrated, made for
// this test alone. The pool is closed and the database dropped when the test
// ends. It fails the test when no PostgreSQL is available; it never skips.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := NewURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect to test database: %v", err)
	}
	t.Cleanup(pool.Close) // runs before NewURL's cleanup drops the database
	return pool
}
