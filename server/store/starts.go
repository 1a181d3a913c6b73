package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
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
}

// newStartRow is the start of instance id for a request's fields, with its
// WorkflowStarted message.
func newStartRow(id, workflowType, taskQueue string, input json.RawMessage, timeoutMS int64) startRow {
	started := api.Event{Kind: api.EventWorkflowStarted, WorkflowType: workflowType, TaskQueue: taskQueue, Input: input}
	return startRow{InstanceID: id, WorkflowType: workflowType, TaskQueue: taskQueue, Input: jsonValue(input),
		TimeoutMS: timeoutMS, Payload: mustJSON(started)}
}

// startInstances runs StartInstances over starts (distinct ids) of
// namespace ns with q and returns the instances started, by id: a start
// missing from the answer found its id held by a running instance and
// wrote nothing.
func startInstances(ctx context.Context, q *gen.Queries, ns string, starts []startRow) (map[string]gen.StartInstancesRow, error) {
	rows, err := q.StartInstances(ctx, gen.StartInstancesParams{Namespace: ns, Starts: mustJSON(starts),
		Channel: NotifyChannel, WakePrefix: WorkflowQueueKey(ns, "")})
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

	out api.StartWorkflowResponse
}

func newStarts() *coalescer[*startCall] {
	return &coalescer[*startCall]{maxLeaders: maxStartLeaders, maxGroup: maxStartGroup}
}

func (c *startCall) reset() { c.out = api.StartWorkflowResponse{} }

// StartWorkflow creates a workflow instance and its start message. A
// finished instance with the same id starts again as its next execution; a
// running one → ErrAlreadyRunning. Concurrent starts of a namespace share
// one transaction and one statement (a lone start is one statement, one
// round trip); each start's answer is its own, as if it had run alone.
func (s *Store) StartWorkflow(ctx context.Context, ns string, req api.StartWorkflowRequest) (api.StartWorkflowResponse, error) {
	id := req.InstanceID
	if id == "" {
		id = uuid.NewString()
	}
	cronSchedule, delay, err := firstCronRun(req.CronSchedule, s.opts.Now())
	if err != nil {
		return api.StartWorkflowResponse{}, err
	}
	// Attributes are checked against the namespace's registered types: a
	// read only when the request has some.
	attrs, err := s.normalizeSearchAttributes(ctx, gen.New(s.pool), ns, req.SearchAttributes, "search_attributes", false)
	if err != nil {
		return api.StartWorkflowResponse{}, err
	}
	row := newStartRow(id, req.WorkflowType, req.TaskQueue, req.Input, ms(req.ExecutionTimeout.D()))
	row.CronSchedule, row.DelayMS = cronSchedule, ms(delay)
	row.SearchAttributes, row.Memo = attrs, jsonValue(req.Memo)
	c := &startCall{callState: callState{ns: ns}, row: row}
	if err := submit(ctx, s.starts, c, s.applyStarts); err != nil {
		return api.StartWorkflowResponse{}, err
	}
	return c.out, nil
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
	// The statement is the whole transaction: COMMIT travels with it.
	t.p.commitWithNext()
	started, err := startInstances(ctx, t.q, ns, starts)
	if err != nil {
		return err
	}
	for _, c := range calls {
		r, ok := started[c.row.InstanceID]
		if !ok {
			c.err = ErrAlreadyRunning
			continue
		}
		c.out = api.StartWorkflowResponse{InstanceID: r.InstanceID, ExecutionID: r.ExecutionID, Status: r.Status}
	}
	return nil
}
