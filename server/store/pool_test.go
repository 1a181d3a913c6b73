package store_test

import (
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/server/store"
)

// Goal: the pool is sized by -max-conns first, then by the connection
// string's pool_max_conns, then by the CPU count (at least MinPoolSize).
func TestSizePool(t *testing.T) {
	def := int32(max(store.MinPoolSize, 2*runtime.GOMAXPROCS(0)))
	for _, c := range []struct {
		name, url string
		maxConns  int
		want      int32
	}{
		{"default", "postgres://u@localhost/db", 0, def},
		{"flag", "postgres://u@localhost/db", 3, 3},
		{"flag over url", "postgres://u@localhost/db?pool_max_conns=5", 3, 3},
		{"url", "postgres://u@localhost/db?pool_max_conns=5", 0, 5},
		{"keyword/value url", "host=localhost user=u dbname=db pool_max_conns=6", 0, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := pgxpool.ParseConfig(c.url)
			if err != nil {
				t.Fatal(err)
			}
			store.SizePool(cfg, c.url, c.maxConns)
			if cfg.MaxConns != c.want {
				t.Fatalf("MaxConns = %d, want %d", cfg.MaxConns, c.want)
			}
		})
	}
}
