package wf

import (
	"encoding/json"

	"github.com/tetherhq/tether/api"
)

// eventKey identifies an event enough to compare a fetched history with the
// one a cached state expects.
type eventKey struct {
	kind       string
	activityID int64
	timerID    int64
	marker     string // MarkerRecorded: markerKey(name, id)
	update     string // WorkflowUpdateAccepted / Completed: the update id
	externalID int64
	childID    int64
}

func keyOf(ev *api.Event) eventKey {
	k := eventKey{kind: ev.Kind, activityID: ev.ActivityID, timerID: ev.TimerID, update: ev.UpdateID, externalID: ev.ExternalID, childID: ev.ChildID}
	if ev.Kind == api.EventMarkerRecorded {
		k.marker = markerKey(ev.MarkerName, ev.MarkerID)
	}
	return k
}

// markerKey identifies a marker by its name and id.
func markerKey(name, id string) string { return name + "\x00" + id }

// histIndex is what the state knows of the recorded history: which
// activities and timers it holds (to match replayed commands), which
// activities are settled or cancel-requested, which are outstanding as the
// server sees them, and the keys of every event (to validate the next turn's
// history against a cached state).
type histIndex struct {
	activities  map[int64]string // ActivityScheduled: id → type
	timers      map[int64]bool   // TimerCreated
	timerFired  map[int64]bool   // TimerFired
	timerCancel map[int64]bool   // TimerCanceled
	closed      map[int64]bool   // ActivityCompleted / Failed / Canceled, CancelRequested (not waiting)
	outstanding map[int64]bool   // scheduled and not closed
	// waits: activities scheduled with WaitForCancellation; their
	// ActivityCancelRequested does not close them (cancelReq records it):
	// their outcome event does.
	waits       map[int64]bool
	cancelReq   map[int64]bool
	markers     map[string]json.RawMessage // MarkerRecorded: markerKey → details
	updateDone  map[string]bool            // WorkflowUpdateCompleted: update id
	externals   map[int64]string           // External*Initiated: external id → command type
	children    map[int64]string           // ChildWorkflowInitiated: child id → type
	childCancel map[int64]bool             // ChildWorkflowCancelRequested
	upserts     int                        // UpsertWorkflowSearchAttributes events
	memoUpserts int                        // UpsertWorkflowMemo events
	seen        []eventKey
	verified    int // seen[:verified] was compared with a fetched history
}

func newHistIndex() *histIndex {
	return &histIndex{
		activities:  map[int64]string{},
		timers:      map[int64]bool{},
		timerFired:  map[int64]bool{},
		timerCancel: map[int64]bool{},
		closed:      map[int64]bool{},
		outstanding: map[int64]bool{},
		waits:       map[int64]bool{},
		cancelReq:   map[int64]bool{},
		markers:     map[string]json.RawMessage{},
		updateDone:  map[string]bool{},
		externals:   map[int64]string{},
		children:    map[int64]string{},
		childCancel: map[int64]bool{},
	}
}

func (h *histIndex) record(ev *api.Event) {
	k := keyOf(ev)
	if k.marker != "" {
		h.markers[k.marker] = ev.MarkerDetails
	}
	typ := ev.ActivityType
	if ev.Kind == api.EventActivityScheduled && ev.Options != nil && ev.Options.WaitForCancellation {
		h.waits[ev.ActivityID] = true
	}
	if ev.Kind == api.EventChildWorkflowInitiated {
		typ = ev.WorkflowType
	}
	h.recordKey(k, typ)
}

func (h *histIndex) recordKey(k eventKey, activityType string) {
	switch k.kind {
	case api.EventActivityScheduled:
		h.activities[k.activityID] = activityType
		if !h.closed[k.activityID] {
			h.outstanding[k.activityID] = true
		}
	case api.EventActivityCancelRequested:
		h.cancelReq[k.activityID] = true
		if !h.waits[k.activityID] {
			h.closed[k.activityID] = true
			delete(h.outstanding, k.activityID)
		}
	case api.EventActivityCompleted, api.EventActivityFailed, api.EventActivityCanceled:
		h.closed[k.activityID] = true
		delete(h.outstanding, k.activityID)
	case api.EventTimerCreated:
		h.timers[k.timerID] = true
	case api.EventTimerFired:
		h.timerFired[k.timerID] = true
	case api.EventTimerCanceled:
		h.timerCancel[k.timerID] = true
	case api.EventWorkflowUpdateCompleted:
		h.updateDone[k.update] = true
	case api.EventExternalSignalInitiated:
		h.externals[k.externalID] = api.CommandSignalExternal
	case api.EventExternalCancelInitiated:
		h.externals[k.externalID] = api.CommandCancelExternal
	case api.EventChildWorkflowInitiated:
		h.children[k.childID] = activityType
	case api.EventChildWorkflowCancelRequested:
		h.childCancel[k.childID] = true
	case api.EventUpsertWorkflowSearchAttributes:
		h.upserts++
	case api.EventUpsertWorkflowMemo:
		h.memoUpserts++
	}
	h.seen = append(h.seen, k)
}

