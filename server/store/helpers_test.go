package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.RunMain(m)) }

const ns = "default"

func newStore(t *testing.T) *store.Store {
	t.Helper()
	return store.New(pgtest.New(t), store.Options{TurnRetryBase: 50 * time.Millisecond, MaxDeliveries: 3})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// m unwraps a (value, error) pair, failing the test on error:
// m(f())(t).
func m[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// The suite's helpers, under the names the store's tests use.
var (
	start               = storagetest.Start
	fetchTurn           = storagetest.FetchTurn
	fetchTurnOrNil      = storagetest.FetchTurnOrNil
	schedule            = storagetest.Schedule
	scheduleWith        = storagetest.ScheduleWith
	startWithActivities = storagetest.StartWithActivities
	fetchAct            = storagetest.FetchAct
	history             = storagetest.History
	expectTimeout       = storagetest.ExpectTimeout
	kinds               = storagetest.Kinds
	count               = storagetest.Count
	eventually          = storagetest.Eventually
	sweepUntil          = storagetest.SweepUntil
)

func must2(t *testing.T) func(time.Time, bool, error) (time.Time, bool) {
	return func(tm time.Time, ok bool, err error) (time.Time, bool) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tm, ok
	}
}

func must0(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
