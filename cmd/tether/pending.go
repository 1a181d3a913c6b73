package main

import (
	"fmt"
	"strconv"

	"github.com/tetherhq/tether/api"
)

// describePending prints, after describe's fields, the line flagging a
// failing workflow task and the tables of w's pending activities,
// children and timers.
func (c *cli) describePending(w *api.Workflow) error {
	if f := w.TaskFailing; f != nil {
		line := fmt.Sprintf("\nWORKFLOW TASK FAILING: attempt %d (%d failures)", f.Attempt, f.Failures)
		if f.Since != nil {
			line += " since " + timeText(*f.Since)
		}
		if f.LastError != nil {
			line += ": " + errorText(f.LastError)
		}
		if _, err := fmt.Fprintln(c.stdout, line); err != nil {
			return err
		}
	}
	if len(w.PendingActivities) > 0 {
		if _, err := fmt.Fprintf(c.stdout, "\nPending activities (%s):\n", shownOf(len(w.PendingActivities), w.PendingActivityCount)); err != nil {
			return err
		}
		rows := [][]string{{"ID", "TYPE", "STATE", "ATTEMPT", "LAST FAILURE", "NEXT RETRY", "LAST HEARTBEAT", "WORKER"}}
		for _, a := range w.PendingActivities {
			attempt := strconv.Itoa(int(a.Attempt))
			if a.MaximumAttempts > 0 {
				attempt += "/" + strconv.Itoa(int(a.MaximumAttempts))
			}
			failure := ""
			if f := a.LastFailure; f != nil {
				failure = errorText(&api.Error{Type: f.Type, Message: f.Message}) + " at " + timeText(f.At)
			}
			heartbeat := timePtrText(a.LastHeartbeatAt)
			if len(a.HeartbeatDetails) > 0 {
				heartbeat += " " + jsonText(a.HeartbeatDetails)
			}
			rows = append(rows, []string{strconv.FormatInt(a.ActivityID, 10), a.ActivityType, a.State, attempt,
				dash(failure), dash(timePtrText(a.NextRetryAt)), dash(heartbeat), dash(a.WorkerID)})
		}
		if err := c.table(rows); err != nil {
			return err
		}
	}
	if len(w.PendingChildren) > 0 {
		if _, err := fmt.Fprintf(c.stdout, "\nPending children (%s):\n", shownOf(len(w.PendingChildren), w.PendingChildCount)); err != nil {
			return err
		}
		rows := [][]string{{"CHILD", "INSTANCE", "TYPE", "STATE", "STARTED"}}
		for _, k := range w.PendingChildren {
			rows = append(rows, []string{strconv.FormatInt(k.ChildID, 10), k.InstanceID, k.WorkflowType, k.State, timeText(k.StartedAt)})
		}
		if err := c.table(rows); err != nil {
			return err
		}
	}
	if len(w.PendingTimers) > 0 {
		if _, err := fmt.Fprintf(c.stdout, "\nPending timers (%s):\n", shownOf(len(w.PendingTimers), w.PendingTimerCount)); err != nil {
			return err
		}
		rows := [][]string{{"TIMER", "FIRES AT"}}
		for _, t := range w.PendingTimers {
			rows = append(rows, []string{strconv.FormatInt(t.TimerID, 10), timeText(t.FireAt)})
		}
		return c.table(rows)
	}
	return nil
}

// shownOf says how many of a bounded list are shown: "3", or "100 of 250".
func shownOf(shown int, total int64) string {
	if total > int64(shown) {
		return fmt.Sprintf("%d of %d", shown, total)
	}
	return strconv.Itoa(shown)
}

// dash is s, or "-" for an empty table cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
