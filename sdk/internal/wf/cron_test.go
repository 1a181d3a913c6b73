package wf_test

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/tetherhq/tether/api"
	workflow "github.com/tetherhq/tether/sdk/internal/wf"
)

// cronCount returns the last completion result plus one, 1 without one.
func cronCount(ctx workflow.Context) (int, error) {
	last := 0
	if workflow.HasLastCompletionResult(ctx) {
		if err := workflow.GetLastCompletionResult(ctx, &last); err != nil {
			return 0, err
		}
	} else if err := workflow.GetLastCompletionResult(ctx, &last); !errors.Is(err, workflow.ErrNoLastCompletionResult) {
		return 0, err
	}
	return last + 1, nil
}

// The last completion result comes from the run's WorkflowStarted event,
// live and on replay.
func TestLastCompletionResult(t *testing.T) {
	withLast := started
	withLast.LastCompletionResult = json.RawMessage(`41`)
	for _, c := range []struct {
		name    string
		start   api.Event
		history bool
		want    string
	}{{"first run", started, false, "complete:1"}, {"next run", withLast, false, "complete:42"},
		{"next run replayed", withLast, true, "complete:42"}} {
		var res *workflow.TurnResult
		var err error
		if c.history {
			res, err = turnOf(t, cronCount, hist(c.start), nil)
		} else {
			res, err = turnOf(t, cronCount, nil, hist(c.start))
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := describe(res.Commands); !slices.Equal(got, []string{c.want}) {
			t.Fatalf("%s: commands %v, want %s", c.name, got, c.want)
		}
	}
}
