package engine

import (
	"encoding/json"
	"strconv"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/api"
)

// External is a signal_external or cancel_external command to apply to
// its target in the ack's transaction.
type External struct {
	// Cancel is true for cancel_external, false for signal_external.
	Cancel            bool
	ExternalID        int64
	TargetInstanceID  string
	TargetExecutionID int64
	// TargetRunID, when not nil, is the target execution's run id (the
	// command's target_run_id in the UUID form).
	TargetRunID *uuid.UUID
	SignalName  string
	Input       json.RawMessage
	Reason      string
	// Header is the signal's header (signal_external).
	Header api.Header
}

// planExternal validates a signal_external or cancel_external command and
// returns its event and its write.
func planExternal(c api.Command, field func(string) string) (api.Event, External, error) {
	if c.ExternalID <= 0 {
		return api.Event{}, External{}, &InvalidCommandError{Field: field("external_id"), Message: "required: a positive sequence number"}
	}
	if c.TargetInstanceID == "" {
		return api.Event{}, External{}, &InvalidCommandError{Field: field("target_instance_id"), Message: "required"}
	}
	if c.TargetExecutionID < 0 {
		return api.Event{}, External{}, &InvalidCommandError{Field: field("target_execution_id"), Message: "must not be negative"}
	}
	ext := External{Cancel: c.Type == api.CommandCancelExternal, ExternalID: c.ExternalID,
		TargetInstanceID: c.TargetInstanceID, TargetExecutionID: c.TargetExecutionID}
	if c.TargetRunID != "" {
		// A run id, or an execution id in decimal.
		if n, err := strconv.ParseInt(c.TargetRunID, 10, 64); err == nil && n >= 1 && (c.TargetExecutionID == 0 || c.TargetExecutionID == n) {
			ext.TargetExecutionID = n
		} else if run, err := uuid.Parse(c.TargetRunID); err == nil && c.TargetExecutionID == 0 {
			ext.TargetRunID = &run
		} else {
			return api.Event{}, External{}, &InvalidCommandError{Field: field("target_run_id"),
				Message: "must be a run id (a UUID) or an execution id in decimal, naming the execution target_execution_id names if both are set"}
		}
	}
	ev := api.Event{ExternalID: c.ExternalID, TargetInstanceID: c.TargetInstanceID, TargetExecutionID: ext.TargetExecutionID,
		TargetRunID: c.TargetRunID}
	if ext.Cancel {
		ext.Reason = c.Reason
		ev.Kind, ev.Reason = api.EventExternalCancelInitiated, c.Reason
		return ev, ext, nil
	}
	if c.SignalName == "" {
		return api.Event{}, External{}, &InvalidCommandError{Field: field("signal_name"), Message: "required"}
	}
	ext.SignalName, ext.Input, ext.Header = c.SignalName, c.Input, c.Header
	ev.Kind, ev.SignalName, ev.Input, ev.Header = api.EventExternalSignalInitiated, c.SignalName, c.Input, c.Header
	return ev, ext, nil
}
