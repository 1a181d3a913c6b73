package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/api"
)

// Names of the invariants the checker verifies. A Violation carries one.
const (
	// InvWorkflowNotCompleted: a started workflow is not completed (missing,
	// still running, failed or cancelled).
	InvWorkflowNotCompleted = "workflow-not-completed"
	// InvWrongResult: a workflow completed with another result than the one
	// its input determines.
	InvWrongResult = "wrong-result"
	// InvHistoryGap: an execution's event ids are not 1, 2, … n without a
	// gap or a repeat, or the instance's next event id is not n+1.
	InvHistoryGap = "history-gap"
	// InvHistoryShape: an execution does not start with WorkflowStarted.
	InvHistoryShape = "history-shape"
	// InvDuplicateTerminal: an execution has more than one terminal event,
	// or events after its terminal event.
	InvDuplicateTerminal = "duplicate-terminal-event"
	// InvActivityCompletedTwice: an activity has more than one
	// ActivityCompleted (or a completion and a failure).
	InvActivityCompletedTwice = "activity-completed-twice"
	// InvActivityNeverExecuted: an activity the workflow needed (scheduled
	// and not cancelled) was never executed by any worker.
	InvActivityNeverExecuted = "activity-never-executed"
	// InvCompletionWithoutExecution: an ActivityCompleted names an attempt
	// that no worker executed.
	InvCompletionWithoutExecution = "completion-without-execution"
	// InvResultFromCancelledAttempt: an ActivityCompleted was recorded for an
	// attempt (or an activity) whose cancellation the server had recorded
	// before.
	InvResultFromCancelledAttempt = "result-from-cancelled-attempt"
	// InvResultLost: the server timed an attempt out (StartToClose or
	// Heartbeat timeout), or handed it out a second time, although a worker
	// had executed it to the end with success: the worker's report (or its
	// heartbeats) never reached the server. (A second delivery of an attempt
	// fetched just before a database crash is expected and not counted.) With the suite's timeouts (StartToClose 20 s, Heartbeat 10 s)
	// far above the activities' durations and the outages, no fault but a
	// lost report makes this happen: a killed or paused worker is declared
	// lost (worker_lost, 2 s lease) long before.
	InvResultLost = "result-lost"
	// InvOrphanAttempt: an attempt of a finished execution is still in
	// worker_queue without a cancel flag: it could still be handed out.
	InvOrphanAttempt = "orphan-attempt"
	// InvNoProgressAfterFault: no workflow completed after a fault ended.
	InvNoProgressAfterFault = "no-progress-after-fault"
)

// Violation is one broken invariant.
type Violation struct {
	// Invariant is one of the Inv* names.
	Invariant string
	// Subject names what broke it: a workflow, an activity, a fault.
	Subject string
	// Detail says how.
	Detail string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: %s: %s", v.Invariant, v.Subject, v.Detail)
}

// ExtraExecution is an activity execution beyond the first one of its
// activity, with its cause as far as it can be told.
type ExtraExecution struct {
	InstanceID string
	ActivityID int64
	Type       string
	Attempt    int32
	WorkerID   string
	// Cause is "attempt cancelled: <reason>" (the server cancelled the
	// previous attempt: worker_lost, timeout:…), "same attempt redelivered"
	// (the attempt's lock was released and it was handed out again),
	// "retry after failure or lost report"; with " (that attempt had
	// ended ok: …)" when the attempt before had run to success.
	Cause string
	// At is when the execution started.
	At time.Time
	// PrevStart and PrevEnd are when the activity's execution before this
	// one started and ended (PrevEnd zero: its process died first).
	PrevStart, PrevEnd time.Time
	// PrevWorker is the worker that ran the execution before.
	PrevWorker string
	// Fault is the kind of the fault that made the execution necessary,
	// as far as times tell (set by Run; empty when none).
	Fault string
}

// Findings are what the checker found.
type Findings struct {
	Violations []Violation
	Extra      []ExtraExecution
	// Executions counts every activity execution logged; Activities the
	// activities scheduled.
	Executions, Activities int
}

// histEvent is a history row.
type histEvent struct {
	id    int64
	kind  string
	actID int64
	ev    api.Event
}

type execKey struct {
	inst string
	exec int64
}

type actKey struct {
	inst string
	exec int64
	act  int64
}

func (k actKey) String() string { return fmt.Sprintf("%s/%d/activity %d", k.inst, k.exec, k.act) }

