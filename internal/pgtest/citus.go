package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
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

// createCitusDatabase copies the template on every node, the coordinator
// first.
func (s *Server) createCitusDatabase(ctx context.Context, name string) error {
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize() + " TEMPLATE " + pgx.Identifier{s.template}.Sanitize()
	for _, n := range s.nodes() {
		if err := execEndingSessions(ctx, nodeURL(n, "postgres"), create, s.template); err != nil {
			return err
		}
	}
	return nil
}

// dropCitusDatabase drops database name on every node, the coordinator
// first. The database is closed to new connections first: Citus's
// maintenance daemon, which DROP DATABASE … WITH (FORCE) does not end,
// comes back within seconds otherwise, and keeps the drop waiting.
func (s *Server) dropCitusDatabase(ctx context.Context, name string) error {
	for _, n := range s.nodes() {
		admin := nodeURL(n, "postgres")
		// An error here (the database is gone already) is the DROP's to
		// report, or not.
		_ = execAdmin(ctx, admin, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" ALLOW_CONNECTIONS false")
		if err := execEndingSessions(ctx, admin, dropSQL(name), name); err != nil {
			return err
		}
	}
	return nil
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
