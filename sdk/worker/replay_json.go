package worker

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/log"
)

// ReplayWorkflowHistoryFromJSONFile replays the history in the JSON file
// jsonfileName as ReplayWorkflowHistory does (Temporal's method of the same
// name). The file is either Tether's history (`tether workflow show
// --output json`, a client.History answer, or a JSON array of events) or a
// Temporal history as Temporal's CLI and web UI export it (`temporal
// workflow show --output json`), which is translated into Tether's events
// first (HistoryFromJSON says which events it reads). logger may be nil.
func (r *WorkflowReplayer) ReplayWorkflowHistoryFromJSONFile(logger log.Logger, jsonfileName string) error {
	return r.ReplayPartialWorkflowHistoryFromJSONFile(logger, jsonfileName, 0)
}

// ReplayPartialWorkflowHistoryFromJSONFile is ReplayWorkflowHistoryFromJSONFile
// over the events up to lastEventID (Temporal's event ids for a Temporal
// history, Tether's for Tether's; 0: all of them).
func (r *WorkflowReplayer) ReplayPartialWorkflowHistoryFromJSONFile(logger log.Logger, jsonfileName string, lastEventID int64) error {
	f, err := os.Open(jsonfileName)
	if err != nil {
		return fmt.Errorf("worker: replay: %w", err)
	}
	defer func() { _ = f.Close() }()
	events, err := historyFromJSON(f, lastEventID)
	if err != nil {
		return fmt.Errorf("worker: replay %s: %w", jsonfileName, err)
	}
	return r.ReplayWorkflowHistory(log.ToSlog(logger), events)
}

// HistoryFromJSON reads a history in JSON: Tether's (an object with an
// "events" array of api.Event, or the array itself) or Temporal's export
// (an object with an "events" array of Temporal's history events).
//
// Of a Temporal history it reads the events a workflow's code can replay:
// WorkflowExecutionStarted, the activity task events (scheduled, completed,
// failed, timed out, cancel requested, canceled), the timer events,
// WorkflowExecutionSignaled, WorkflowExecutionCancelRequested, the child
// workflow events, the external signal and cancel events,
// UpsertWorkflowSearchAttributes, WorkflowPropertiesModified (memo) and the
// closing events; the workflow task events and ActivityTaskStarted only
// delimit turns. Payloads must be Temporal's json/plain or binary/null
// encodings (an encoded payload needs its codec first). Any other event
// (a marker: SideEffect, GetVersion, a local activity; an update; Nexus)
// is refused with an error naming it, rather than replayed wrongly.
func HistoryFromJSON(r io.Reader) ([]api.Event, error) { return historyFromJSON(r, 0) }

func historyFromJSON(r io.Reader, lastEventID int64) ([]api.Event, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	raw = bytes.TrimSpace(raw)
	var doc struct {
		Events []json.RawMessage `json:"events"`
	}
	if len(raw) > 0 && raw[0] == '[' {
		err = json.Unmarshal(raw, &doc.Events)
	} else {
		err = json.Unmarshal(raw, &doc)
	}
	if err != nil {
		return nil, fmt.Errorf("decode history: %w", err)
	}
	if len(doc.Events) == 0 {
		return nil, errors.New("the history has no events")
	}
	var probe struct {
		Kind      string `json:"kind"`
		EventType string `json:"eventType"`
	}
	if err := json.Unmarshal(doc.Events[0], &probe); err != nil {
		return nil, fmt.Errorf("decode event 1: %w", err)
	}
	if probe.EventType == "" {
		events := make([]api.Event, 0, len(doc.Events))
		for i, e := range doc.Events {
			var ev api.Event
			if err := json.Unmarshal(e, &ev); err != nil {
				return nil, fmt.Errorf("decode event %d: %w", i+1, err)
			}
			if lastEventID > 0 && ev.EventID > lastEventID {
				break
			}
			events = append(events, ev)
		}
		return events, nil
	}
	tr := newTemporalHistory()
	for i, e := range doc.Events {
		var ev temporalEvent
		if err := json.Unmarshal(e, &ev); err != nil {
			return nil, fmt.Errorf("decode event %d: %w", i+1, err)
		}
		if lastEventID > 0 && int64(ev.EventID) > lastEventID {
			break
		}
		if err := tr.add(&ev); err != nil {
			return nil, fmt.Errorf("event %d (%s): %w", ev.EventID, ev.EventType, err)
		}
	}
	tr.closeTurn()
	return tr.events, nil
}

