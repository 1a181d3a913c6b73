package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// CancelConfig configures the cancel scenario.
type CancelConfig struct {
	// Count is the number of running activities cancelled, one workflow
	// each (default 20).
	Count int
	// Mass is the number of outstanding activities of the one workflow
	// cancelled through the store (default 10 000; negative: skip).
	Mass int
	// Workers runs the SDK workers (default: 1 process). Their activity
	// lock is 90s, so that lock renewals come only every 30s and cannot
	// be what delivers the cancellation.
	Workers Workers
}

func (c CancelConfig) withDefaults() CancelConfig {
	if c.Count <= 0 {
		c.Count = 20
	}
	if c.Mass == 0 {
		c.Mass = 10_000
	}
	c.Workers = c.Workers.withDefaults()
	return c
}

// cancelActivityLock is the activity lock of the cancel scenario's
// workers: renewals every 30s.
const cancelActivityLock = 90 * time.Second

// Cancel measures cancellation: Count workflows each with a running
// activity are cancelled one after the other (client Cancel call → the
// activity's ctx.Done), then, with database access, one workflow with
// Mass outstanding activities is cancelled through the store and the
// turn that consumes the cancel is timed and its statements counted, with
// the activities unheld (queued) and held (fetched by a worker).
func (e *Env) Cancel(ctx context.Context, cfg CancelConfig) (*Report, error) {
	cfg = cfg.withDefaults()
	run := newRunID()
	queue := "bench-can-" + run
	hub := newEventHub()
	spec := cfg.Workers.spec(queue)
	spec.ActivityLock = cancelActivityLock
	spec.MaxActivities = max(100, cfg.Count)
	ws, err := e.startWorkers(ctx, spec, hub.publish)
	if err != nil {
		return nil, err
	}
	defer func() { _ = ws.stop() }()
	c, err := e.loadClient(64)
	if err != nil {
		return nil, err
	}

	ids := make([]string, cfg.Count)
	for i := range ids {
		ids[i] = fmt.Sprintf("can-%s-%d", run, i)
		// Subscribe before the events can arrive.
		hub.ch("canceled", ids[i])
		if _, err := c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: ids[i], TaskQueue: queue}, "Hold", nil); err != nil {
			return nil, err
		}
	}
	for i := range ids {
		select {
		case <-hub.ch("started", ids[i]):
		case <-time.After(60 * time.Second):
			return nil, fmt.Errorf("the activity of %s did not start within 60s", ids[i])
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}

	lat := make([]time.Duration, 0, cfg.Count)
	for _, id := range ids {
		t0 := time.Now()
		if _, err := c.Cancel(ctx, id, "bench"); err != nil {
			return nil, err
		}
		select {
		case ev := <-hub.ch("canceled", id):
			lat = append(lat, ev.At.Sub(t0))
		case <-time.After(60 * time.Second):
			return nil, fmt.Errorf("the cancellation of %s did not reach its activity within 60s", id)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	canceled := 0
	for _, id := range ids {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := c.GetWorkflow(context.Background(), id, "").Get(wctx, nil)
		cancel()
		if !errors.Is(err, client.ErrWorkflowCanceled) {
			return nil, fmt.Errorf("workflow %s: %v, want canceled", id, err)
		}
		canceled++
	}

	r := &Report{Scenario: "cancel", Setup: e.desc}
	r.param("count", cfg.Count)
	r.param("activity_lock", cancelActivityLock)
	cfg.Workers.params(r)
	r.add("canceled", "workflows canceled", float64(canceled), "")
	r.latency("cancel_delivery", "cancel→activity ctx.Done", summarize(lat))
	r.note("cancel delivery: client Cancel call → the activity's ctx.Done (worker clock; one machine), one cancel at a time; lock renewals come every 30s, so the worker's waiting session heartbeat delivers it")

	if cfg.Mass > 0 {
		if e.DB == nil {
			r.note("mass cancel skipped: it needs database access")
			return r, nil
		}
		r.param("mass", cfg.Mass)
		for _, held := range []bool{false, true} {
			m, err := e.massCancel(ctx, run, cfg.Mass, held)
			if err != nil {
				return nil, err
			}
			name, label := "unheld", "queued"
			if held {
				name, label = "held", "held by a worker"
			}
			r.add("mass_cancel_"+name+"_ms", fmt.Sprintf("mass cancel, %d %s: the turn's ack", cfg.Mass, label), ms(m.ack), "ms")
			r.add("mass_cancel_"+name+"_statements", fmt.Sprintf("mass cancel, %d %s: statements", cfg.Mass, label), float64(m.statements), "")
		}
		r.note("mass cancel: through the store directly (as BenchmarkMassCancel10000): the ack of the turn consuming the cancel of one workflow with that many outstanding activities, one transaction; statements exclude BEGIN/COMMIT")
	}
	return r, nil
}

// massResult is one mass cancel's measurement.
type massResult struct {
	ack        time.Duration
	statements int64
}

// massCancel starts a workflow with n outstanding activities through the
// store (held: fetched by a worker first), cancels it and times the ack of
// the turn consuming the cancel. The workflow is deleted afterwards.
func (e *Env) massCancel(ctx context.Context, run string, n int, held bool) (massResult, error) {
	counter := &statementCounter{}
	pcfg, err := pgxpool.ParseConfig(e.DatabaseURL)
	if err != nil {
		return massResult{}, err
	}
	pcfg.MaxConns = 2
	pcfg.ConnConfig.Tracer = counter
	pcfg.ConnConfig.RuntimeParams["application_name"] = "tether-bench-mass"
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return massResult{}, fmt.Errorf("mass cancel: %w", err)
	}
	defer pool.Close()
	st := store.New(pool, store.Options{})

	id := fmt.Sprintf("mass-%s-%t", run, held)
	queue := "bench-mass-" + run
	if _, err := st.StartWorkflow(ctx, &storage.StartWorkflowParams{Namespace: Namespace, Request: api.StartWorkflowRequest{WorkflowType: "Mass", TaskQueue: queue, InstanceID: id}}); err != nil {
		return massResult{}, fmt.Errorf("mass cancel: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := st.DeleteWorkflow(dctx, &storage.DeleteWorkflowParams{Namespace: Namespace, InstanceID: id, Force: true}); err != nil {
			e.logger.Warn("mass cancel: delete the workflow", "id", id, "err", err)
		}
	}()
	fetch := &storage.FetchWorkflowTasksParams{Namespace: Namespace, TaskQueue: queue, WorkerID: "bench-mass", LockFor: time.Minute}
	tasks, err := st.FetchWorkflowTasks(ctx, fetch)
	if err != nil || len(tasks) == 0 {
		return massResult{}, fmt.Errorf("mass cancel: fetch the first turn: %v", err)
	}
	cmds := make([]api.Command, n)
	for i := range cmds {
		cmds[i] = api.Command{Type: api.CommandScheduleActivity, ActivityID: int64(i + 1), ActivityType: "Nap"}
	}
	if _, err := st.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: Namespace, Token: turnToken(tasks[0]), Request: api.CompleteWorkflowTaskRequest{Commands: cmds}}); err != nil {
		return massResult{}, fmt.Errorf("mass cancel: schedule %d activities: %w", n, err)
	}
	if held {
		for got := 0; got < n; {
			ts, err := st.FetchActivityTasks(ctx, &storage.FetchActivityTasksParams{Namespace: Namespace, TaskQueues: []string{queue}, WorkerID: "bench-mass-holder", LockFor: 10 * time.Minute, Max: 1000})
			if err != nil {
				return massResult{}, fmt.Errorf("mass cancel: hold the activities: %w", err)
			}
			if len(ts) == 0 {
				return massResult{}, fmt.Errorf("mass cancel: only %d of %d activities to hold", got, n)
			}
			got += len(ts)
		}
	}
	if _, err := st.CancelWorkflow(ctx, &storage.CancelWorkflowParams{Namespace: Namespace, InstanceID: id, Reason: "bench"}); err != nil {
		return massResult{}, fmt.Errorf("mass cancel: %w", err)
	}
	tasks, err = st.FetchWorkflowTasks(ctx, fetch)
	if err != nil || len(tasks) == 0 {
		return massResult{}, fmt.Errorf("mass cancel: fetch the cancel turn: %v", err)
	}
	counter.n.Store(0)
	t0 := time.Now()
	resp, err := st.AckWorkflowTask(ctx, &storage.AckWorkflowTaskParams{Kind: storage.AckComplete, Namespace: Namespace, Token: turnToken(tasks[0]), Request: api.CompleteWorkflowTaskRequest{
		Commands: []api.Command{{Type: api.CommandCancelWorkflow}}}})
	d := time.Since(t0)
	if err != nil {
		return massResult{}, fmt.Errorf("mass cancel: the cancel turn: %w", err)
	}
	if resp.Status != api.StatusCanceled {
		return massResult{}, fmt.Errorf("mass cancel: status %q after the cancel turn", resp.Status)
	}
	return massResult{ack: d, statements: counter.n.Load()}, nil
}

// statementCounter counts the statements sent through a pool, BEGIN,
// COMMIT and ROLLBACK excepted; a COPY counts as one.
type statementCounter struct{ n atomic.Int64 }

// TraceQueryStart counts a statement.
func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	switch strings.ToLower(strings.TrimSpace(d.SQL)) {
	case "begin", "commit", "rollback":
	default:
		c.n.Add(1)
	}
	return ctx
}

// TraceQueryEnd does nothing.
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TraceCopyFromStart counts a COPY.
func (c *statementCounter) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	c.n.Add(1)
	return ctx
}

// TraceCopyFromEnd does nothing.
func (c *statementCounter) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// TraceBatchStart does nothing.
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery counts a statement sent in a batch (the store pipelines
// its transactions' statements).
func (c *statementCounter) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	switch strings.ToLower(strings.TrimSpace(d.SQL)) {
	case "begin", "commit", "rollback":
	default:
		c.n.Add(1)
	}
}

// TraceBatchEnd does nothing.
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// turnToken is the parsed lock token of a turn the store handed out (a
// token it made cannot fail to parse; the zero token would lose the lock).
func turnToken(task *api.WorkflowTask) storage.TurnToken {
	tok, _ := storage.ParseTurnToken(task.LockToken)
	return tok
}
