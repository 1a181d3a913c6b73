package store_test

import (
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
	retry := 50 * time.Millisecond
	if pgtest.OnCitus() {
		// A failed turn's ack and the next fetch take longer than 50 ms
		// on three nodes of one machine under load: the backoff must
		// outlast them (FailTurn_Backoff).
		retry = 500 * time.Millisecond
	}
	return store.New(pgtest.New(t), store.Options{TurnRetryBase: retry, MaxDeliveries: 3,
		Citus: pgtest.OnCitus()})
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
	turnTok             = storagetest.TurnTok
	attemptTok          = storagetest.AttemptTok
	ctxT                = storagetest.CtxT
	must0               = storagetest.Must0
)

// m is storagetest.M: m(f())(t).
func m[T any](v T, err error) func(*testing.T) T { return storagetest.M(v, err) }