// int64String is an int64 written as a JSON string (protobuf JSON's 64-bit
// integers) or a number.
type int64String int64

func (n *int64String) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("an integer: %w", err)
	}
	*n = int64String(v)
	return nil
}

type temporalPayload struct {
	Metadata map[string]string `json:"metadata"`
	Data     string            `json:"data"`
}

type temporalPayloads struct {
	Payloads []temporalPayload `json:"payloads"`
}

type temporalName struct {
	Name string `json:"name"`
}

type temporalExecution struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
}

type temporalFailure struct {
	Message                string           `json:"message"`
	StackTrace             string           `json:"stackTrace"`
	Cause                  *temporalFailure `json:"cause"`
	ApplicationFailureInfo *struct {
		Type         string            `json:"type"`
		NonRetryable bool              `json:"nonRetryable"`
		Details      *temporalPayloads `json:"details"`
	} `json:"applicationFailureInfo"`
	TimeoutFailureInfo *struct {
		TimeoutType string `json:"timeoutType"`
	} `json:"timeoutFailureInfo"`
	CanceledFailureInfo *struct {
		Details *temporalPayloads `json:"details"`
	} `json:"canceledFailureInfo"`
}

// temporalEvent holds the attributes of the events HistoryFromJSON reads
// (protobuf JSON names; only the fields it uses).
type temporalEvent struct {
	EventID   int64String `json:"eventId"`
	EventTime time.Time   `json:"eventTime"`
	EventType string      `json:"eventType"`

	WorkflowExecutionStarted *struct {
		WorkflowType            temporalName                `json:"workflowType"`
		TaskQueue               temporalName                `json:"taskQueue"`
		Input                   *temporalPayloads           `json:"input"`
		OriginalExecutionRunID  string                      `json:"originalExecutionRunId"`
		ContinuedExecutionRunID string                      `json:"continuedExecutionRunId"`
		ParentWorkflowExecution *temporalExecution          `json:"parentWorkflowExecution"`
		LastCompletionResult    *temporalPayloads           `json:"lastCompletionResult"`
		Attempt                 int32                       `json:"attempt"`
		Memo                    *struct{ Fields fieldsMap } `json:"memo"`
		SearchAttributes        *struct {
			IndexedFields fieldsMap `json:"indexedFields"`
		} `json:"searchAttributes"`
	} `json:"workflowExecutionStartedEventAttributes"`
	ActivityTaskScheduled *struct {
		ActivityID   string            `json:"activityId"`
		ActivityType temporalName      `json:"activityType"`
		TaskQueue    temporalName      `json:"taskQueue"`
		Input        *temporalPayloads `json:"input"`
	} `json:"activityTaskScheduledEventAttributes"`
	ActivityTaskCompleted *struct {
		Result           *temporalPayloads `json:"result"`
		ScheduledEventID int64String       `json:"scheduledEventId"`
	} `json:"activityTaskCompletedEventAttributes"`
	ActivityTaskFailed *struct {
		Failure          *temporalFailure `json:"failure"`
		ScheduledEventID int64String      `json:"scheduledEventId"`
	} `json:"activityTaskFailedEventAttributes"`
	ActivityTaskTimedOut *struct {
		Failure          *temporalFailure `json:"failure"`
		ScheduledEventID int64String      `json:"scheduledEventId"`
	} `json:"activityTaskTimedOutEventAttributes"`
	ActivityTaskCancelRequested *struct {
		ScheduledEventID int64String `json:"scheduledEventId"`
	} `json:"activityTaskCancelRequestedEventAttributes"`
	ActivityTaskCanceled *struct {
		ScheduledEventID int64String `json:"scheduledEventId"`
	} `json:"activityTaskCanceledEventAttributes"`
	TimerStarted *struct {
		TimerID            string `json:"timerId"`
		StartToFireTimeout string `json:"startToFireTimeout"`
	} `json:"timerStartedEventAttributes"`
	TimerFired *struct {
		TimerID string `json:"timerId"`
	} `json:"timerFiredEventAttributes"`
	TimerCanceled *struct {
		TimerID string `json:"timerId"`
	} `json:"timerCanceledEventAttributes"`
	WorkflowExecutionSignaled *struct {
		SignalName string            `json:"signalName"`
		Input      *temporalPayloads `json:"input"`
	} `json:"workflowExecutionSignaledEventAttributes"`
	WorkflowExecutionCancelRequested *struct {
		Cause string `json:"cause"`
	} `json:"workflowExecutionCancelRequestedEventAttributes"`
	WorkflowExecutionCompleted *struct {
		Result *temporalPayloads `json:"result"`
	} `json:"workflowExecutionCompletedEventAttributes"`
	WorkflowExecutionFailed *struct {
		Failure *temporalFailure `json:"failure"`
	} `json:"workflowExecutionFailedEventAttributes"`
	WorkflowExecutionContinuedAsNew *struct {
		NewExecutionRunID string            `json:"newExecutionRunId"`
		WorkflowType      temporalName      `json:"workflowType"`
		Input             *temporalPayloads `json:"input"`
	} `json:"workflowExecutionContinuedAsNewEventAttributes"`
	WorkflowExecutionTerminated *struct {
		Reason string `json:"reason"`
	} `json:"workflowExecutionTerminatedEventAttributes"`
	StartChildWorkflowExecutionInitiated *struct {
		WorkflowID   string            `json:"workflowId"`
		WorkflowType temporalName      `json:"workflowType"`
		TaskQueue    temporalName      `json:"taskQueue"`
		Input        *temporalPayloads `json:"input"`
	} `json:"startChildWorkflowExecutionInitiatedEventAttributes"`
	SignalExternalInitiated *struct {
		WorkflowExecution temporalExecution `json:"workflowExecution"`
		SignalName        string            `json:"signalName"`
		Input             *temporalPayloads `json:"input"`
	} `json:"signalExternalWorkflowExecutionInitiatedEventAttributes"`
	CancelExternalInitiated *struct {
		WorkflowExecution temporalExecution `json:"workflowExecution"`
	} `json:"requestCancelExternalWorkflowExecutionInitiatedEventAttributes"`
	ExternalSignaled *struct {
		InitiatedEventID int64String `json:"initiatedEventId"`
	} `json:"externalWorkflowExecutionSignaledEventAttributes"`
	ExternalCancelRequested *struct {
		InitiatedEventID int64String `json:"initiatedEventId"`
	} `json:"externalWorkflowExecutionCancelRequestedEventAttributes"`
	SignalExternalFailed *struct {
		InitiatedEventID int64String `json:"initiatedEventId"`
	} `json:"signalExternalWorkflowExecutionFailedEventAttributes"`
	CancelExternalFailed *struct {
		InitiatedEventID int64String `json:"initiatedEventId"`
	} `json:"requestCancelExternalWorkflowExecutionFailedEventAttributes"`
	UpsertSearchAttributes *struct {
		SearchAttributes struct {
			IndexedFields fieldsMap `json:"indexedFields"`
		} `json:"searchAttributes"`
	} `json:"upsertWorkflowSearchAttributesEventAttributes"`
	PropertiesModified *struct {
		UpsertedMemo *struct{ Fields fieldsMap } `json:"upsertedMemo"`
	} `json:"workflowPropertiesModifiedEventAttributes"`

	// The child workflow events other than the initiated one share
	// these attributes.
	ChildStarted    *childAttrs `json:"childWorkflowExecutionStartedEventAttributes"`
	ChildStartFail  *childAttrs `json:"startChildWorkflowExecutionFailedEventAttributes"`
	ChildCompleted  *childAttrs `json:"childWorkflowExecutionCompletedEventAttributes"`
	ChildFailed     *childAttrs `json:"childWorkflowExecutionFailedEventAttributes"`
	ChildCanceled   *childAttrs `json:"childWorkflowExecutionCanceledEventAttributes"`
	ChildTerminated *childAttrs `json:"childWorkflowExecutionTerminatedEventAttributes"`
	ChildTimedOut   *childAttrs `json:"childWorkflowExecutionTimedOutEventAttributes"`
}

