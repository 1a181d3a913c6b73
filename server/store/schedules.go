package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/visibility"
)

// Schedules (docs/api.md, "Schedules"; docs/operations.md, "The
// scheduler"). A schedule row holds its spec and action as JSON, its next
// nominal slot and when that slot fires (the slot plus its jitter). Every
// operation that fires or changes a schedule locks its row first (the
// scheduler with SKIP LOCKED), so that one transaction at a time decides
// what its slots do; schedule_actions' primary key refuses a second action
// for the same slot besides.

// ScheduleKey is the notification that wakes the schedulers: a schedule
// was created or changed (its next fire time may be earlier), or one of
// its workflows may have closed.
const ScheduleKey = "s|*|schedules"

const (
	// defaultCatchupWindow is a schedule's catch-up window when the
	// request gives none.
	defaultCatchupWindow = time.Minute
	// maxCatchupWindow bounds the catch-up window.
	maxCatchupWindow = 365 * 24 * time.Hour
	// maxSlotsPerFire bounds the slots one claim fires; the rest wait for
	// the next claim.
	maxSlotsPerFire = 100
	// maxMissedCount bounds the missed slots one claim counts one by one;
	// past it, the claim jumps to the catch-up window.
	maxMissedCount = 10000
	// scheduleNextTimes is how many next slots a description lists.
	scheduleNextTimes = 10
	// scheduleRecentActions is how many actions a description lists.
	scheduleRecentActions = 10
	// scheduleRunningMax bounds the running workflows a description lists
	// and an overlap policy acts on.
	scheduleRunningMax = 100
)

// scheduleRow is a schedule row with its spec and action decoded.
type scheduleRow struct {
	gen.Schedule
	spec    *engine.Spec
	specAPI api.ScheduleSpec
	action  api.ScheduleWorkflowAction
	catchup time.Duration
	changed bool
}

func decodeSchedule(r gen.Schedule) (*scheduleRow, error) {
	sc := &scheduleRow{Schedule: r, catchup: time.Duration(r.CatchupWindowMs) * time.Millisecond}
	if err := json.Unmarshal(r.Spec, &sc.specAPI); err != nil {
		return nil, fmt.Errorf("spec of schedule %s: %w", r.ScheduleID, err)
	}
	if err := json.Unmarshal(r.Action, &sc.action); err != nil {
		return nil, fmt.Errorf("action of schedule %s: %w", r.ScheduleID, err)
	}
	spec, err := engine.ParseSpec(sc.specAPI)
	if err != nil {
		return nil, fmt.Errorf("spec of schedule %s: %w", r.ScheduleID, err)
	}
	sc.spec = spec
	return sc, nil
}

// checkedSchedule is a request's schedule, checked, with its defaults.
type checkedSchedule struct {
	spec    *engine.Spec
	overlap string
	catchup time.Duration
}

// checkSchedule checks what the validator cannot (the spec, the catch-up
// window) and applies the defaults.
func checkSchedule(req api.ScheduleRequest) (checkedSchedule, error) {
	spec, err := engine.ParseSpec(req.Spec)
	if err != nil {
		var se *engine.SpecError
		if errors.As(err, &se) {
			return checkedSchedule{}, &storage.InvalidError{Field: "spec." + se.Field, Message: se.Message}
		}
		return checkedSchedule{}, err
	}
	c := checkedSchedule{spec: spec, overlap: req.OverlapPolicy, catchup: req.CatchupWindow.D()}
	if c.overlap == "" {
		c.overlap = api.OverlapSkip
	}
	if !knownOverlap(c.overlap) {
		return checkedSchedule{}, &storage.InvalidError{Field: "overlap_policy", Message: fmt.Sprintf("unknown overlap policy %q", c.overlap)}
	}
	if c.catchup == 0 {
		c.catchup = defaultCatchupWindow
	}
	if c.catchup < time.Second || c.catchup > maxCatchupWindow {
		return checkedSchedule{}, &storage.InvalidError{Field: "catchup_window", Message: fmt.Sprintf("must be between 1s and %s", maxCatchupWindow)}
	}
	return c, nil
}

