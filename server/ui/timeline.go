package ui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
)

// timelineWidth is the width of a bar's SVG viewBox: a row's bar is placed
// in 0…timelineWidth, the execution's span.
const timelineWidth = 1000

// minBar is the narrowest bar drawn (a point event, a short activity), in
// viewBox units.
const minBar = 4

// span is one row of the compact timeline: an activity, a timer, a child
// workflow, an update or a signal, from its first event to its last.
type span struct {
	// Kind is "activity", "timer", "child", "update" or "signal".
	Kind string
	// Name is what the row is about: the activity's id and type, the
	// timer's id and duration, the child's workflow id, the signal's name.
	Name string
	// State is the state its last event left it in: scheduled, completed,
	// failed, canceled, cancel requested, started, fired, received, …
	State string
	// Start and End are its first and last event's times; End is zero
	// while it is still open.
	Start, End time.Time
	// FirstEvent and LastEvent are the event ids of those events.
	FirstEvent, LastEvent int64
	// X and W place the bar in the viewBox (0…timelineWidth).
	X, W int64
}

// Open reports whether the row has not ended yet.
func (s span) Open() bool { return s.End.IsZero() }

// Duration is the row's length so far ("" for a point event).
func (s span) Duration(now time.Time) string {
	end := s.End
	if end.IsZero() {
		end = now
	}
	if s.Kind == "signal" {
		return ""
	}
	return end.Sub(s.Start).Round(time.Millisecond).String()
}

// timeline is the compact timeline of an execution.
type timeline struct {
	// Rows are in the order their first event happened.
	Rows []span
	// Start and End are the span the bars are drawn on: the first event,
	// and the last one (closed execution) or now.
	Start, End time.Time
	// Now is when the page was made (the end of open rows).
	Now time.Time
	// Width is the viewBox width.
	Width int64
}

// activityStates names the state an activity event leaves the activity in
// (ended: true when the activity is over).
var activityStates = map[string]struct {
	state string
	ended bool
}{
	api.EventActivityScheduled:              {"scheduled", false},
	api.EventActivityCancelRequested:        {"cancel requested", false},
	api.EventActivityAttemptCancelRequested: {"cancel requested", false},
	api.EventActivityCompleted:              {"completed", true},
	api.EventActivityFailed:                 {"failed", true},
	api.EventActivityCanceled:               {"canceled", true},
}

// buildTimeline groups events into the rows of the compact timeline. open
// says whether the execution still runs (the bars then end at now).
func buildTimeline(events []api.Event, open bool, now time.Time) *timeline {
	tl := &timeline{Now: now, Width: timelineWidth}
	if len(events) == 0 {
		return tl
	}
	tl.Start = events[0].Timestamp
	tl.End = events[len(events)-1].Timestamp
	if open && now.After(tl.End) {
		tl.End = now
	}
	index := map[string]int{}
	row := func(key string, e api.Event, kind, name string) *span {
		i, ok := index[key]
		if !ok {
			i = len(tl.Rows)
			index[key] = i
			tl.Rows = append(tl.Rows, span{Kind: kind, Name: name, Start: e.Timestamp, FirstEvent: e.EventID})
		}
		r := &tl.Rows[i]
		r.LastEvent = e.EventID
		return r
	}
	for _, e := range events {
		switch {
		case e.ActivityID != 0:
			st, ok := activityStates[e.Kind]
			if !ok {
				continue
			}
			name := "activity " + strconv.FormatInt(e.ActivityID, 10)
			if e.ActivityType != "" {
				name += " " + e.ActivityType
			}
			r := row("a"+strconv.FormatInt(e.ActivityID, 10), e, "activity", name)
			if e.ActivityType != "" && r.Name != name {
				r.Name = name
			}
			r.State = st.state
			if e.Kind == api.EventActivityFailed && e.Error != nil && e.Error.Type != "" {
				r.State = "failed (" + e.Error.Type + ")"
			}
			if st.ended {
				r.End = e.Timestamp
			}
		case e.TimerID != 0:
			name := "timer " + strconv.FormatInt(e.TimerID, 10)
			if e.FireAfter != 0 {
				name += " (" + time.Duration(e.FireAfter).String() + ")"
			}
			r := row("t"+strconv.FormatInt(e.TimerID, 10), e, "timer", name)
			switch e.Kind {
			case api.EventTimerCreated:
				r.State = "waiting"
			case api.EventTimerFired:
				r.State, r.End = "fired", e.Timestamp
			case api.EventTimerCanceled:
				r.State, r.End = "canceled", e.Timestamp
			}
		case e.ChildID != 0:
			r := row("c"+strconv.FormatInt(e.ChildID, 10), e, "child", "child "+strconv.FormatInt(e.ChildID, 10))
			if e.ChildWorkflowID != "" {
				r.Name = "child " + e.ChildWorkflowID
			}
			if e.Kind == api.EventChildWorkflowCancelRequested {
				r.State = "cancel requested"
			} else if st, ok := childStates[e.Kind]; ok {
				r.State = st
				if e.Kind != api.EventChildWorkflowInitiated && e.Kind != api.EventChildWorkflowStarted {
					r.End = e.Timestamp
				}
			}
		case e.Kind == api.EventSignalReceived:
			r := row(fmt.Sprintf("s%d", e.EventID), e, "signal", "signal "+e.SignalName)
			r.State, r.End = "received", e.Timestamp
		case e.UpdateID != "":
			name := "update " + e.UpdateName
			if e.UpdateName == "" {
				name = "update " + e.UpdateID
			}
			r := row("u"+e.UpdateID, e, "update", name)
			switch e.Kind {
			case api.EventWorkflowUpdateAccepted:
				r.State = "accepted"
			case api.EventWorkflowUpdateCompleted:
				r.State, r.End = "completed", e.Timestamp
				if e.Error != nil {
					r.State = "failed"
				}
			}
		}
	}
	total := tl.End.Sub(tl.Start)
	at := func(t time.Time) int64 {
		if total <= 0 {
			return 0
		}
		return int64(float64(t.Sub(tl.Start)) / float64(total) * timelineWidth)
	}
	for i := range tl.Rows {
		r := &tl.Rows[i]
		end := r.End
		if end.IsZero() {
			end = tl.End
		}
		r.X = min(at(r.Start), timelineWidth-minBar)
		r.W = max(at(end)-r.X, minBar)
	}
	return tl
}