type childAttrs struct {
	InitiatedEventID  int64String       `json:"initiatedEventId"`
	WorkflowID        string            `json:"workflowId"`
	WorkflowExecution temporalExecution `json:"workflowExecution"`
	WorkflowType      temporalName      `json:"workflowType"`
	Result            *temporalPayloads `json:"result"`
	Failure           *temporalFailure  `json:"failure"`
	Cause             string            `json:"cause"`
}

// fieldsMap is a protobuf map of payloads (memo fields, search attributes).
type fieldsMap map[string]temporalPayload

// temporalHistory translates Temporal's events into Tether's, numbering
// activities, timers, children and external requests as Tether's SDK
// numbers its commands (each kind from 1, in the order they were issued).
type temporalHistory struct {
	events                     []api.Event
	activities                 map[int64]int64  // scheduled event id → activity id
	actTypes                   map[int64]string // activity id → type
	timers                     map[string]int64 // Temporal timer id → timer id
	children                   map[int64]int64  // initiated event id → child id
	childTypes                 map[int64]string // child id → workflow type
	externals                  map[int64]int64  // initiated event id → external id
	nAct, nTimer, nChild, nExt int64
	// turnStart is the index of the first message event since the last
	// workflow task started: a Temporal workflow task delivers them
	// together, as one of Tether's turns.
	turnStart int
}

