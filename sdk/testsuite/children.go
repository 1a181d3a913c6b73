package testsuite

import (
	"errors"
	"fmt"
	"slices"

	"github.com/robfig/cron/v3"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Child workflows: the executions a workflow starts, mocked or
// registered, and what their parent learns of them.

// startChild starts a child execution: the mock of its type when it has
// expectations (OnWorkflow), else the registered workflow.
func (x *execution) startChild(c *api.Command) {
	e := x.e
	if e.find(c.WorkflowID) != nil {
		x.deliver(api.Event{Kind: api.EventStartChildWorkflowFailed, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID})
		return
	}
	var def *wf.Definition
	if e.mockedWorkflows[c.WorkflowType] {
		def = e.mockWorkflowDef(c.WorkflowType)
	} else {
		def = e.reg.workflow(c.WorkflowType)
	}
	if def == nil {
		x.deliver(api.Event{Kind: api.EventChildWorkflowStarted, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID})
		x.deliver(api.Event{Kind: api.EventChildWorkflowFailed, ChildID: c.ChildID, ChildWorkflowID: c.WorkflowID,
			Error: &api.Error{Type: "WorkflowTypeNotRegistered", Message: fmt.Sprintf("unable to find workflow type: %s. Supported types: [%s]", c.WorkflowType, e.reg.workflowTypes())}})
		return
	}
	tq := c.TaskQueue
	if tq == "" {
		tq = x.taskQueue
	}
	ch := e.newExecution(def, c.WorkflowID, tq)
	ch.parent, ch.childID, ch.policy = x, c.ChildID, c.ParentClosePolicy
	x.children[c.ChildID] = ch
	ch.cron, ch.runTimeout = c.CronSchedule, c.ExecutionTimeout.D()
	if d := c.ExecutionTimeout.D(); d > 0 {
		ch.startRunTimeout(d)
	}
	ch.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: c.WorkflowType, TaskQueue: tq, Input: c.Input,
		ParentWorkflowID: x.id, ParentExecutionID: x.runID, SearchAttributes: c.SearchAttributes, Memo: c.Memo, Header: c.Header})
	x.deliver(api.Event{Kind: api.EventChildWorkflowStarted, ChildID: c.ChildID, ChildWorkflowID: ch.id, ChildExecutionID: ch.runID})
}

// childClosed tells the parent how its child ended. A child that
// continued as new goes on as a new execution of the same id.
func (x *execution) childClosed(ch *execution) {
	if x.done {
		return
	}
	if ch.cron != "" && x.nextCronRun(ch) {
		return
	}
	ev := api.Event{ChildID: ch.childID, ChildWorkflowID: ch.id, ChildExecutionID: ch.runID}
	switch {
	case ch.closed == nil && ch.err != nil && errors.Is(ch.err, wf.ErrChildWorkflowTerminated):
		ev.Kind = api.EventChildWorkflowTerminated
	case ch.closed == nil:
		ev.Kind = api.EventChildWorkflowFailed
		e := errconv.ToAPI(ch.err.(*wf.WorkflowExecutionError).Cause)
		ev.Error = &e
	case ch.closed.Type == api.CommandCompleteWorkflow:
		ev.Kind, ev.Result = api.EventChildWorkflowCompleted, ch.result
	case ch.closed.Type == api.CommandFailWorkflow && ch.closed.Error != nil && ch.closed.Error.Type == mockStartTypeName:
		// The mock failed the start: the parent learns nothing else.
		x.inbox = slices.DeleteFunc(x.inbox, func(m api.Event) bool {
			return m.Kind == api.EventChildWorkflowStarted && m.ChildID == ch.childID
		})
		ev.Kind = api.EventStartChildWorkflowFailed
	case ch.closed.Type == api.CommandFailWorkflow:
		ev.Kind, ev.Error = api.EventChildWorkflowFailed, ch.closed.Error
	case ch.closed.Type == api.CommandCancelWorkflow:
		ev.Kind = api.EventChildWorkflowCanceled
	case ch.closed.Type == api.CommandContinueAsNew:
		x.continueChild(ch)
		return
	}
	delete(x.children, ch.childID)
	x.deliver(ev)
}

func (x *execution) continueChild(ch *execution) {
	e := x.e
	typ := ch.closed.WorkflowType
	if typ == "" {
		typ = ch.wfType
	}
	var def *wf.Definition
	if e.mockedWorkflows[typ] {
		def = e.mockWorkflowDef(typ)
	} else {
		def = e.reg.workflow(typ)
	}
	if def == nil {
		delete(x.children, ch.childID)
		x.deliver(api.Event{Kind: api.EventChildWorkflowFailed, ChildID: ch.childID, ChildWorkflowID: ch.id,
			Error: &api.Error{Type: "WorkflowTypeNotRegistered", Message: "unable to find workflow type: " + typ}})
		return
	}
	next := e.newExecution(def, ch.id, ch.taskQueue)
	next.parent, next.childID, next.policy = x, ch.childID, ch.policy
	x.children[ch.childID] = next
	next.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: typ, TaskQueue: ch.taskQueue, Input: ch.closed.Input,
		ParentWorkflowID: x.id, ParentExecutionID: x.runID, ContinuedFromExecutionID: ch.runID, Header: ch.closed.Header})
}

// nextCronRun schedules the next run of a cron child whose run completed
// or failed, at the schedule's next time after now (the first run starts
// at once, as in Temporal's test environment), with the last completed
// run's result; the parent sees the child running meanwhile. It reports
// whether it did (not for a cancelled or terminated run, nor a
// continue-as-new).
func (x *execution) nextCronRun(ch *execution) bool {
	completed := ch.closed != nil && ch.closed.Type == api.CommandCompleteWorkflow
	failed := ch.closed != nil && ch.closed.Type == api.CommandFailWorkflow &&
		(ch.closed.Error == nil || ch.closed.Error.Type != mockStartTypeName) ||
		ch.closed == nil && ch.err != nil && !errors.Is(ch.err, wf.ErrChildWorkflowTerminated)
	if !completed && !failed || ch.canceled {
		return false
	}
	sched, err := cron.ParseStandard(ch.cron)
	if err != nil {
		return false
	}
	last := ch.cronLast
	if completed {
		last = ch.result
	}
	e := x.e
	e.addTimer(sched.Next(e.now.UTC()), func() {
		if x.done || x.children[ch.childID] != ch {
			return
		}
		def := e.reg.workflow(ch.wfType)
		if e.mockedWorkflows[ch.wfType] {
			def = e.mockWorkflowDef(ch.wfType)
		}
		if def == nil {
			return
		}
		next := e.newExecution(def, ch.id, ch.taskQueue)
		next.parent, next.childID, next.policy = x, ch.childID, ch.policy
		next.cron, next.runTimeout, next.cronLast = ch.cron, ch.runTimeout, last
		x.children[ch.childID] = next
		if ch.runTimeout > 0 {
			next.startRunTimeout(ch.runTimeout)
		}
		next.deliver(api.Event{Kind: api.EventWorkflowStarted, WorkflowType: ch.wfType, TaskQueue: ch.taskQueue,
			Input: ch.startInput, ParentWorkflowID: x.id, ParentExecutionID: x.runID, ContinuedFromExecutionID: ch.runID,
			LastCompletionResult: last})
	})
	return true
}
