package wf

import (
	"errors"
	"fmt"

	"github.com/tetherhq/tether/sdk/internal/fnsig"
)

// ErrNoLastCompletionResult is GetLastCompletionResult's error when no
// earlier run of the cron workflow completed.
var ErrNoLastCompletionResult = errors.New("workflow: no last completion result")

// HasLastCompletionResult reports whether this run of a cron workflow
// follows a run that completed (its result is then
// GetLastCompletionResult's). Temporal's workflow.HasLastCompletionResult.
func hasLastCompletionResultDirect(ctx Context) bool {
	return len(ctx.impl().s.lastCompletion) > 0
}

// GetLastCompletionResult decodes into valuePtr the result of the last
// run of this cron workflow that completed (a failed run passes on the
// one before it), or returns ErrNoLastCompletionResult. Temporal's
// workflow.GetLastCompletionResult.
func getLastCompletionResultDirect(ctx Context, valuePtr any) error {
	raw := ctx.impl().s.lastCompletion
	if len(raw) == 0 {
		return ErrNoLastCompletionResult
	}
	if err := fnsig.Decode(raw, valuePtr); err != nil {
		return fmt.Errorf("workflow: last completion result: %w", err)
	}
	return nil
}
