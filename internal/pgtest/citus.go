package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/db/migrations"
)

// EnvCitusWorkerURLs names the environment variable that makes the server of
// TETHER_TEST_DATABASE_URL the coordinator of a Citus cluster: a
// comma-separated list of URLs of its worker nodes (any database; the path
// is replaced). Each node must load citus (shared_preload_libraries) and
// have a `postgres` database, and the URLs' host and port (the
// coordinator's too) must be those the nodes reach each other on.
// Every test database is then made on every node, with the citus extension,
// the nodes added and the tables distributed (migrations.Distribute).
// `make test-citus` sets it (scripts/citus.sh starts the cluster).
const EnvCitusWorkerURLs = "TETHER_TEST_CITUS_WORKER_URLS"

// citusWorkersFromEnv parses TETHER_TEST_CITUS_WORKER_URLS.
func citusWorkersFromEnv() ([]*url.URL, error) {
	raw := strings.TrimSpace(os.Getenv(EnvCitusWorkerURLs))
	if raw == "" {
		return nil, nil
	}
	var out []*url.URL
	for _, s := range strings.Split(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("pgtest: %s must list postgres:// URLs, got %q", EnvCitusWorkerURLs, s)
		}
		out = append(out, u)
	}
	return out, nil
}

// Citus reports whether the Server's databases are distributed ones on a
// Citus cluster (TETHER_TEST_CITUS_WORKER_URLS).
func (s *Server) Citus() bool { return len(s.workers) > 0 }

// nodeURL returns the URL of database dbname on node u.
func nodeURL(u *url.URL, dbname string) string {
	c := *u
	c.Path = "/" + dbname
	c.RawPath = ""
	return c.String()
}

// hostPort returns the host and port of a node's URL (port 5432 if none).
func hostPort(u *url.URL) (string, int, error) {
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return "", 0, fmt.Errorf("pgtest: %w", err)
	}
	return cfg.Host, int(cfg.Port), nil
}

// makeCitusTemplate makes the template database on every node, joins them
// into a cluster for that database, migrates and distributes the schema,
// and then closes the template to connections on every node, so that it can
// be copied (Citus's maintenance daemon would otherwise stay connected).
func (s *Server) makeCitusTemplate(ctx context.Context) error {
	coord := nodeURL(s.base, s.template)
	for _, n := range s.nodes() {
		if err := execAdmin(ctx, nodeURL(n, "postgres"), "CREATE DATABASE "+pgx.Identifier{s.template}.Sanitize()); err != nil {
			return err
		}
		if err := execAdmin(ctx, nodeURL(n, s.template), "CREATE EXTENSION IF NOT EXISTS citus"); err != nil {
			return err
		}
	}
	host, port, err := hostPort(s.base)
	if err != nil {
		return err
	}
	// Adding the nodes and distributing the tables sync cluster-wide
	// catalog rows (the roles) to them: test binaries making their
	// templates at once fail it with "tuple concurrently updated". One at
	// a time, under an advisory lock of the coordinator's postgres
	// database, held by this connection until the template is made.
	lock, err := pgx.Connect(ctx, nodeURL(s.base, "postgres"))
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer func() { _ = lock.Close(context.Background()) }()
	if _, err := lock.Exec(ctx, `SELECT pg_advisory_lock(hashtext('tether pgtest citus_add_node'))`); err != nil {
		return fmt.Errorf("pgtest: lock the cluster's nodes: %w", err)
	}
	if err := execAdmin(ctx, coord, fmt.Sprintf("SELECT citus_set_coordinator_host(%s, %d)",
		quoteLiteral(host), port)); err != nil {
		return err
	}
	for _, w := range s.workers {
		host, port, err := hostPort(w)
		if err != nil {
			return err
		}
		if err := execAdmin(ctx, coord, fmt.Sprintf("SELECT citus_add_node(%s, %d)", quoteLiteral(host), port)); err != nil {
			return err
		}
	}
	pool, err := pgxpool.New(ctx, coord)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if _, err := migrations.Up(ctx, pool); err != nil {
		pool.Close()
		return fmt.Errorf("pgtest: migrate the template database: %w", err)
	}
	if _, err := migrations.Distribute(ctx, pool); err != nil {
		pool.Close()
		return fmt.Errorf("pgtest: distribute the template database: %w", err)
	}
	pool.Close()
	for _, n := range s.nodes() {
		if err := execAdmin(ctx, nodeURL(n, "postgres"),
			"ALTER DATABASE "+pgx.Identifier{s.template}.Sanitize()+" ALLOW_CONNECTIONS false"); err != nil {
			return err
		}
	}
	return nil
}

