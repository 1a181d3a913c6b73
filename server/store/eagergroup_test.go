package store

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
)

// namedCounter counts the statements sent through a pool by their sqlc
// name (the "-- name: X" line), sent alone or in a batch.
type namedCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *namedCounter) add(sql string) {
	if !strings.HasPrefix(sql, "-- name: ") {
		return
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(sql, "-- name: "), " ")
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

// counts returns the counts so far and starts again from zero.
func (c *namedCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func (c *namedCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.add(d.SQL)
	return ctx
}

func (c *namedCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *namedCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (c *namedCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.add(d.SQL)
}

func (c *namedCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// Goal: a group of activity results locks all the eager turns its results
// make due in one statement (one LockNextTurns for the group, not one per
// workflow), under the eager turn's rules: every free workflow gets its
// turn with its result, for the result that asked; a workflow with another
// activity outstanding, or held by a turn in flight, gets none; a workflow
// pinned to a build id goes only to a worker of that build id; two results
// of one workflow make one turn with both, for the first of them whose
// worker may take it (the group's order is its tokens'; of a pinned
// workflow's, the first of its build id).
func TestEagerTurns_OneStatementPerGroup(t *testing.T) {
	counter := &namedCounter{n: map[string]int{}}
	cfg, err := pgxpool.ParseConfig(pgtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = counter
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	s := New(pool, Options{})
	ctx := storagetest.CtxT(t)
	const ns = "default"

	free := []string{"free-0", "free-1", "free-2", "free-3"}
	for _, id := range free {
		storagetest.StartWithActivities(t, s, id, storagetest.Schedule(1))
	}
	storagetest.StartWithActivities(t, s, "sibling", storagetest.Schedule(1, 2))
	storagetest.StartWithActivities(t, s, "held", storagetest.Schedule(1))
	storagetest.StartWithActivities(t, s, "pair", storagetest.Schedule(1, 2))
	// Pinned to build id b1: their first turn ran on a worker of b1.
	pinned := map[string][]api.Command{
		"pinned-same": storagetest.Schedule(1), "pinned-other": storagetest.Schedule(1),
		"pinned-pair": storagetest.Schedule(1, 2),
	}
	for _, id := range []string{"pinned-same", "pinned-other", "pinned-pair"} {
		storagetest.Start(t, s, id)
		turn, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w1", BuildID: "b1", LockFor: time.Minute}))
		if err != nil || turn == nil || turn.InstanceID != id {
			t.Fatalf("first turn of %s: %+v %v", id, turn, err)
		}
		if _, err := s.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: ns, Token: storagetest.TurnTok(t, turn.LockToken), Request: api.CompleteWorkflowTaskRequest{Commands: pinned[id]}}); err != nil {
			t.Fatal(err)
		}
	}
	attempts := map[string][]*api.ActivityTask{}
	for range len(free) + 2 + 1 + 2 + 1 + 1 + 2 {
		a := storagetest.FetchAct(t, s, time.Minute) // worker "w1"
		attempts[a.InstanceID] = append(attempts[a.InstanceID], a)
	}
	// "held": a turn in flight (a signal's) holds it.
	if err := s.SignalWorkflow(ctx, &storage.SignalWorkflowParams{Namespace: ns, InstanceID: "held", Name: "poke", Input: json.RawMessage(`1`)}); err != nil {
		t.Fatal(err)
	}
	if turn := storagetest.FetchTurn(t, s); turn.InstanceID != "held" {
		t.Fatalf("fetched %s, want held", turn.InstanceID)
	}

	// The group, in its order: name (instance/activity), attempt, build id
	// of the eager request, and what the answer must carry.
	type result struct {
		name  string
		a     *api.ActivityTask
		build string
		turn  []string // the results in the eager turn; nil: no turn
		// either: the turn goes to this result or to another of its
		// workflow's (the group applies its results in the order of
		// their tokens: the first of them that may take it does).
		either bool
	}
	one := func(id string) []string { return []string{`"` + id + `/1"`} }
	group := []result{
		{"free-0/1", attempts["free-0"][0], "", one("free-0"), false},
		{"sibling/1", attempts["sibling"][0], "", nil, false},
		{"free-1/1", attempts["free-1"][0], "", one("free-1"), false},
		{"held/1", attempts["held"][0], "", nil, false},
		{"pair/1", attempts["pair"][0], "", []string{`"pair/1"`, `"pair/2"`}, true},
		{"free-2/1", attempts["free-2"][0], "", one("free-2"), false},
		{"pinned-same/1", attempts["pinned-same"][0], "b1", one("pinned-same"), false},
		{"pinned-other/1", attempts["pinned-other"][0], "b2", nil, false},
		{"pair/2", attempts["pair"][1], "", []string{`"pair/1"`, `"pair/2"`}, true},
		{"pinned-pair/1", attempts["pinned-pair"][0], "b2", nil, false},
		{"free-3/1", attempts["free-3"][0], "", one("free-3"), false},
		{"pinned-pair/2", attempts["pinned-pair"][1], "b1", []string{`"pinned-pair/1"`, `"pinned-pair/2"`}, false},
	}
	calls := make([]*resultCall, len(group))
	for i, r := range group {
		if want := strings.Split(r.name, "/")[0]; r.a.InstanceID != want {
			t.Fatalf("%s: attempt of %s", r.name, r.a.InstanceID)
		}
		calls[i] = &resultCall{callState: callState{ns: ns}, tok: uuid.MustParse(r.a.LockToken),
			result: json.RawMessage(`"` + r.name + `"`),
			eager:  &api.EagerWorkflowTask{TaskQueue: "q", LockFor: api.Duration(time.Minute), BuildID: r.build}}
	}
	counter.counts()
	s.applyResults(calls)
	n := counter.counts()

	turns := map[string]int{} // instance → eager turns handed out
	for i, r := range group {
		c := calls[i]
		if c.err != nil || c.alone || c.out.Outcome != storage.OutcomeDelivered {
			t.Fatalf("%s: %+v err %v alone %v, want delivered in the group", r.name, c.out, c.err, c.alone)
		}
		turn := c.out.WorkflowTask
		if turn == nil {
			continue
		}
		turns[turn.InstanceID]++
		var got []string
		for _, msg := range turn.Messages {
			got = append(got, string(msg.Result))
		}
		sort.Strings(got) // enqueued in the group's order (its tokens')
		if r.turn == nil && !r.either {
			t.Errorf("%s: an eager turn of %s with results %v, want none", r.name, turn.InstanceID, got)
			continue
		}
		if turn.InstanceID != r.a.InstanceID || strings.Join(got, " ") != strings.Join(r.turn, " ") {
			t.Errorf("%s: eager turn of %s with results %v, want %v", r.name, turn.InstanceID, got, r.turn)
		}
	}
	for _, r := range group {
		if id := r.a.InstanceID; (r.turn != nil || r.either) && turns[id] != 1 {
			t.Errorf("%s: %d eager turns handed out, want 1", id, turns[id])
		}
	}
	if n["TakeAttempts"] != 1 || n["LockNextTurns"] != 1 {
		t.Errorf("the group ran TakeAttempts %d times and LockNextTurns %d times, want once each (all its eager turns in one statement)",
			n["TakeAttempts"], n["LockNextTurns"])
	}

	// What the group left to the queue: the sibling's, the held
	// workflow's (after its turn) and the other build id's turns, none
	// of the locked ones.
	var polled []string
	for {
		turn, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", BuildID: "", LockFor: time.Minute}))
		if err != nil {
			t.Fatal(err)
		}
		if turn == nil {
			break
		}
		polled = append(polled, turn.InstanceID)
	}
	if strings.Join(polled, " ") != "sibling" {
		t.Errorf("a poll of a worker without a build id took %v, want only sibling's turn", polled)
	}
	other, err := storagetest.FirstTurn(s.FetchWorkflowTasks(ctx, &storage.FetchWorkflowTasksParams{Namespace: ns, TaskQueue: "q", WorkerID: "w2", BuildID: "b1", LockFor: time.Minute}))
	if err != nil || other == nil || other.InstanceID != "pinned-other" {
		t.Errorf("a poll of build id b1 took %+v (%v), want pinned-other's turn", other, err)
	}
}
