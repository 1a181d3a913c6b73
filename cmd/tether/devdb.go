package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tetherhq/tether/internal/pgtest"
)

// devDatabaseName is the database `tether dev` creates in its throwaway
// cluster.
const devDatabaseName = "tether"

// startDevDatabase starts a throwaway, durable PostgreSQL cluster (fsync and
// synchronous_commit on) for `tether dev`, creates the database "tether" in it
// and returns its URL. stop shuts the cluster down and removes its files; the
// caller must call it on exit. If the process dies without calling stop, the
// server shuts itself down (it is our child and gets SIGINT).
func startDevDatabase(ctx context.Context, logger *slog.Logger) (url string, stop func() error, err error) {
	if logger == nil {
		logger = slog.Default()
	}
	// The unix socket alone, in a directory only its owner may enter:
	// the cluster trusts whoever connects, so nobody else may.
	c, err := pgtest.Start(ctx, pgtest.Options{
		SocketOnly: true,
		Logf: func(format string, args ...any) {
			logger.Debug(fmt.Sprintf(format, args...), "component", "devdb")
		},
	})
	if err != nil {
		return "", nil, fmt.Errorf("start the development database: %w", err)
	}
	if err := c.CreateDatabase(ctx, devDatabaseName); err != nil {
		_ = c.Stop()
		return "", nil, fmt.Errorf("start the development database: %w", err)
	}
	url = c.SocketURL(devDatabaseName)
	logger.Info("development database started (throwaway: removed on exit)",
		"url", url, "data_dir", c.DataDir(), "pid", c.PID())
	return url, c.Stop, nil
}