// matches reports whether history is exactly the expected one.
func (s *state) matches(history []api.Event) bool {
	h := s.hist
	if len(history) != len(h.seen) {
		return false
	}
	for i := h.verified; i < len(history); i++ {
		ev := &history[i]
		if (ev.EventID != 0 && ev.EventID != int64(i+1)) || keyOf(ev) != h.seen[i] {
			return false
		}
	}
	h.verified = len(history)
	return true
}

// matchesFrom is matches for a partial history: history holds the events
// from event id from on, and the state must have seen exactly from-1 events
// before them (confirmed by the server's next_event_id on each ack).
func (s *state) matchesFrom(from int64, history []api.Event) bool {
	h := s.hist
	base := int(from - 1)
	if base < 0 || base+len(history) != len(h.seen) {
		return false
	}
	for i := range history {
		ev := &history[i]
		idx := base + i
		if (ev.EventID != 0 && ev.EventID != int64(idx+1)) || keyOf(ev) != h.seen[idx] {
			return false
		}
	}
	h.verified = len(h.seen)
	return true
}

// predict appends to the index the events the server records when it
// acknowledges a turn (see the protocol): the messages; if one was a
// CancelRequested, an ActivityCancelRequested per outstanding activity; the
// events of the non-terminal commands; the ActivityCancelRequested of the
// cancels whose activity is outstanding. A finished execution is never
// continued, so its terminal events are not predicted.
func (s *state) predict(messages []api.Event, res *TurnResult) {
	h := s.hist
	cancel := false
	for i := range messages {
		if messages[i].Kind == api.EventWorkflowUpdateAccepted && s.rejectedNow[messages[i].UpdateID] {
			continue // the server records no event for it
		}
		h.record(&messages[i])
		if messages[i].Kind == api.EventCancelRequested {
			cancel = true
		}
	}
	if cancel {
		for _, id := range sortedKeys(h.outstanding) {
			h.recordKey(eventKey{kind: api.EventActivityCancelRequested, activityID: id}, "")
		}
	}
	for _, c := range res.Commands {
		switch c.Type {
		case api.CommandScheduleActivity:
			if c.Options != nil && c.Options.WaitForCancellation {
				h.waits[c.ActivityID] = true
			}
			h.recordKey(eventKey{kind: api.EventActivityScheduled, activityID: c.ActivityID}, c.ActivityType)
		case api.CommandStartTimer:
			h.recordKey(eventKey{kind: api.EventTimerCreated, timerID: c.TimerID}, "")
		case api.CommandCancelTimer:
			h.recordKey(eventKey{kind: api.EventTimerCanceled, timerID: c.TimerID}, "")
		case api.CommandCompleteUpdate:
			h.recordKey(eventKey{kind: api.EventWorkflowUpdateCompleted, update: c.UpdateID}, "")
		case api.CommandSignalExternal:
			h.recordKey(eventKey{kind: api.EventExternalSignalInitiated, externalID: c.ExternalID}, "")
		case api.CommandCancelExternal:
			h.recordKey(eventKey{kind: api.EventExternalCancelInitiated, externalID: c.ExternalID}, "")
		case api.CommandStartChildWorkflow:
			h.recordKey(eventKey{kind: api.EventChildWorkflowInitiated, childID: c.ChildID}, c.WorkflowType)
		case api.CommandRequestCancelChildWorkflow:
			h.recordKey(eventKey{kind: api.EventChildWorkflowCancelRequested, childID: c.ChildID}, "")
		case api.CommandUpsertSearchAttributes:
			h.recordKey(eventKey{kind: api.EventUpsertWorkflowSearchAttributes}, "")
		case api.CommandUpsertMemo:
			h.recordKey(eventKey{kind: api.EventUpsertWorkflowMemo}, "")
		case api.CommandRecordMarker:
			k := markerKey(c.MarkerName, c.MarkerID)
			h.markers[k] = c.MarkerDetails
			s.usedMarkers[k] = true
			h.recordKey(eventKey{kind: api.EventMarkerRecorded, marker: k}, "")
		}
	}
	for _, c := range res.ActivityCancels {
		if h.outstanding[c.ActivityID] {
			h.recordKey(eventKey{kind: api.EventActivityCancelRequested, activityID: c.ActivityID}, "")
		}
	}
	clear(s.rejectedNow)
}
