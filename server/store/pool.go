package store

import (
	"runtime"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// MinPoolSize is the smallest pool SizePool chooses by itself.
const MinPoolSize = 8

// SizePool sets cfg's pool size, parsed from databaseURL: maxConns when it
// is above 0; else the connection string's pool_max_conns when it names
// one; else twice the number of CPUs, at least MinPoolSize.
//
// pgx's own default, one connection per CPU and at least 4, suits
// CPU-bound work. A Tether transaction spends most of its life waiting: on
// its round trips and on its commit's WAL flush. With one connection per
// CPU, requests queue for a connection while PostgreSQL has CPU to spare
// (docs/benchmarks.md, "Connections").
func SizePool(cfg *pgxpool.Config, databaseURL string, maxConns int) {
	switch {
	case maxConns > 0:
		cfg.MaxConns = int32(maxConns)
	case strings.Contains(databaseURL, "pool_max_conns="):
		// pgxpool.ParseConfig has applied it.
	default:
		cfg.MaxConns = int32(max(MinPoolSize, 2*runtime.GOMAXPROCS(0)))
	}
}
