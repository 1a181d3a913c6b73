package wf_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// sim is a test double of the server's side of workflow turns: it records
// history the way the protocol says the server does and hands out messages.
// It validates the commands it is given (id sequences, terminal last).
type sim struct {
	t        testing.TB
	history  []api.Event
	inbox    []api.Event
	now      time.Time
	acts     map[int64]*simActivity
	timers   map[int64]bool // created, not fired
	nextAct  int64
	nextTmr  int64
	canceled bool
	final    *api.Command
	turns    int
}

type simActivity struct {
	typ         string
	input       json.RawMessage
	taskQueue   string
	outstanding bool
	settled     bool
	// wait: scheduled with wait_for_cancellation; its cancel request
	// leaves it outstanding (the server's done is its outcome).
	wait bool
}

func newSim(t testing.TB, input any) *sim {
	s := &sim{t: t, now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), acts: map[int64]*simActivity{}, timers: map[int64]bool{}}
	raw, _ := json.Marshal(input)
	if input == nil {
		raw = nil
	}
	s.msg(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: "wf", TaskQueue: "q", Input: raw})
	return s
}

func (s *sim) msg(ev api.Event) {
	s.now = s.now.Add(time.Second)
	ev.Timestamp = s.now
	s.inbox = append(s.inbox, ev)
}

func (s *sim) append(ev api.Event) {
	ev.EventID = int64(len(s.history)) + 1
	if ev.Timestamp.IsZero() {
		ev.Timestamp = s.now
	}
	s.history = append(s.history, ev)
}

// complete delivers an activity result unless the server would drop it as
// stale (settled or cancel-requested).
func (s *sim) complete(id int64, result any) bool {
	a := s.acts[id]
	if a == nil || !a.outstanding {
		return false
	}
	raw, _ := json.Marshal(result)
	a.settled = true
	a.outstanding = false
	s.msg(api.Event{Kind: api.EventActivityCompleted, ActivityID: id, Result: raw})
	return true
}

func (s *sim) fail(id int64, e api.Error) bool {
	a := s.acts[id]
	if a == nil || !a.outstanding {
		return false
	}
	a.settled = true
	a.outstanding = false
	s.msg(api.Event{Kind: api.EventActivityFailed, ActivityID: id, Error: &e})
	return true
}

// canceledOutcome delivers ActivityCanceled for an activity that waits for
// its cancellation (what the server sends for a "Canceled" error, an
// attempt nobody held, a lost worker).
func (s *sim) canceledOutcome(id int64) bool {
	a := s.acts[id]
	if a == nil || !a.outstanding || !a.wait {
		return false
	}
	a.settled = true
	a.outstanding = false
	s.msg(api.Event{Kind: api.EventActivityCanceled, ActivityID: id, Error: &api.Error{Type: "Canceled", Message: "context canceled"}})
	return true
}

func (s *sim) fire(id int64) {
	if !s.timers[id] {
		s.t.Fatalf("timer %d not pending", id)
	}
	delete(s.timers, id)
	s.msg(api.Event{Kind: api.EventTimerFired, TimerID: id})
}

func (s *sim) signal(name string, v any) {
	raw, _ := json.Marshal(v)
	s.msg(api.Event{Kind: api.EventSignalReceived, SignalName: name, Input: raw})
}

func (s *sim) cancel(reason string) {
	s.msg(api.Event{Kind: api.EventCancelRequested, Reason: reason})
}

