package auth

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetherhq/tether/server/storage"
)

// TestKeyCache_Bounds: a verified key costs no query within the TTL.
func TestKeyCache_Bounds(t *testing.T) {
	var loads atomic.Int32
	now := time.Unix(1000, 0)
	revoked := false
	c := newKeyCache(5*time.Second, func(_ context.Context, id string) (storage.KeyRecord, error) {
		loads.Add(1)
		if id != "k" {
			return storage.KeyRecord{}, storage.ErrNotFound
		}
		return storage.KeyRecord{ID: id, Revoked: revoked}, nil
	})
	c.now = func() time.Time { return now }
	ctx := context.Background()
	for range 100 {
		if r, ok, err := c.get(ctx, "k"); !ok || err != nil || r.Revoked {
			t.Fatal(ok, err)
		}
		if _, ok, _ := c.get(ctx, "u"); ok {
			t.Fatal("u found")
		}
	}
	if n := loads.Load(); n != 2 {
		t.Fatalf("%d loads", n)
	}
	revoked = true
	now = now.Add(5 * time.Second)
	if r, _, _ := c.get(ctx, "k"); !r.Revoked {
		t.Fatal("revocation not seen after the TTL")
	}
}