func knownOverlap(p string) bool {
	for _, o := range api.OverlapPolicies() {
		if o == p {
			return true
		}
	}
	return false
}

// nextFire is the spec's first slot after after and when it fires (nil,
// nil when it has none or when no action remains).
func nextFire(spec *engine.Spec, id string, after time.Time, remaining *int32) (slot, fire *time.Time) {
	if remaining != nil && *remaining <= 0 {
		return nil, nil
	}
	t, err := spec.Next(after)
	if err != nil {
		return nil, nil
	}
	f := t.Add(spec.Jitter(id, t))
	return &t, &f
}

// CreateSchedule stores a new schedule (ErrScheduleExists when the id is
// taken) and wakes the schedulers.
func (s *Store) CreateSchedule(ctx context.Context, p *storage.CreateScheduleParams) error {
	ns, req := p.Namespace, p.Request
	c, err := checkSchedule(req)
	if err != nil {
		return err
	}
	now := s.opts.Now().UTC()
	slot, fire := nextFire(c.spec, req.ScheduleID, now, req.RemainingActions)
	return s.inTx(ctx, func(t *txn) error {
		n, err := t.q.CreateSchedule(ctx, gen.CreateScheduleParams{
			Namespace: ns, ScheduleID: req.ScheduleID, Spec: mustJSON(req.Spec), Action: mustJSON(req.Action),
			OverlapPolicy: c.overlap, CatchupWindowMs: ms(c.catchup), Paused: req.Paused, Note: req.Note,
			RemainingActions: req.RemainingActions, NextSlot: slot, NextFireAt: fire, Now: now,
		})
		if err != nil {
			return fmt.Errorf("create schedule: %w", err)
		}
		if n == 0 {
			return storage.ErrScheduleExists
		}
		t.wake(ScheduleKey)
		return nil
	})
}

// lockSchedule locks and decodes a schedule (storage.ErrNotFound).
func lockSchedule(ctx context.Context, t *txn, ns, id string) (*scheduleRow, error) {
	r, err := t.q.LockSchedule(ctx, gen.LockScheduleParams{Namespace: ns, ScheduleID: id})
	if noRows(err) {
		return nil, storage.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("lock schedule: %w", err)
	}
	return decodeSchedule(r)
}

// DescribeSchedule returns a schedule, its next slots, its newest actions
// and its running workflows (storage.ErrNotFound).
func (s *Store) DescribeSchedule(ctx context.Context, p *storage.ScheduleRef) (api.Schedule, error) {
	ns, id := p.Namespace, p.ID
	q := gen.New(s.pool)
	r, err := q.GetSchedule(ctx, gen.GetScheduleParams{Namespace: ns, ScheduleID: id})
	if noRows(err) {
		return api.Schedule{}, storage.ErrNotFound
	}
	if err != nil {
		return api.Schedule{}, fmt.Errorf("describe schedule: %w", err)
	}
	sc, err := decodeSchedule(r)
	if err != nil {
		return api.Schedule{}, err
	}
	out := api.Schedule{ScheduleID: r.ScheduleID, Spec: sc.specAPI, Action: sc.action, OverlapPolicy: r.OverlapPolicy,
		CatchupWindow: api.Duration(sc.catchup), Paused: r.Paused, Note: r.Note, RemainingActions: r.RemainingActions,
		Info: api.ScheduleInfo{ActionCount: r.ActionsTaken, OverlapSkipped: r.OverlapSkipped,
			MissedCatchupWindow: r.MissedCatchup, BufferedSlot: r.BufferedSlot,
			NextActionTimes: []time.Time{}, RecentActions: []api.ScheduleActionResult{}, RunningWorkflows: []string{},
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}}
	if !r.Paused && r.NextSlot != nil {
		n := scheduleNextTimes
		if r.RemainingActions != nil && int(*r.RemainingActions) < n {
			n = int(*r.RemainingActions)
		}
		if n > 0 {
			out.Info.NextActionTimes = append(out.Info.NextActionTimes, r.NextSlot.UTC())
			out.Info.NextActionTimes = append(out.Info.NextActionTimes, sc.spec.NextN(*r.NextSlot, n-1)...)
		}
	}
	recent, err := q.RecentScheduleActions(ctx, gen.RecentScheduleActionsParams{Namespace: ns, ScheduleID: id, MaxRows: scheduleRecentActions})
	if err != nil {
		return api.Schedule{}, fmt.Errorf("recent schedule actions: %w", err)
	}
	for _, a := range recent {
		out.Info.RecentActions = append(out.Info.RecentActions, api.ScheduleActionResult{SlotAt: a.SlotAt.UTC(),
			FiredAt: a.FiredAt.UTC(), WorkflowID: a.WorkflowID, Kind: a.Kind, Status: a.Status})
	}
	running, err := q.RunningScheduleWorkflows(ctx, gen.RunningScheduleWorkflowsParams{Namespace: ns, ScheduleID: id, MaxRows: scheduleRunningMax})
	if err != nil {
		return api.Schedule{}, fmt.Errorf("running schedule workflows: %w", err)
	}
	out.Info.RunningWorkflows = append(out.Info.RunningWorkflows, running...)
	return out, nil
}