// nodes returns the coordinator's URL, then the workers'.
func (s *Server) nodes() []*url.URL {
	return append([]*url.URL{s.base}, s.workers...)
}

// createCitusDatabase copies the template on every node, all at once (a
// copy is nothing but files until a session connects).
func (s *Server) createCitusDatabase(ctx context.Context, name string) error {
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{s.template}.Sanitize()
	return onEachNode(s.nodes(), func(n *url.URL) error {
		return execEndingSessions(ctx, nodeURL(n, "postgres"), create, s.template)
	})
}

// citusSpares makes the next test database of a Citus cluster while the
// tests run: copying the template on every node takes a few seconds there,
// the most of a short test's time, and a test that finds one made takes it
// at once (takeCitusDatabase).
type citusSpares struct {
	mu      sync.Mutex
	started bool
	ready   chan string   // a database made ahead, handed to one taker
	stop    chan struct{} // closed by stopSpares
	done    chan struct{} // closed when the maker has returned
}

// takeCitusDatabase returns the database made ahead, if one is ready, and
// otherwise creates database name; either way the next one is being made.
func (s *Server) takeCitusDatabase(ctx context.Context, name string) (string, error) {
	sp := &s.spares
	sp.mu.Lock()
	if !sp.started {
		sp.started = true
		sp.ready, sp.stop, sp.done = make(chan string), make(chan struct{}), make(chan struct{})
		go s.makeSpares()
	}
	sp.mu.Unlock()
	select {
	case made := <-sp.ready:
		return made, nil
	default:
	}
	return name, s.createCitusDatabase(ctx, name)
}

// makeSpares makes one database ahead at a time until stopSpares, or until
// making one fails (the takers then create theirs themselves, and report
// the error).
func (s *Server) makeSpares() {
	sp := &s.spares
	defer close(sp.done)
	for {
		name := fmt.Sprintf("%s_%d_ahead", s.prefix, s.seq.Add(1))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := s.createCitusDatabase(ctx, name)
		cancel()
		if err != nil {
			return
		}
		select {
		case sp.ready <- name:
		case <-sp.stop:
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			_ = s.dropCitusDatabase(ctx, name)
			cancel()
			return
		}
	}
}

// stopSpares stops the maker of databases ahead and drops the one it made.
func (s *Server) stopSpares() {
	sp := &s.spares
	sp.mu.Lock()
	started := sp.started
	sp.mu.Unlock()
	if started {
		close(sp.stop)
		<-sp.done
	}
}

// dropCitusDatabase drops database name on every node: the coordinator
// first (its sessions are the ones that reconnect to the workers), then the
// workers all at once. The database is closed to new connections first:
// Citus's maintenance daemon, which DROP DATABASE … WITH (FORCE) does not
// end, comes back within seconds otherwise, and keeps the drop waiting.
func (s *Server) dropCitusDatabase(ctx context.Context, name string) error {
	drop := func(n *url.URL) error {
		admin := nodeURL(n, "postgres")
		// An error here (the database is gone already) is the DROP's to
		// report, or not.
		_ = execAdmin(ctx, admin, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" ALLOW_CONNECTIONS false")
		return execEndingSessions(ctx, admin, dropSQL(name), name)
	}
	if err := drop(s.base); err != nil {
		return err
	}
	return onEachNode(s.workers, drop)
}

// onEachNode runs fn for every node of nodes at once, and returns their
// errors joined.
func onEachNode(nodes []*url.URL, fn func(n *url.URL) error) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() { errs[i] = fn(n) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// execEndingSessions runs sql (a CREATE DATABASE from template db, or a
// DROP DATABASE of db) at admin. Either waits for the sessions on db to go,
// and on Citus there are sessions that DROP DATABASE … WITH (FORCE) does
// not end and that come back (Citus's maintenance daemon, the cached
// connections of the other nodes): they are ended, and sql is tried again.
func execEndingSessions(ctx context.Context, admin, sql, db string) error {
	for try := 0; ; try++ {
		err := execAdmin(ctx, admin, sql)
		if err == nil || try >= 100 || !strings.Contains(err.Error(), "is being accessed by other users") {
			return err
		}
		_ = execAdmin(ctx, admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "+
			quoteLiteral(db)+" AND pid <> pg_backend_pid()")
		select {
		case <-ctx.Done():
			return fmt.Errorf("pgtest: %s: %w", sql, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// OnCitus reports whether the tests' databases are made on a Citus cluster
// (TETHER_TEST_CITUS_WORKER_URLS is set), for a test whose expectation
// differs there.
func OnCitus() bool {
	return strings.TrimSpace(os.Getenv(EnvCitusWorkerURLs)) != ""
}
