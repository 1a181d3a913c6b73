package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// Workflow starts are grouped as turn acks are (see acks.go): concurrent
// starts of a namespace share one transaction and one StartInstances
// statement, which writes the instances, their start messages and one
// wake-up per task queue; each start's answer is its own.
const (
	// maxStartLeaders is how many groups of starts may commit at once
	// (one, as for turn acks: the starts that arrive meanwhile make the
	// next group larger).
	maxStartLeaders = 1
	// maxStartGroup bounds the starts of one group.
	maxStartGroup = 64
)

// startRow is one start of StartInstances (db/queries/instances.sql).
// Input, search attributes and memo absent are SQL NULL; a JSON null stays
// a jsonb null.
type startRow struct {
	InstanceID       string          `json:"instance_id"`
	WorkflowType     string          `json:"workflow_type"`
	TaskQueue        string          `json:"task_queue"`
	Input            json.RawMessage `json:"input,omitempty"`
	TimeoutMS        int64           `json:"timeout_ms"`
	Payload          json.RawMessage `json:"payload"`
	CronSchedule     *string         `json:"cron_schedule,omitempty"`
	DelayMS          int64           `json:"delay_ms"`
	SearchAttributes json.RawMessage `json:"search_attributes,omitempty"`
	Memo             json.RawMessage `json:"memo,omitempty"`
	// Priority is the start's flow control (nil: none, see flowPriority).
	Priority *api.Priority `json:"priority,omitempty"`
}

// flowPriority is p as a start or an attempt stores it: nil when it asks
// for nothing but the defaults (priority 3, no fairness key, weight 1), so
// that work without flow control stays on the queue's plain path.
func flowPriority(p *api.Priority) *api.Priority {
	if p == nil || ((p.PriorityKey == 0 || p.PriorityKey == api.DefaultPriorityKey) && p.FairnessKey == "" &&
		(p.FairnessWeight == 0 || p.FairnessWeight == 1)) {
		return nil
	}
	return p
}

// withPriority sets the start's flow control, recorded in its
// WorkflowStarted message as well.
func (r *startRow) withPriority(p *api.Priority) {
	if p = flowPriority(p); p == nil {
		return
	}
	r.Priority = p
	var started api.Event
	if err := json.Unmarshal(r.Payload, &started); err == nil {
		started.Priority = p
		r.Payload = mustJSON(started)
	}
}

// newStartRow is the start of instance id for a request's fields, with its
// WorkflowStarted message; attrs (search attributes in their stored form)
// and memo are JSON objects or empty, and the message carries them when
// set (workflow.GetInfo's SearchAttributes and Memo), as it does the
// start's header (nothing when absent).
func newStartRow(id, workflowType, taskQueue string, input json.RawMessage, timeoutMS int64, attrs, memo json.RawMessage, header api.Header) startRow {
	started := api.Event{Kind: api.EventWorkflowStarted, WorkflowType: workflowType, TaskQueue: taskQueue, Input: input,
		SearchAttributes: objectFields(attrs), Memo: objectFields(jsonValue(memo)), Header: header}
	return startRow{InstanceID: id, WorkflowType: workflowType, TaskQueue: taskQueue, Input: jsonValue(input),
		TimeoutMS: timeoutMS, Payload: mustJSON(started), SearchAttributes: attrs, Memo: jsonValue(memo)}
}

// startInstances runs StartInstances over starts (distinct ids) of
// namespace ns in t and returns the instances started, by id: a start
// missing from the answer found its id held by a running instance and
// wrote nothing. The pollers of the starts' task queues are woken by a
// notification of its own (a routed statement's NOTIFY would be sent by
// the node that ran it), sent ahead of the statement in its batch and
// delivered on commit; a start refused wakes its queue for nothing.
func startInstances(ctx context.Context, t *txn, ns string, starts []startRow) (map[string]gen.StartInstancesRow, error) {
	queues := make(map[string]int, 1)
	for _, st := range starts {
		queues[WorkflowQueueKey(ns, st.TaskQueue)]++
	}
	if err := t.w.Notify(ctx, gen.NotifyParams{Channel: NotifyChannel, Keys: payloads(queues)}); err != nil {
		return nil, fmt.Errorf("start instances: wake: %w", err)
	}
	rows, err := t.q.StartInstances(ctx, gen.StartInstancesParams{Namespace: ns, Starts: mustJSON(starts)})
	if err != nil {
		return nil, fmt.Errorf("start instances: %w", err)
	}
	out := make(map[string]gen.StartInstancesRow, len(rows))
	for _, r := range rows {
		out[r.InstanceID] = r
	}
	return out, nil
}