// ListSchedules pages through a namespace's schedules by id; the page
// token is the last id of the previous page.
func (s *Store) ListSchedules(ctx context.Context, f *storage.ScheduleFilter) (api.ListSchedulesResponse, error) {
	ns := f.Namespace
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	after := ""
	if f.PageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(f.PageToken)
		if err != nil || len(b) == 0 {
			return api.ListSchedulesResponse{}, storage.ErrBadPageToken
		}
		after = string(b)
	}
	rows, err := gen.New(s.pool).ListSchedules(ctx, gen.ListSchedulesParams{Namespace: ns, After: after, MaxRows: limit + 1})
	if err != nil {
		return api.ListSchedulesResponse{}, fmt.Errorf("list schedules: %w", err)
	}
	out := api.ListSchedulesResponse{Schedules: []api.ScheduleSummary{}}
	for i, r := range rows {
		if i == int(limit) {
			out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(rows[i-1].ScheduleID))
			break
		}
		var action api.ScheduleWorkflowAction
		_ = json.Unmarshal(r.Action, &action)
		sum := api.ScheduleSummary{ScheduleID: r.ScheduleID, WorkflowType: action.WorkflowType, Paused: r.Paused,
			Note: r.Note, ActionCount: r.ActionsTaken}
		if !r.Paused && r.NextSlot != nil {
			t := r.NextSlot.UTC()
			sum.NextActionTime = &t
		}
		out.Schedules = append(out.Schedules, sum)
	}
	return out, nil
}

// updateSchedule replaces a schedule's spec, action and policies; its
// next slot is computed from now and a buffered slot is dropped.
func (s *Store) updateSchedule(ctx context.Context, ns, id string, req api.ScheduleRequest) error {
	c, err := checkSchedule(req)
	if err != nil {
		return err
	}
	now := s.opts.Now().UTC()
	return s.inTx(ctx, func(t *txn) error {
		if _, err := lockSchedule(ctx, t, ns, id); err != nil {
			return err
		}
		slot, fire := nextFire(c.spec, id, now, req.RemainingActions)
		if err := t.q.ReplaceSchedule(ctx, gen.ReplaceScheduleParams{
			Namespace: ns, ScheduleID: id, Spec: mustJSON(req.Spec), Action: mustJSON(req.Action),
			OverlapPolicy: c.overlap, CatchupWindowMs: ms(c.catchup), Paused: req.Paused, Note: req.Note,
			RemainingActions: req.RemainingActions, NextSlot: slot, NextFireAt: fire, Now: now,
		}); err != nil {
			return fmt.Errorf("update schedule: %w", err)
		}
		t.wake(ScheduleKey)
		return nil
	})
}

