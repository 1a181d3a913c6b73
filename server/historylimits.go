package server

import (
	"errors"
	"fmt"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// historyWarnings adds to a described workflow the warnings of a history
// past a soft limit (Limits.HistoryEventsWarn, Limits.HistoryBytesWarn).
func (s *Server) historyWarnings(wf *api.Workflow) {
	lim := s.cfg.Limits
	if wf.Status != api.StatusRunning {
		return
	}
	if wf.HistoryLength >= int64(lim.HistoryEventsWarn) {
		msg := fmt.Sprintf("history-events-warn: the history holds %d events, past the soft limit of %d", wf.HistoryLength, lim.HistoryEventsWarn)
		if lim.HistoryEventsMax > 0 {
			msg += fmt.Sprintf("; the workflow is terminated at %d (max-history-events): continue as new before", lim.HistoryEventsMax)
		}
		wf.Warnings = append(wf.Warnings, msg)
	}
	if wf.HistoryBytes >= lim.HistoryBytesWarn {
		msg := fmt.Sprintf("history-bytes-warn: the history holds %d bytes, past the soft limit of %d", wf.HistoryBytes, lim.HistoryBytesWarn)
		if lim.HistoryBytesMax > 0 {
			msg += fmt.Sprintf("; the workflow is terminated at %d (max-history-bytes): continue as new before", lim.HistoryBytesMax)
		}
		wf.Warnings = append(wf.Warnings, msg)
	}
}

// enforceHistoryLimit terminates the workflow of an acknowledged turn
// whose history reached a hard limit (Limits.HistoryEventsMax in events,
// Limits.HistoryBytesMax in bytes), with a reason naming the bound, and
// answers the turn as terminated. A failure to terminate is logged: the
// next turn's acknowledgement tries again.
func (s *Server) enforceHistoryLimit(c echo.Context, ns, instanceID string, resp *api.CompleteWorkflowTaskResponse) {
	if resp.Status != api.StatusRunning {
		return
	}
	lim := s.cfg.Limits
	events := resp.NextEventID - 1
	var reason string
	switch {
	case lim.HistoryEventsMax > 0 && events >= int64(lim.HistoryEventsMax):
		reason = fmt.Sprintf("%s: the history holds %d events; the bound is %d (max-history-events)",
			api.ErrorTypeLimitExceeded, events, lim.HistoryEventsMax)
	case lim.HistoryBytesMax > 0 && resp.HistoryBytes >= lim.HistoryBytesMax:
		reason = fmt.Sprintf("%s: the history holds %d bytes; the bound is %d (max-history-bytes)",
			api.ErrorTypeLimitExceeded, resp.HistoryBytes, lim.HistoryBytesMax)
	default:
		return
	}
	err := s.store.TerminateWorkflow(c.Request().Context(), &storage.TerminateWorkflowParams{Namespace: ns, InstanceID: instanceID, ExecutionID: resp.ExecutionID, Reason: reason, Details: nil})
	if err != nil && !errors.Is(err, storage.ErrNotRunning) {
		s.logger.Error("history limit: cannot terminate the workflow", "namespace", ns, "instance_id", instanceID, "err", err)
		return
	}
	s.logger.Warn("history limit: workflow terminated", "namespace", ns, "instance_id", instanceID,
		"events", events, "bytes", resp.HistoryBytes, "reason", reason)
	resp.Status = api.StatusTerminated
}