// startCall is one workflow start on its way through a group.
type startCall struct {
	callState
	row startRow
	// taker, when set, takes the first turn (see StartWorkflow).
	taker *storage.TurnTaker

	out api.StartWorkflowResponse
	// turn is the turn handed to taker, if any.
	turn *api.WorkflowTask
}

func newStarts() *coalescer[*startCall] {
	return &coalescer[*startCall]{maxLeaders: maxStartLeaders, maxGroup: maxStartGroup}
}

func (c *startCall) reset() { c.out, c.turn = api.StartWorkflowResponse{}, nil }

// StartWorkflow creates a workflow instance and its start message. A
// finished instance with the same id starts again as its next execution; a
// running one → storage.ErrAlreadyRunning. Concurrent starts of a namespace share
// one transaction and one statement (a lone start is one statement, one
// round trip); each start's answer is its own, as if it had run alone.
//
// With p.Taker it also locks the workflow's
// first turn for taker in the start's own transaction and
// round trip, and returns it: a poll waiting on this server gets the turn
// without a fetch of its own (the start's commit carries the lock). No
// turn comes back when taker is nil, when the start has a cron schedule
// (its first run waits), when it shares its transaction with other starts
// (firstTurns), or when the instance could not be locked for taker. A
// start whose id a running instance holds may still hand over that
// instance's due turn (returned with storage.ErrAlreadyRunning): it is work
// of the same queue. The caller must deliver the turn, or release it
// (AckWorkflowTask, storage.AckRelease). With p.Signal it is
// signalWithStart.
func (s *Store) StartWorkflow(ctx context.Context, p *storage.StartWorkflowParams) (storage.StartWorkflowResult, error) {
	if p.Signal != nil {
		return s.signalWithStart(ctx, p)
	}
	resp, turn, err := s.startWorkflow(ctx, p.Namespace, p.Request, p.Taker)
	return storage.StartWorkflowResult{StartWorkflowResponse: resp, Turn: turn, Started: err == nil}, err
}

// startWorkflow is StartWorkflow.
func (s *Store) startWorkflow(ctx context.Context, ns string, req api.StartWorkflowRequest, taker *storage.TurnTaker) (api.StartWorkflowResponse, *api.WorkflowTask, error) {
	id := req.InstanceID
	if id == "" {
		id = uuid.NewString()
	}
	cronSchedule, delay, err := firstCronRun(req.CronSchedule, s.opts.Now())
	if err != nil {
		return api.StartWorkflowResponse{}, nil, err
	}
	// Attributes are checked against the namespace's registered types: a
	// read only when the request has some.
	attrs, err := s.normalizeSearchAttributes(ctx, gen.New(s.pool), ns, req.SearchAttributes, "search_attributes", false)
	if err != nil {
		return api.StartWorkflowResponse{}, nil, err
	}
	row := newStartRow(id, req.WorkflowType, req.TaskQueue, req.Input, ms(req.ExecutionTimeout.D()), attrs, req.Memo, req.Header)
	row.CronSchedule, row.DelayMS = cronSchedule, ms(delay)
	row.withPriority(req.Priority)
	if req.Concurrency != nil {
		resp, err := s.startWithConcurrency(ctx, ns, row, req.Concurrency)
		return resp, nil, err
	}
	c := &startCall{callState: callState{ns: ns}, row: row}
	if row.CronSchedule == nil && row.DelayMS == 0 {
		c.taker = taker
	}
	if err := submit(ctx, s.starts, c, s.applyStarts); err != nil {
		if errors.Is(err, storage.ErrAlreadyRunning) {
			// Refused by a running instance, or because the namespace
			// was deleted (StartInstances then starts nothing).
			if exists, qerr := gen.New(s.pool).NamespaceExists(ctx, ns); qerr == nil && !exists {
				err = fmt.Errorf("namespace %s: %w", ns, storage.ErrNotFound)
			}
		}
		return api.StartWorkflowResponse{}, c.turn, err
	}
	return c.out, c.turn, nil
}