// Check reads the database (namespace "default") and the execution logs
// and checks every invariant for the workflows of want (instance id →
// input). It reports every violation it finds, not only the first.
//
// dbCrashes are the instants PostgreSQL was stopped in immediate mode: a
// fetch committed just before (its commit is not waited for, see
// docs/architecture.md) may be lost with the crash, and the attempt's
// second delivery is then expected, not a lost report.
func Check(ctx context.Context, conn *pgx.Conn, want map[string]FlowInput, execs []Exec, dbCrashes []time.Time) (*Findings, error) {
	f := &Findings{}
	add := func(inv, subject, format string, args ...any) {
		f.Violations = append(f.Violations, Violation{Invariant: inv, Subject: subject, Detail: fmt.Sprintf(format, args...)})
	}

	// Instances.
	type inst struct {
		status string
		execID int64
		next   int64
		result []byte
	}
	insts := map[string]inst{}
	rows, err := conn.Query(ctx, `SELECT instance_id, status, execution_id, next_event_id, result FROM instances WHERE namespace = 'default'`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read instances: %w", err)
	}
	for rows.Next() {
		var id string
		var in inst
		if err := rows.Scan(&id, &in.status, &in.execID, &in.next, &in.result); err != nil {
			return nil, fmt.Errorf("chaos: read instances: %w", err)
		}
		insts[id] = in
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chaos: read instances: %w", err)
	}
	for _, id := range sortedKeys(want) {
		in, ok := insts[id]
		switch {
		case !ok:
			add(InvWorkflowNotCompleted, id, "no such instance: the start was lost")
		case in.status != "completed":
			add(InvWorkflowNotCompleted, id, "status %s", in.status)
		default:
			var got string
			if err := json.Unmarshal(in.result, &got); err != nil || got != ExpectedResult(want[id]) {
				add(InvWrongResult, id, "result %s, want %q", in.result, ExpectedResult(want[id]))
			}
		}
	}

	// History.
	hist := map[execKey][]histEvent{}
	rows, err = conn.Query(ctx, `SELECT instance_id, execution_id, event_id, kind, coalesce(activity_id, 0), payload
		FROM history WHERE namespace = 'default' ORDER BY instance_id, execution_id, event_id`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read history: %w", err)
	}
	for rows.Next() {
		var k execKey
		var e histEvent
		var payload []byte
		if err := rows.Scan(&k.inst, &k.exec, &e.id, &e.kind, &e.actID, &payload); err != nil {
			return nil, fmt.Errorf("chaos: read history: %w", err)
		}
		if err := json.Unmarshal(payload, &e.ev); err != nil {
			return nil, fmt.Errorf("chaos: history %s/%d event %d: %w", k.inst, k.exec, e.id, err)
		}
		hist[k] = append(hist[k], e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chaos: read history: %w", err)
	}

	// Executions by activity, each with its end (nil when its process
	// died first), and the attempts that ended ok.
	starts := pairExecutions(execs)
	type attemptKey struct {
		actKey
		attempt int32
	}
	okEnds := map[attemptKey]Exec{}
	for k, xs := range starts {
		f.Executions += len(xs)
		for _, x := range xs {
			if x.end != nil && x.end.Outcome == "ok" {
				okEnds[attemptKey{k, x.Attempt}] = *x.end
			}
		}
	}

	keys := make([]execKey, 0, len(hist))
	for k := range hist {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].inst != keys[j].inst {
			return keys[i].inst < keys[j].inst
		}
		return keys[i].exec < keys[j].exec
	})
	for _, k := range keys {
		evs := hist[k]
		subject := fmt.Sprintf("%s/%d", k.inst, k.exec)
		for i, e := range evs {
			if e.id != int64(i+1) {
				add(InvHistoryGap, subject, "event #%d has id %d", i+1, e.id)
				break
			}
		}
		if in, ok := insts[k.inst]; ok && in.execID == k.exec && in.next != int64(len(evs))+1 {
			add(InvHistoryGap, subject, "%d events but next_event_id %d", len(evs), in.next)
		}
		if len(evs) == 0 || evs[0].kind != api.EventWorkflowStarted {
			add(InvHistoryShape, subject, "does not start with WorkflowStarted")
		}
		terminals := 0
		for i, e := range evs {
			if isTerminal(e.kind) {
				terminals++
				if i != len(evs)-1 {
					add(InvDuplicateTerminal, subject, "%s (event %d) is followed by %d events", e.kind, e.id, len(evs)-1-i)
				}
			}
		}
		if terminals > 1 {
			add(InvDuplicateTerminal, subject, "%d terminal events", terminals)
		}

		// Activities of the execution.
		type actState struct {
			typ             string
			scheduled       bool
			cancelled       bool // activity-level cancel recorded
			cancelledAt     int64
			attemptCancels  map[int32]string // attempt → reason
			attemptCancelAt map[int32]int64
			outcomes        int
			completed       []int32
		}
		acts := map[int64]*actState{}
		get := func(id int64) *actState {
			a := acts[id]
			if a == nil {
				a = &actState{attemptCancels: map[int32]string{}, attemptCancelAt: map[int32]int64{}}
				acts[id] = a
			}
			return a
		}
		for _, e := range evs {
			switch e.kind {
			case api.EventActivityScheduled:
				a := get(e.actID)
				a.scheduled, a.typ = true, e.ev.ActivityType
			case api.EventActivityCancelRequested:
				a := get(e.actID)
				if !a.cancelled {
					a.cancelled, a.cancelledAt = true, e.id
				}
			case api.EventActivityAttemptCancelRequested:
				a := get(e.actID)
				a.attemptCancels[e.ev.Attempt] = e.ev.Reason
				a.attemptCancelAt[e.ev.Attempt] = e.id
				ak := actKey{k.inst, k.exec, e.actID}
				if x, ok := okEnds[attemptKey{ak, e.ev.Attempt}]; ok && strings.HasPrefix(e.ev.Reason, "timeout:") {
					add(InvResultLost, ak.String(), "attempt %d ended ok on worker %s, yet the server timed it out (%s, event %d)", e.ev.Attempt, x.WorkerID, e.ev.Reason, e.id)
				}
			case api.EventActivityCompleted, api.EventActivityFailed:
				a := get(e.actID)
				a.outcomes++
				ak := actKey{k.inst, k.exec, e.actID}
				if a.outcomes > 1 {
					add(InvActivityCompletedTwice, ak.String(), "%s (event %d) is outcome #%d", e.kind, e.id, a.outcomes)
				}
				if e.kind != api.EventActivityCompleted {
					continue
				}
				a.completed = append(a.completed, e.ev.Attempt)
				if a.cancelled {
					add(InvResultFromCancelledAttempt, ak.String(), "ActivityCompleted (event %d, attempt %d) after ActivityCancelRequested (event %d)", e.id, e.ev.Attempt, a.cancelledAt)
				}
				if r, ok := a.attemptCancels[e.ev.Attempt]; ok {
					add(InvResultFromCancelledAttempt, ak.String(), "ActivityCompleted (event %d) of attempt %d, which the server cancelled (%s, event %d)", e.id, e.ev.Attempt, r, a.attemptCancelAt[e.ev.Attempt])
				}
				found := false
				for _, x := range starts[ak] {
					found = found || x.Attempt == e.ev.Attempt
				}
				if !found {
					add(InvCompletionWithoutExecution, ak.String(), "ActivityCompleted (event %d) of attempt %d, which no worker logged", e.id, e.ev.Attempt)
				}
			}
		}
		for _, id := range sortedKeys(acts) {
			a := acts[id]
			if !a.scheduled {
				continue
			}
			f.Activities++
			ak := actKey{k.inst, k.exec, id}
			xs := starts[ak]
			if len(xs) == 0 && (!a.cancelled || len(a.completed) > 0) {
				add(InvActivityNeverExecuted, ak.String(), "%s was scheduled and not cancelled, and no worker executed it", a.typ)
			}
			for i, x := range xs {
				if i == 0 {
					continue
				}
				for _, b := range xs[:i] {
					if b.Attempt != x.Attempt {
						continue
					}
					if b.end != nil && b.end.Outcome == "ok" && !nearCrash(b.At, dbCrashes) {
						add(InvResultLost, ak.String(), "attempt %d ended ok on worker %s at %s, yet was handed out again (to %s at %s): its result never reached the server",
							b.Attempt, b.WorkerID, clock(b.end.At), x.WorkerID, clock(x.At))
					}
					break
				}
				cause := extraCause(x.Exec, xs[:i], a.attemptCancels)
				if _, ok := okEnds[attemptKey{ak, x.Attempt - 1}]; ok && x.Attempt > 1 {
					cause += " (that attempt had ended ok: its result never counted)"
				}
				prev := xs[i-1]
				extra := ExtraExecution{
					InstanceID: k.inst, ActivityID: id, Type: x.Type, Attempt: x.Attempt, WorkerID: x.WorkerID,
					Cause: cause, At: time.Unix(0, x.At), PrevStart: time.Unix(0, prev.At), PrevWorker: prev.WorkerID,
				}
				if prev.end != nil {
					extra.PrevEnd = time.Unix(0, prev.end.At)
				}
				f.Extra = append(f.Extra, extra)
			}
		}
	}

	// Attempts of finished executions that could still be handed out.
	rows, err = conn.Query(ctx, `SELECT wq.instance_id, wq.execution_id, wq.activity_id, wq.attempt, coalesce(wq.worker_id, '')
		FROM worker_queue wq JOIN instances i ON i.namespace = wq.namespace AND i.instance_id = wq.instance_id
		WHERE wq.namespace = 'default' AND NOT wq.cancel_requested
		  AND (i.status <> 'running' OR i.execution_id <> wq.execution_id)
		ORDER BY 1, 2, 3, 4`)
	if err != nil {
		return nil, fmt.Errorf("chaos: read worker_queue: %w", err)
	}
	for rows.Next() {
		var k actKey
		var attempt int32
		var worker string
		if err := rows.Scan(&k.inst, &k.exec, &k.act, &attempt, &worker); err != nil {
			return nil, fmt.Errorf("chaos: read worker_queue: %w", err)
		}
		add(InvOrphanAttempt, k.String(), "attempt %d (worker %q) of a finished execution is still queued", attempt, worker)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chaos: read worker_queue: %w", err)
	}
	return f, nil
}

