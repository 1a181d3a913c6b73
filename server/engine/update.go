package engine

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tetherhq/tether/api"
)

// UpdateOutcome is the stage one update reached in a turn.
type UpdateOutcome struct {
	UpdateID string          `json:"update_id"`
	Stage    string          `json:"stage"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    *api.Error      `json:"error,omitempty"`
}

// turnUpdates collects the turn's update outcomes in the order they were
// first seen.
type turnUpdates struct {
	order []string
	by    map[string]*UpdateOutcome
}

func (u *turnUpdates) set(o UpdateOutcome) {
	if u.by == nil {
		u.by = map[string]*UpdateOutcome{}
	}
	if cur, ok := u.by[o.UpdateID]; ok {
		*cur = o
		return
	}
	u.order = append(u.order, o.UpdateID)
	u.by[o.UpdateID] = &o
}

func (u *turnUpdates) outcomes() []UpdateOutcome {
	out := make([]UpdateOutcome, 0, len(u.order))
	for _, id := range u.order {
		out = append(out, *u.by[id])
	}
	return out
}

// planUpdates checks the turn's update commands against its messages and
// returns the messages whose events are recorded: an update message the
// turn rejects (reject_update) leaves none. Each update message is
// accepted unless rejected, and completed by a complete_update (of this
// turn, or of a later one for an update accepted before).
func planUpdates(msgs []Message, cmds []api.Command) ([]Message, *turnUpdates, error) {
	ups := &turnUpdates{}
	inTurn := map[string]bool{}
	for _, m := range msgs {
		if m.Event.Kind == api.EventWorkflowUpdateAccepted {
			inTurn[m.Event.UpdateID] = true
		}
	}
	rejected := map[string]*api.Error{}
	for i, c := range cmds {
		field := func(f string) string { return fmt.Sprintf("commands[%d].%s", i, f) }
		switch c.Type {
		case api.CommandRejectUpdate, api.CommandCompleteUpdate:
			if c.UpdateID == "" {
				return nil, nil, &InvalidCommandError{Field: field("update_id"), Message: "required"}
			}
		}
		if c.Type != api.CommandRejectUpdate {
			continue
		}
		if !inTurn[c.UpdateID] {
			return nil, nil, &InvalidCommandError{Field: field("update_id"),
				Message: fmt.Sprintf("update %q is not a message of this turn", c.UpdateID)}
		}
		if c.Error == nil || c.Error.Message == "" {
			return nil, nil, &InvalidCommandError{Field: field("error.message"), Message: "required"}
		}
		rejected[c.UpdateID] = c.Error
	}
	kept := msgs
	if len(inTurn) > 0 {
		kept = slices.DeleteFunc(slices.Clone(msgs), func(m Message) bool {
			if m.Event.Kind != api.EventWorkflowUpdateAccepted {
				return false
			}
			if e, ok := rejected[m.Event.UpdateID]; ok {
				ups.set(UpdateOutcome{UpdateID: m.Event.UpdateID, Stage: api.UpdateStageRejected, Error: e})
				return true
			}
			ups.set(UpdateOutcome{UpdateID: m.Event.UpdateID, Stage: api.UpdateStageAccepted})
			return false
		})
	}
	for i, c := range cmds {
		if c.Type != api.CommandCompleteUpdate {
			continue
		}
		if _, ok := rejected[c.UpdateID]; ok {
			return nil, nil, &InvalidCommandError{Field: fmt.Sprintf("commands[%d].update_id", i),
				Message: fmt.Sprintf("update %q is rejected by this turn", c.UpdateID)}
		}
		ups.set(UpdateOutcome{UpdateID: c.UpdateID, Stage: api.UpdateStageCompleted, Result: c.Result, Error: c.Error})
	}
	return kept, ups, nil
}