// applyStarts applies a group of starts: one transaction per namespace,
// and one start per instance id (a second start of an id runs after the
// group, alone, and gets the answer it would get after the first).
func (s *Store) applyStarts(group []*startCall) {
	applyByNamespace(s, oncePerKey(group, func(c *startCall) string { return c.row.InstanceID }), s.startGroup)
}

// startGroup runs the starts of one namespace (distinct ids: oncePerKey)
// as one StartInstances statement, committed in the same round trip. The
// statement locks and inserts in id order itself.
func (s *Store) startGroup(ctx context.Context, t *txn, ns string, calls []*startCall) error {
	starts := make([]startRow, len(calls))
	for i, c := range calls {
		starts[i] = c.row
	}
	// The statement is the whole transaction: COMMIT travels with it, and
	// so do the first turns handed over (LockNextTurns sent ahead, behind
	// it, in the same round trip).
	handing := firstTurns(t, s, ns, calls)
	t.p.commitWithNext()
	started, err := startInstances(ctx, t, ns, starts)
	if err != nil {
		return err
	}
	for _, c := range calls {
		r, ok := started[c.row.InstanceID]
		if !ok {
			c.err = storage.ErrAlreadyRunning
			continue
		}
		c.out = api.StartWorkflowResponse{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, RunID: r.RunID.String(), Status: r.Status}
		t.observe(observation{kind: observeStarted, ns: ns, typ: c.row.WorkflowType})
	}
	if handing == nil {
		return nil
	}
	rows, err := t.q.LockNextTurns(ctx, *handing)
	if err != nil {
		return fmt.Errorf("lock first turns: %w", err)
	}
	for _, row := range rows {
		k := -1
		if row.EagerElement != nil {
			k = int(*row.EagerElement) - 1
		}
		if k < 0 || k >= len(calls) || calls[k].taker == nil || calls[k].row.InstanceID != row.InstanceID {
			return fmt.Errorf("lock first turns: instance %q locked for element %v", row.InstanceID, row.EagerElement)
		}
		c := calls[k]
		// The starts have committed: a turn that cannot be built (a first
		// turn reads and writes nothing more, so only a message that does
		// not parse) fails no start; it is left to its lock's end and
		// delivered again then.
		if turn, _, err := s.takeTurn(ctx, t, ns, row, c.taker.WorkerID); err == nil {
			c.turn = turn
		}
	}
	return nil
}

// firstTurns sends ahead (txn.readAhead) the LockNextTurns that locks the
// first turn of a lone start (calls[0], element 1 of the eager arrays) for
// its taker, and returns its parameters; nil when there is none to lock.
//
// Only a lone start hands its turn over. Starts that come together make a
// group, and their turns are better fetched together too: a poll takes
// several turns at once, where hand-offs would give each poll one
// (measured: 10 % fewer workflows/s at 64 starters when every start of a
// group handed its turn over).
func firstTurns(t *txn, s *Store, ns string, calls []*startCall) *gen.LockNextTurnsParams {
	if len(calls) != 1 || calls[0].taker == nil {
		return nil
	}
	c := calls[0]
	p := s.eagerTurnParams(ns, 1, 1)
	p.FirstTurns = true
	setEagerTurn(&p, 0, c.row.InstanceID, c.taker.WorkerID, c.row.TaskQueue, c.taker.BuildID, c.taker.LockFor)
	t.readAhead(func(q *gen.Queries) error {
		_, err := q.LockNextTurns(context.Background(), p)
		return err
	})
	return &p
}

// releaseTurn releases a turn that StartWorkflow locked for a taker and the
// caller could not deliver, and wakes the pollers of its queue. A turn
// whose lock is no longer its own is left alone.
func (s *Store) releaseTurn(ctx context.Context, ns string, token storage.TurnToken) error {
	return s.inTx(ctx, func(t *txn) error {
		queue, err := t.q.ReleaseTurn(ctx, gen.ReleaseTurnParams{Namespace: ns, InstanceID: token.InstanceID, LockToken: &token.Lock})
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("release turn: %w", err)
		}
		t.wake(WorkflowQueueKey(ns, queue))
		return nil
	})
}