// pauseSchedule pauses or unpauses a schedule with a note. Unpausing
// computes the next slot from now: the slots of the pause do not fire.
func (s *Store) pauseSchedule(ctx context.Context, ns, id string, paused bool, note string) error {
	now := s.opts.Now().UTC()
	return s.inTx(ctx, func(t *txn) error {
		sc, err := lockSchedule(ctx, t, ns, id)
		if err != nil {
			return err
		}
		slot, fire := sc.NextSlot, sc.NextFireAt
		if !paused && sc.Paused {
			slot, fire = nextFire(sc.spec, id, now, sc.RemainingActions)
		}
		if err := t.q.SetSchedulePaused(ctx, gen.SetSchedulePausedParams{Namespace: ns, ScheduleID: id,
			Paused: paused, Note: note, NextSlot: slot, NextFireAt: fire, Now: now}); err != nil {
			return fmt.Errorf("pause schedule: %w", err)
		}
		t.wake(ScheduleKey)
		return nil
	})
}

// DeleteSchedule deletes a schedule and its actions (storage.ErrNotFound).
func (s *Store) DeleteSchedule(ctx context.Context, p *storage.ScheduleRef) error {
	ns, id := p.Namespace, p.ID
	n, err := gen.New(s.pool).DeleteSchedule(ctx, gen.DeleteScheduleParams{Namespace: ns, ScheduleID: id})
	if err != nil {
		return fmt.Errorf("delete schedule: %w", err)
	}
	if n == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// triggerSchedule fires the action now (the slot is now, to the
// millisecond), with overlap ("": the schedule's policy). A paused
// schedule may be triggered; triggers do not count against the remaining
// actions.
func (s *Store) triggerSchedule(ctx context.Context, ns, id, overlap string) (api.ScheduleTriggerResponse, error) {
	var out api.ScheduleTriggerResponse
	now := s.opts.Now().UTC()
	err := s.inTx(ctx, func(t *txn) error {
		sc, err := lockSchedule(ctx, t, ns, id)
		if err != nil {
			return err
		}
		if overlap == "" {
			overlap = sc.OverlapPolicy
		}
		out.Outcome, out.WorkflowID, err = s.fireSlot(ctx, t, ns, sc, now.Truncate(time.Millisecond), api.ScheduleActionTriggered, overlap, now)
		if err != nil {
			return err
		}
		return sc.save(ctx, t, ns)
	})
	return out, err
}

// backfillSchedule fires each slot of the spec in [StartAt, EndAt] with
// the request's overlap policy, oldest first, in one transaction.
func (s *Store) backfillSchedule(ctx context.Context, ns, id string, req api.ScheduleBackfillRequest) (api.ScheduleBackfillResponse, error) {
	out := api.ScheduleBackfillResponse{Started: []string{}}
	if req.EndAt.Before(req.StartAt) {
		return out, &storage.InvalidError{Field: "end_at", Message: "must not be before start_at"}
	}
	now := s.opts.Now().UTC()
	err := s.inTx(ctx, func(t *txn) error {
		sc, err := lockSchedule(ctx, t, ns, id)
		if err != nil {
			return err
		}
		overlap := req.OverlapPolicy
		if overlap == "" {
			overlap = sc.OverlapPolicy
		}
		var slots []time.Time
		for at := req.StartAt.Add(-time.Nanosecond); ; {
			next, err := sc.spec.Next(at)
			if err != nil || next.After(req.EndAt) {
				break
			}
			if len(slots) == storage.MaxBackfillSlots {
				return &storage.InvalidError{Field: "end_at", Message: fmt.Sprintf("the range holds more than %d slots", storage.MaxBackfillSlots)}
			}
			slots = append(slots, next)
			at = next
		}
		for _, slot := range slots {
			outcome, wf, err := s.fireSlot(ctx, t, ns, sc, slot, api.ScheduleActionBackfilled, overlap, now)
			if err != nil {
				return err
			}
			if outcome == api.TriggerStarted {
				out.Started = append(out.Started, wf)
			} else {
				out.Skipped++
			}
		}
		return sc.save(ctx, t, ns)
	})
	return out, err
}

// fireDueSchedule claims one due schedule (or one whose buffered slot may
// start) that no other transaction holds and fires its due slots in the
// claim's transaction. The namespaces are tried in turn (each claim names
// one: docs/architecture.md, "Distributed by namespace").
func (s *Store) fireDueSchedule(ctx context.Context) (found bool, err error) {
	nss, err := gen.New(s.pool).ListNamespaceNames(ctx)
	if err != nil {
		return false, fmt.Errorf("claim schedule: %w", err)
	}
	for _, ns := range nss {
		if found, err = s.fireDueIn(ctx, ns); found || err != nil {
			return found, err
		}
	}
	return false, nil
}

// fireDueIn is fireDueSchedule in namespace ns.
func (s *Store) fireDueIn(ctx context.Context, ns string) (found bool, err error) {
	now := s.opts.Now().UTC()
	err = s.inTx(ctx, func(t *txn) error {
		r, err := t.q.ClaimDueSchedule(ctx, gen.ClaimDueScheduleParams{Namespace: ns, Now: &now})
		if noRows(err) {
			r, err = t.q.ClaimBufferedSchedule(ctx, ns)
		}
		if noRows(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("claim schedule: %w", err)
		}
		found = true
		sc, err := decodeSchedule(r)
		if err != nil {
			return err
		}
		if err := s.fireDue(ctx, t, sc, now); err != nil {
			return fmt.Errorf("fire schedule %s/%s: %w", r.Namespace, r.ScheduleID, err)
		}
		return sc.save(ctx, t, r.Namespace)
	})
	return found, err
}

// nextScheduleWake is the earliest fire time of the unpaused schedules
// and whether a buffered slot waits.
func (s *Store) nextScheduleWake(ctx context.Context) (time.Time, bool, error) {
	r, err := gen.New(s.pool).NextScheduleFire(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next schedule fire: %w", err)
	}
	return r.NextFireAt, r.Buffered, nil
}

// fireDue fires a claimed schedule's buffered slot when nothing runs any
// more, then its due slots: those older than the catch-up window are
// counted missed, the others fire with the schedule's overlap policy.
func (s *Store) fireDue(ctx context.Context, t *txn, sc *scheduleRow, now time.Time) error {
	ns := sc.Namespace
	if sc.BufferedSlot != nil {
		running, err := t.q.RunningScheduleWorkflows(ctx, gen.RunningScheduleWorkflowsParams{Namespace: ns, ScheduleID: sc.ScheduleID, MaxRows: 1})
		if err != nil {
			return fmt.Errorf("running workflows: %w", err)
		}
		if len(running) == 0 {
			slot := *sc.BufferedSlot
			sc.BufferedSlot, sc.changed = nil, true
			if _, _, err := s.fireSlot(ctx, t, ns, sc, slot, api.ScheduleActionScheduled, api.OverlapAllowAll, now); err != nil {
				return err
			}
		}
	}
	fired, missed := 0, 0
	for sc.NextSlot != nil && sc.NextFireAt != nil && !sc.NextFireAt.After(now) && fired < maxSlotsPerFire {
		slot := *sc.NextSlot
		if now.Sub(*sc.NextFireAt) > sc.catchup {
			sc.MissedCatchup++
			missed++
			if missed >= maxMissedCount {
				// Jump to the window: the slots before it are missed too.
				sc.NextSlot, sc.NextFireAt = nextFire(sc.spec, sc.ScheduleID, now.Add(-sc.catchup), sc.RemainingActions)
				sc.changed = true
				continue
			}
		} else {
			fired++
			if _, _, err := s.fireSlot(ctx, t, ns, sc, slot, api.ScheduleActionScheduled, sc.OverlapPolicy, now); err != nil {
				return err
			}
			if sc.RemainingActions != nil {
				left := max(*sc.RemainingActions-1, 0)
				sc.RemainingActions = &left
			}
		}
		sc.NextSlot, sc.NextFireAt = nextFire(sc.spec, sc.ScheduleID, slot, sc.RemainingActions)
		sc.changed = true
	}
	return nil
}

// fireSlot applies the overlap policy to one slot and, unless it skips or
// buffers the slot, records the action and starts the slot's workflow.
// outcome is api.TriggerStarted, TriggerSkipped or TriggerBuffered.
func (s *Store) fireSlot(ctx context.Context, t *txn, ns string, sc *scheduleRow, slot time.Time, kind, overlap string, now time.Time) (outcome, workflowID string, err error) {
	if overlap != api.OverlapAllowAll {
		running, err := t.q.RunningScheduleWorkflows(ctx, gen.RunningScheduleWorkflowsParams{Namespace: ns, ScheduleID: sc.ScheduleID, MaxRows: scheduleRunningMax})
		if err != nil {
			return "", "", fmt.Errorf("running workflows: %w", err)
		}
		if len(running) > 0 {
			switch overlap {
			case api.OverlapSkip:
				sc.OverlapSkipped++
				sc.changed = true
				return api.TriggerSkipped, "", nil
			case api.OverlapBufferOne:
				sc.changed = true
				if sc.BufferedSlot == nil {
					sc.BufferedSlot = &slot
					return api.TriggerBuffered, "", nil
				}
				sc.OverlapSkipped++
				return api.TriggerSkipped, "", nil
			case api.OverlapCancelOther:
				for _, id := range running {
					if err := s.cancelForSchedule(ctx, t, ns, id, sc.ScheduleID); err != nil {
						return "", "", err
					}
				}
			case api.OverlapTerminateOther:
				if err := s.terminateForSchedule(ctx, t, ns, running, sc.ScheduleID); err != nil {
					return "", "", err
				}
			}
		}
	}
	prefix := sc.action.WorkflowIDPrefix
	if prefix == "" {
		prefix = sc.ScheduleID
	}
	id := engine.ScheduleWorkflowID(prefix, slot)
	n, err := t.q.InsertScheduleAction(ctx, gen.InsertScheduleActionParams{Namespace: ns, ScheduleID: sc.ScheduleID,
		SlotAt: slot, WorkflowID: id, Kind: kind, FiredAt: now})
	if err != nil {
		return "", "", fmt.Errorf("record schedule action: %w", err)
	}
	sc.changed = true
	if n == 0 {
		// The slot fired already (a backfill over fired slots).
		return api.TriggerSkipped, "", nil
	}
	a := sc.action
	started, err := startInstances(ctx, t, ns,
		[]startRow{newStartRow(id, a.WorkflowType, a.TaskQueue, a.Input, ms(a.ExecutionTimeout.D()), scheduledAttributes(sc.ScheduleID, slot), nil, nil)})
	if err != nil {
		return "", "", fmt.Errorf("start scheduled workflow: %w", err)
	}
	if _, ok := started[id]; !ok {
		// A running workflow holds the id: the slot's start is refused
		// by the instance's uniqueness, and its action names it.
		sc.OverlapSkipped++
		return api.TriggerSkipped, "", nil
	}
	if a.Concurrency != nil {
		// The action's concurrency limit, as a start's: the workflow
		// runs, waits for a slot, or is refused (cancel_newest: it is not
		// created, and the slot is skipped).
		err := s.admitConcurrency(ctx, t, ns, id, a.Concurrency)
		if errors.As(err, new(*storage.ConcurrencyLimitError)) {
			if err := t.w.DeleteInstanceMessages(ctx, gen.DeleteInstanceMessagesParams{Namespace: ns, InstanceIds: []string{id}}); err != nil {
				return "", "", fmt.Errorf("refused scheduled workflow: messages: %w", err)
			}
			if _, err := t.q.DeleteInstance(ctx, gen.DeleteInstanceParams{Namespace: ns, InstanceID: id}); err != nil {
				return "", "", fmt.Errorf("refused scheduled workflow: %w", err)
			}
			return api.TriggerSkipped, "", nil
		}
		if err != nil {
			return "", "", fmt.Errorf("start scheduled workflow: %w", err)
		}
	}
	sc.ActionsTaken++
	t.observe(observation{kind: observeStarted, ns: ns, typ: a.WorkflowType})
	return api.TriggerStarted, id, nil
}

// cancelForSchedule asks a running workflow of the schedule to cancel
// (overlap policy cancel_other), as CancelWorkflow does, in t.
func (s *Store) cancelForSchedule(ctx context.Context, t *txn, ns, id, scheduleID string) error {
	reason := "schedule " + scheduleID + ": overlap policy cancel_other"
	if stopped, err := stopWaitingCron(ctx, t, ns, id, reason); err != nil || stopped {
		return err
	}
	_, err := t.q.RequestCancel(ctx, gen.RequestCancelParams{Namespace: ns, InstanceID: id, Reason: &reason})
	if noRows(err) {
		return nil // it closed or was asked already
	}
	if err != nil {
		return fmt.Errorf("cancel workflow %s: %w", id, err)
	}
	_, err = s.enqueue(ctx, t, ns, []outMessage{eventMessage(id, nil, api.Event{Kind: api.EventCancelRequested, Reason: reason}, 0)})
	return err
}

// terminateForSchedule terminates the running workflows of the schedule
// (overlap policy terminate_other), as TerminateWorkflow does, in t.
func (s *Store) terminateForSchedule(ctx context.Context, t *txn, ns string, ids []string, scheduleID string) error {
	var rows []terminateRow
	for _, id := range ids {
		i, err := t.q.GetInstanceForUpdate(ctx, gen.GetInstanceForUpdateParams{Namespace: ns, InstanceID: id})
		if noRows(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("terminate workflow %s: %w", id, err)
		}
		if i.Status != api.StatusRunning {
			continue
		}
		rows = append(rows, terminateRow{InstanceID: id, ExecutionID: i.ExecutionID,
			WorkflowType: i.WorkflowType, Input: i.Input, NextEventID: i.NextEventID,
			NextActivityID: i.NextActivityID, NextTimerID: i.NextTimerID, LastEventAt: i.LastEventAt,
			Reason: api.CancelReasonWorkflowTerminated})
	}
	if err := s.terminateInstances(ctx, t, ns, rows, "schedule "+scheduleID+": overlap policy terminate_other", nil); err != nil {
		return fmt.Errorf("terminate workflows: %w", err)
	}
	return nil
}

// save writes what firing changed and trims the schedule's actions.
func (sc *scheduleRow) save(ctx context.Context, t *txn, ns string) error {
	if !sc.changed {
		return nil
	}
	if err := t.q.AdvanceSchedule(ctx, gen.AdvanceScheduleParams{Namespace: ns, ScheduleID: sc.ScheduleID,
		NextSlot: sc.NextSlot, NextFireAt: sc.NextFireAt, BufferedSlot: sc.BufferedSlot,
		RemainingActions: sc.RemainingActions, ActionsTaken: sc.ActionsTaken, OverlapSkipped: sc.OverlapSkipped,
		MissedCatchup: sc.MissedCatchup}); err != nil {
		return fmt.Errorf("advance schedule: %w", err)
	}
	if err := t.q.TrimScheduleActions(ctx, gen.TrimScheduleActionsParams{Namespace: ns, ScheduleID: sc.ScheduleID}); err != nil {
		return fmt.Errorf("trim schedule actions: %w", err)
	}
	return nil
}

// scheduledAttributes are the search attributes of the run a schedule
// starts for slot, in their stored form.
func scheduledAttributes(scheduleID string, slot time.Time) json.RawMessage {
	return mustJSON(map[string]string{api.SearchAttributeScheduledByID: scheduleID,
		api.SearchAttributeScheduledStartTime: slot.UTC().Format(visibility.DatetimeLayout)})
}