func newTemporalHistory() *temporalHistory {
	return &temporalHistory{
		activities: map[int64]int64{}, actTypes: map[int64]string{}, timers: map[string]int64{},
		children: map[int64]int64{}, childTypes: map[int64]string{}, externals: map[int64]int64{},
	}
}

// closeTurn marks the message events since the last workflow task as one
// turn's.
func (t *temporalHistory) closeTurn() {
	first, n := -1, 0
	for i := t.turnStart; i < len(t.events); i++ {
		if isMessageEvent(t.events[i].Kind) {
			if first < 0 {
				first = i
			}
			n++
		}
	}
	if n > 1 {
		t.events[first].TurnMessages = n
	}
	t.turnStart = len(t.events)
}

// isMessageEvent mirrors the executor's message kinds: events that open a
// turn rather than record a command.
func isMessageEvent(kind string) bool {
	switch kind {
	case api.EventWorkflowStarted, api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled, api.EventTimerFired,
		api.EventSignalReceived, api.EventCancelRequested, api.EventExternalCompleted, api.EventExternalFailed,
		api.EventChildWorkflowStarted, api.EventStartChildWorkflowFailed, api.EventChildWorkflowCompleted, api.EventChildWorkflowFailed,
		api.EventChildWorkflowCanceled, api.EventChildWorkflowTerminated:
		return true
	}
	return false
}