// extraCause tells why x ran although earlier executions of its activity
// (before) had run.
func extraCause(x Exec, before []execution, attemptCancels map[int32]string) string {
	for _, b := range before {
		if b.Attempt == x.Attempt {
			return "same attempt redelivered"
		}
	}
	if r, ok := attemptCancels[x.Attempt-1]; ok {
		return "attempt cancelled: " + r
	}
	return "retry after failure or lost report"
}

// execution is a logged execution with its end record (nil when the
// process died before it ended).
type execution struct {
	Exec
	end *Exec
}

// pairExecutions groups the start records by activity, in time order, each
// paired with the first later end record of the same attempt and worker.
func pairExecutions(execs []Exec) map[actKey][]execution {
	sorted := slices.Clone(execs)
	slices.SortStableFunc(sorted, func(a, b Exec) int { return cmp.Compare(a.At, b.At) })
	type runKey struct {
		actKey
		attempt int32
		worker  string
	}
	out := map[actKey][]execution{}
	open := map[runKey][]int{} // started, not ended: indexes into out[k]
	for _, e := range sorted {
		k := actKey{e.InstanceID, e.ExecutionID, e.ActivityID}
		rk := runKey{k, e.Attempt, e.WorkerID}
		switch e.Event {
		case "start":
			open[rk] = append(open[rk], len(out[k]))
			out[k] = append(out[k], execution{Exec: e})
		case "end":
			if q := open[rk]; len(q) > 0 {
				end := e
				out[k][q[0]].end = &end
				open[rk] = q[1:]
			}
		}
	}
	return out
}