// outstanding returns the outstanding activity ids in order.
func (s *sim) outstanding() []int64 {
	var ids []int64
	for id, a := range s.acts {
		if a.outstanding {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// turn runs one turn through e and acknowledges it like the server.
func (s *sim) turn(e *workflow.Executor) *workflow.TurnResult {
	s.t.Helper()
	res, err := s.tryTurn(e)
	if err != nil {
		s.t.Fatalf("turn %d: %v", s.turns, err)
	}
	return res
}

func (s *sim) tryTurn(e *workflow.Executor) (*workflow.TurnResult, error) {
	s.t.Helper()
	if s.final != nil {
		s.t.Fatalf("turn after the execution ended")
	}
	s.turns++
	hist := s.history[:len(s.history):len(s.history)]
	msgs := s.inbox
	s.inbox = nil
	res, err := e.Turn(hist, msgs)
	if err != nil {
		s.inbox = append(msgs, s.inbox...) // a failed turn leaves its messages
		return nil, err
	}
	s.ack(msgs, res)
	return res, nil
}

func (s *sim) ack(msgs []api.Event, res *workflow.TurnResult) {
	s.t.Helper()
	cancel := false
	for i, m := range msgs {
		if i == 0 && len(msgs) > 1 {
			m.TurnMessages = len(msgs)
		}
		s.append(m)
		if m.Kind == api.EventCancelRequested {
			cancel = true
		}
	}
	if cancel && !s.canceled {
		s.canceled = true
		for _, id := range s.outstanding() {
			s.acts[id].outstanding = s.acts[id].wait
			s.append(api.Event{Kind: api.EventActivityCancelRequested, ActivityID: id, Reason: "workflow_canceled"})
		}
	}
	var terminal *api.Command
	for i, c := range res.Commands {
		if terminal != nil {
			s.t.Fatalf("command %d (%s) after terminal %s", i, c.Type, terminal.Type)
		}
		switch c.Type {
		case api.CommandScheduleActivity:
			if c.ActivityID != s.nextAct+1 {
				s.t.Fatalf("activity id %d, want %d", c.ActivityID, s.nextAct+1)
			}
			s.nextAct++
			s.acts[c.ActivityID] = &simActivity{typ: c.ActivityType, input: c.Input, taskQueue: c.TaskQueue, outstanding: true,
				wait: c.Options != nil && c.Options.WaitForCancellation}
			s.append(api.Event{Kind: api.EventActivityScheduled, ActivityID: c.ActivityID, ActivityType: c.ActivityType, TaskQueue: c.TaskQueue, Input: c.Input, Options: c.Options})
		case api.CommandStartTimer:
			if c.TimerID != s.nextTmr+1 {
				s.t.Fatalf("timer id %d, want %d", c.TimerID, s.nextTmr+1)
			}
			s.nextTmr++
			s.timers[c.TimerID] = true
			s.append(api.Event{Kind: api.EventTimerCreated, TimerID: c.TimerID, FireAfter: c.FireAfter})
		case api.CommandCancelTimer:
			if c.TimerID < 1 || c.TimerID > s.nextTmr {
				s.t.Fatalf("cancel of unknown timer %d", c.TimerID)
			}
			// Like the server: only a timer that has not fired is cancelled.
			if s.timers[c.TimerID] {
				delete(s.timers, c.TimerID)
				s.append(api.Event{Kind: api.EventTimerCanceled, TimerID: c.TimerID})
			}
		default:
			c := c
			terminal = &c
		}
	}
	for _, c := range res.ActivityCancels {
		a := s.acts[c.ActivityID]
		if a == nil {
			s.t.Fatalf("cancel of unknown activity %d", c.ActivityID)
		}
		if a.outstanding {
			a.outstanding = a.wait
			s.append(api.Event{Kind: api.EventActivityCancelRequested, ActivityID: c.ActivityID, Reason: c.Reason})
		}
	}
	if terminal != nil {
		reason := map[string]string{
			api.CommandCompleteWorkflow: "workflow_completed", api.CommandFailWorkflow: "workflow_failed",
			api.CommandCancelWorkflow: "workflow_canceled", api.CommandContinueAsNew: "continued_as_new",
		}[terminal.Type]
		for _, id := range s.outstanding() {
			s.acts[id].outstanding = false
			s.append(api.Event{Kind: api.EventActivityCancelRequested, ActivityID: id, Reason: reason})
		}
		switch terminal.Type {
		case api.CommandCompleteWorkflow:
			s.append(api.Event{Kind: api.EventWorkflowCompleted, Result: terminal.Result})
		case api.CommandFailWorkflow:
			s.append(api.Event{Kind: api.EventWorkflowFailed, Error: terminal.Error})
		case api.CommandCancelWorkflow:
			s.append(api.Event{Kind: api.EventWorkflowCanceled})
		case api.CommandContinueAsNew:
			s.append(api.Event{Kind: api.EventContinuedAsNew, NewExecutionID: 2, Input: terminal.Input})
		}
		s.final = terminal
	}
}

// driver runs turns either on one cached executor or on a fresh executor
// per turn (full replay), to check that both give the same commands.
type driver struct {
	t      testing.TB
	def    *workflow.Definition
	cached bool
	exec   *workflow.Executor
	opts   workflow.ExecutorOptions
}

func newDriver(t testing.TB, fn any, cached bool) *driver {
	t.Helper()
	def, err := workflow.NewDefinition(fn, "wf")
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{t: t, def: def, cached: cached, opts: workflow.ExecutorOptions{InstanceID: "i1", ExecutionID: 1, TaskQueue: "q"}}
	t.Cleanup(d.close)
	return d
}

func (d *driver) close() {
	if d.exec != nil {
		d.exec.Close()
		d.exec = nil
	}
}

// executor returns the executor for the next turn of s.
func (d *driver) executor(s *sim) *workflow.Executor {
	if d.exec != nil && d.cached {
		if !d.exec.Matches(s.history) {
			d.t.Fatalf("cached executor does not match the history (%d events, expected next id %d)", len(s.history), d.exec.NextEventID())
		}
		return d.exec
	}
	d.close()
	d.exec = workflow.NewExecutor(d.def, d.opts)
	return d.exec
}

func (d *driver) turn(s *sim) *workflow.TurnResult {
	d.t.Helper()
	return s.turn(d.executor(s))
}

// run drives s to the end, running activities with acts (by type) and
// firing timers as soon as they are created. It returns the final command.
func (d *driver) run(s *sim, acts map[string]func(json.RawMessage) (any, error)) *api.Command {
	d.t.Helper()
	for i := 0; s.final == nil; i++ {
		if i > 100000 {
			d.t.Fatal("workflow does not end")
		}
		if len(s.inbox) == 0 {
			d.t.Fatalf("turn %d: nothing to deliver and workflow not finished", s.turns)
		}
		res := d.turn(s)
		for _, c := range res.Commands {
			switch c.Type {
			case api.CommandScheduleActivity:
				fn := acts[c.ActivityType]
				if fn == nil {
					d.t.Fatalf("no activity %s", c.ActivityType)
				}
				v, err := fn(c.Input)
				if err != nil {
					s.fail(c.ActivityID, api.Error{Message: err.Error(), Type: "App"})
				} else {
					s.complete(c.ActivityID, v)
				}
			case api.CommandStartTimer:
				s.fire(c.TimerID)
			}
		}
	}
	return s.final
}

func commandTypes(cs []api.Command) []string {
	var out []string
	for _, c := range cs {
		switch c.Type {
		case api.CommandScheduleActivity:
			out = append(out, fmt.Sprintf("activity:%d:%s", c.ActivityID, c.ActivityType))
		case api.CommandStartTimer:
			out = append(out, fmt.Sprintf("timer:%d:%s", c.TimerID, c.FireAfter.D()))
		case api.CommandCancelTimer:
			out = append(out, fmt.Sprintf("cancel_timer:%d", c.TimerID))
		default:
			out = append(out, c.Type)
		}
	}
	return out
}