// eventTypeName turns EVENT_TYPE_WORKFLOW_EXECUTION_STARTED (newer
// exports) into WorkflowExecutionStarted (older ones).
func eventTypeName(s string) string {
	if !strings.HasPrefix(s, "EVENT_TYPE_") {
		return s
	}
	var b strings.Builder
	for _, w := range strings.Split(strings.TrimPrefix(s, "EVENT_TYPE_"), "_") {
		if w == "" {
			continue
		}
		r := []rune(strings.ToLower(w))
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

func (t *temporalHistory) emit(ev api.Event) {
	ev.EventID = int64(len(t.events) + 1)
	t.events = append(t.events, ev)
}

func (t *temporalHistory) add(te *temporalEvent) error {
	ev := api.Event{Timestamp: te.EventTime}
	var err error
	switch typ := eventTypeName(te.EventType); typ {
	case "WorkflowTaskScheduled", "WorkflowTaskCompleted", "WorkflowTaskTimedOut", "WorkflowTaskFailed",
		"ActivityTaskStarted":
		return nil
	case "WorkflowTaskStarted":
		t.closeTurn()
		return nil
	case "WorkflowExecutionStarted":
		a := te.WorkflowExecutionStarted
		if a == nil {
			return errors.New("no attributes")
		}
		ev.Kind, ev.WorkflowType, ev.TaskQueue, ev.RunID = api.EventWorkflowStarted, a.WorkflowType.Name, a.TaskQueue.Name, a.OriginalExecutionRunID
		ev.ContinuedFromRunID = a.ContinuedExecutionRunID
		if p := a.ParentWorkflowExecution; p != nil {
			ev.ParentWorkflowID, ev.ParentRunID = p.WorkflowID, p.RunID
		}
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
		if ev.LastCompletionResult, err = payloadsJSON(a.LastCompletionResult); err != nil {
			return err
		}
		if a.Memo != nil {
			if ev.Memo, err = fieldsJSON(a.Memo.Fields); err != nil {
				return err
			}
		}
		if a.SearchAttributes != nil {
			if ev.SearchAttributes, err = fieldsJSON(a.SearchAttributes.IndexedFields); err != nil {
				return err
			}
		}
	case "ActivityTaskScheduled":
		a := te.ActivityTaskScheduled
		if a == nil {
			return errors.New("no attributes")
		}
		t.nAct++
		t.activities[int64(te.EventID)] = t.nAct
		t.actTypes[t.nAct] = a.ActivityType.Name
		ev.Kind, ev.ActivityID, ev.ActivityType, ev.TaskQueue = api.EventActivityScheduled, t.nAct, a.ActivityType.Name, a.TaskQueue.Name
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
	case "ActivityTaskCompleted":
		a := te.ActivityTaskCompleted
		if a == nil {
			return errors.New("no attributes")
		}
		ev.Kind = api.EventActivityCompleted
		if ev.ActivityID, err = t.activity(a.ScheduledEventID); err != nil {
			return err
		}
		if ev.Result, err = payloadsJSON(a.Result); err != nil {
			return err
		}
	case "ActivityTaskFailed", "ActivityTaskTimedOut":
		var sched int64String
		var f *temporalFailure
		switch {
		case te.ActivityTaskFailed != nil:
			sched, f = te.ActivityTaskFailed.ScheduledEventID, te.ActivityTaskFailed.Failure
		case te.ActivityTaskTimedOut != nil:
			sched, f = te.ActivityTaskTimedOut.ScheduledEventID, te.ActivityTaskTimedOut.Failure
		default:
			return errors.New("no attributes")
		}
		ev.Kind = api.EventActivityFailed
		if ev.ActivityID, err = t.activity(sched); err != nil {
			return err
		}
		if ev.Error, err = failureOf(f); err != nil {
			return err
		}
	case "ActivityTaskCancelRequested":
		if te.ActivityTaskCancelRequested == nil {
			return errors.New("no attributes")
		}
		ev.Kind = api.EventActivityCancelRequested
		if ev.ActivityID, err = t.activity(te.ActivityTaskCancelRequested.ScheduledEventID); err != nil {
			return err
		}
	case "ActivityTaskCanceled":
		if te.ActivityTaskCanceled == nil {
			return errors.New("no attributes")
		}
		ev.Kind = api.EventActivityCanceled
		if ev.ActivityID, err = t.activity(te.ActivityTaskCanceled.ScheduledEventID); err != nil {
			return err
		}
	case "TimerStarted":
		a := te.TimerStarted
		if a == nil {
			return errors.New("no attributes")
		}
		d, err := protoDuration(a.StartToFireTimeout)
		if err != nil {
			return fmt.Errorf("startToFireTimeout: %w", err)
		}
		t.nTimer++
		t.timers[a.TimerID] = t.nTimer
		ev.Kind, ev.TimerID, ev.FireAfter = api.EventTimerCreated, t.nTimer, api.Duration(d)
	case "TimerFired", "TimerCanceled":
		var id string
		ev.Kind = api.EventTimerFired
		switch {
		case te.TimerFired != nil:
			id = te.TimerFired.TimerID
		case te.TimerCanceled != nil:
			id, ev.Kind = te.TimerCanceled.TimerID, api.EventTimerCanceled
		default:
			return errors.New("no attributes")
		}
		n, ok := t.timers[id]
		if !ok {
			return fmt.Errorf("timer %q was not started", id)
		}
		ev.TimerID = n
	case "WorkflowExecutionSignaled":
		a := te.WorkflowExecutionSignaled
		if a == nil {
			return errors.New("no attributes")
		}
		ev.Kind, ev.SignalName = api.EventSignalReceived, a.SignalName
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
	case "WorkflowExecutionCancelRequested":
		ev.Kind = api.EventCancelRequested
		if a := te.WorkflowExecutionCancelRequested; a != nil {
			ev.Reason = a.Cause
		}
	case "WorkflowExecutionCompleted":
		ev.Kind = api.EventWorkflowCompleted
		if a := te.WorkflowExecutionCompleted; a != nil {
			if ev.Result, err = payloadsJSON(a.Result); err != nil {
				return err
			}
		}
	case "WorkflowExecutionFailed":
		ev.Kind = api.EventWorkflowFailed
		if a := te.WorkflowExecutionFailed; a != nil {
			if ev.Error, err = failureOf(a.Failure); err != nil {
				return err
			}
		}
	case "WorkflowExecutionCanceled":
		ev.Kind = api.EventWorkflowCanceled
	case "WorkflowExecutionTimedOut":
		ev.Kind = api.EventWorkflowFailed
		ev.Error = &api.Error{Message: "workflow execution timed out", Type: api.ErrorTypeTimeout}
	case "WorkflowExecutionTerminated":
		ev.Kind = api.EventWorkflowTerminated
		if a := te.WorkflowExecutionTerminated; a != nil {
			ev.Reason = a.Reason
		}
	case "WorkflowExecutionContinuedAsNew":
		a := te.WorkflowExecutionContinuedAsNew
		if a == nil {
			return errors.New("no attributes")
		}
		ev.Kind, ev.WorkflowType, ev.NewRunID = api.EventContinuedAsNew, a.WorkflowType.Name, a.NewExecutionRunID
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
	case "StartChildWorkflowExecutionInitiated":
		a := te.StartChildWorkflowExecutionInitiated
		if a == nil {
			return errors.New("no attributes")
		}
		t.nChild++
		t.children[int64(te.EventID)] = t.nChild
		t.childTypes[t.nChild] = a.WorkflowType.Name
		ev.Kind, ev.ChildID, ev.ChildWorkflowID, ev.WorkflowType, ev.TaskQueue = api.EventChildWorkflowInitiated, t.nChild, a.WorkflowID, a.WorkflowType.Name, a.TaskQueue.Name
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
	case "ChildWorkflowExecutionStarted", "StartChildWorkflowExecutionFailed", "ChildWorkflowExecutionCompleted",
		"ChildWorkflowExecutionFailed", "ChildWorkflowExecutionCanceled", "ChildWorkflowExecutionTerminated",
		"ChildWorkflowExecutionTimedOut":
		return t.child(typ, te, ev)
	case "SignalExternalWorkflowExecutionInitiated":
		a := te.SignalExternalInitiated
		if a == nil {
			return errors.New("no attributes")
		}
		t.nExt++
		t.externals[int64(te.EventID)] = t.nExt
		ev.Kind, ev.ExternalID, ev.SignalName = api.EventExternalSignalInitiated, t.nExt, a.SignalName
		ev.TargetInstanceID, ev.TargetRunID = a.WorkflowExecution.WorkflowID, a.WorkflowExecution.RunID
		if ev.Input, err = payloadsJSON(a.Input); err != nil {
			return err
		}
	case "RequestCancelExternalWorkflowExecutionInitiated":
		a := te.CancelExternalInitiated
		if a == nil {
			return errors.New("no attributes")
		}
		t.nExt++
		t.externals[int64(te.EventID)] = t.nExt
		ev.Kind, ev.ExternalID = api.EventExternalCancelInitiated, t.nExt
		ev.TargetInstanceID, ev.TargetRunID = a.WorkflowExecution.WorkflowID, a.WorkflowExecution.RunID
	case "ExternalWorkflowExecutionSignaled", "ExternalWorkflowExecutionCancelRequested",
		"SignalExternalWorkflowExecutionFailed", "RequestCancelExternalWorkflowExecutionFailed":
		var init int64String
		ev.Kind = api.EventExternalCompleted
		switch {
		case te.ExternalSignaled != nil:
			init = te.ExternalSignaled.InitiatedEventID
		case te.ExternalCancelRequested != nil:
			init = te.ExternalCancelRequested.InitiatedEventID
		case te.SignalExternalFailed != nil:
			init, ev.Kind = te.SignalExternalFailed.InitiatedEventID, api.EventExternalFailed
		case te.CancelExternalFailed != nil:
			init, ev.Kind = te.CancelExternalFailed.InitiatedEventID, api.EventExternalFailed
		default:
			return errors.New("no attributes")
		}
		n, ok := t.externals[int64(init)]
		if !ok {
			return fmt.Errorf("initiated event %d is not an external request", init)
		}
		ev.ExternalID = n
		if ev.Kind == api.EventExternalFailed {
			ev.Error = &api.Error{Message: "unknown external workflow execution"}
		}
	case "UpsertWorkflowSearchAttributes":
		a := te.UpsertSearchAttributes
		if a == nil {
			return errors.New("no attributes")
		}
		ev.Kind = api.EventUpsertWorkflowSearchAttributes
		if ev.SearchAttributes, err = fieldsJSON(a.SearchAttributes.IndexedFields); err != nil {
			return err
		}
	case "WorkflowPropertiesModified":
		a := te.PropertiesModified
		if a == nil || a.UpsertedMemo == nil {
			return errors.New("no memo")
		}
		ev.Kind = api.EventUpsertWorkflowMemo
		if ev.Memo, err = fieldsJSON(a.UpsertedMemo.Fields); err != nil {
			return err
		}
	default:
		return errors.New("the replayer does not read this kind of Temporal event (markers — SideEffect, GetVersion, local activities —, updates and Nexus are Tether's own in its histories)")
	}
	t.emit(ev)
	return nil
}

// child translates a child workflow event other than the initiated one.
func (t *temporalHistory) child(typ string, te *temporalEvent, ev api.Event) error {
	var a *childAttrs
	for _, c := range []struct {
		a    *childAttrs
		kind string
	}{
		{te.ChildStarted, api.EventChildWorkflowStarted}, {te.ChildStartFail, api.EventStartChildWorkflowFailed},
		{te.ChildCompleted, api.EventChildWorkflowCompleted}, {te.ChildFailed, api.EventChildWorkflowFailed},
		{te.ChildCanceled, api.EventChildWorkflowCanceled}, {te.ChildTerminated, api.EventChildWorkflowTerminated},
		{te.ChildTimedOut, api.EventChildWorkflowFailed},
	} {
		if c.a != nil {
			a, ev.Kind = c.a, c.kind
		}
	}
	if a == nil {
		return errors.New("no attributes")
	}
	n, ok := t.children[int64(a.InitiatedEventID)]
	if !ok {
		return fmt.Errorf("initiated event %d is not a child workflow", a.InitiatedEventID)
	}
	ev.ChildID, ev.WorkflowType = n, t.childTypes[n]
	ev.ChildWorkflowID, ev.ChildRunID = a.WorkflowExecution.WorkflowID, a.WorkflowExecution.RunID
	if ev.ChildWorkflowID == "" {
		ev.ChildWorkflowID = a.WorkflowID
	}
	var err error
	switch typ {
	case "ChildWorkflowExecutionCompleted":
		if ev.Result, err = payloadsJSON(a.Result); err != nil {
			return err
		}
	case "ChildWorkflowExecutionFailed":
		if ev.Error, err = failureOf(a.Failure); err != nil {
			return err
		}
	case "ChildWorkflowExecutionTimedOut":
		ev.Error = &api.Error{Message: "child workflow execution timed out", Type: api.ErrorTypeTimeout}
	case "StartChildWorkflowExecutionFailed":
		ev.Error = &api.Error{Message: "start child workflow execution failed: " + a.Cause}
	}
	t.emit(ev)
	return nil
}

func (t *temporalHistory) activity(scheduled int64String) (int64, error) {
	n, ok := t.activities[int64(scheduled)]
	if !ok {
		return 0, fmt.Errorf("scheduled event %d is not an activity", scheduled)
	}
	return n, nil
}

// payloadJSON is one Temporal payload as the JSON value Tether carries.
func payloadJSON(p temporalPayload) (json.RawMessage, error) {
	enc, err := base64.StdEncoding.DecodeString(p.Metadata["encoding"])
	if err != nil {
		enc = []byte(p.Metadata["encoding"])
	}
	data, err := base64.StdEncoding.DecodeString(p.Data)
	if err != nil {
		return nil, fmt.Errorf("payload data: %w", err)
	}
	switch string(enc) {
	case "json/plain":
		if !json.Valid(data) {
			return nil, errors.New("a json/plain payload is not JSON")
		}
		return data, nil
	case "binary/null":
		return json.RawMessage("null"), nil
	default:
		return nil, fmt.Errorf("a payload of encoding %q (decode it with its codec first)", enc)
	}
}

// payloadsJSON is Temporal's payloads as Tether's value: none, one as
// itself, several as a JSON array.
func payloadsJSON(ps *temporalPayloads) (json.RawMessage, error) {
	if ps == nil || len(ps.Payloads) == 0 {
		return nil, nil
	}
	vals := make([]json.RawMessage, len(ps.Payloads))
	for i, p := range ps.Payloads {
		v, err := payloadJSON(p)
		if err != nil {
			return nil, err
		}
		vals[i] = v
	}
	if len(vals) == 1 {
		return vals[0], nil
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("payloads: %w", err)
	}
	return b, nil
}

func fieldsJSON(m fieldsMap) (map[string]json.RawMessage, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, p := range m {
		v, err := payloadJSON(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// failureOf is Temporal's Failure as Tether's error, with its cause chain.
func failureOf(f *temporalFailure) (*api.Error, error) {
	if f == nil {
		return nil, nil
	}
	e := &api.Error{Message: f.Message, Stack: f.StackTrace}
	switch {
	case f.ApplicationFailureInfo != nil:
		a := f.ApplicationFailureInfo
		e.Type = a.Type
		if a.NonRetryable {
			no := false
			e.Retryable = &no
		}
		d, err := payloadsJSON(a.Details)
		if err != nil {
			return nil, err
		}
		e.Details = d
	case f.TimeoutFailureInfo != nil:
		e.Type = api.ErrorTypeTimeout
		e.TimeoutType = strings.ToLower(strings.TrimPrefix(f.TimeoutFailureInfo.TimeoutType, "TIMEOUT_TYPE_"))
	case f.CanceledFailureInfo != nil:
		e.Type = api.ErrorTypeCanceled
	}
	cause, err := failureOf(f.Cause)
	if err != nil {
		return nil, err
	}
	e.Cause = cause
	return e, nil
}

// protoDuration reads protobuf JSON's duration ("10s", "1.5s").
func protoDuration(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("a duration: %w", err)
	}
	return d, nil
}