// clock formats Unix nanoseconds as a time of day.
func clock(ns int64) string { return time.Unix(0, ns).Format("15:04:05.000") }

// nearCrash reports whether an execution that started at (Unix
// nanoseconds) may have been fetched by a transaction lost in one of the
// database crashes: it started at most 2 s before one began.
func nearCrash(at int64, crashes []time.Time) bool {
	t := time.Unix(0, at)
	for _, c := range crashes {
		if !t.After(c) && c.Sub(t) <= 2*time.Second {
			return true
		}
	}
	return false
}

func isTerminal(kind string) bool {
	switch kind {
	case api.EventWorkflowCompleted, api.EventWorkflowFailed, api.EventWorkflowCanceled, api.EventContinuedAsNew:
		return true
	}
	return false
}

func sortedKeys[K interface{ ~string | ~int64 }, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// summarizeCauses counts extra executions by fault and cause, sorted.
func summarizeCauses(extra []ExtraExecution) []string {
	n := map[string]int{}
	for _, e := range extra {
		c := e.Cause
		if e.Fault != "" {
			c = e.Fault + " → " + c
		}
		n[c]++
	}
	parts := make([]string, 0, len(n))
	for _, c := range sortedKeys(n) {
		parts = append(parts, fmt.Sprintf("%d × %s", n[c], c))
	}
	return parts
}
