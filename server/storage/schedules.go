package storage

import (
	"errors"

	"github.com/tetherhq/tether/api"
)

// ErrScheduleExists is the error of a create whose schedule id is taken.
var ErrScheduleExists = errors.New("schedule exists")

// MaxBackfillSlots is the most slots one backfill fires.
const MaxBackfillSlots = 1000

// UpdateScheduleParams are the parameters of Schedules.UpdateSchedule:
// one of Request and Pause.
type UpdateScheduleParams struct {
	// Namespace and ID name the schedule.
	Namespace, ID string
	// Request, when set, replaces the schedule's spec, action and
	// policies.
	Request *api.ScheduleRequest
	// Pause, when set, pauses or unpauses the schedule.
	Pause *SchedulePause
}

// SchedulePause pauses or unpauses a schedule (UpdateScheduleParams.Pause).
type SchedulePause struct {
	// Paused pauses (true) or unpauses (false).
	Paused bool
	// Note says why.
	Note string
}

// TriggerScheduleParams are the parameters of Schedules.TriggerSchedule.
type TriggerScheduleParams struct {
	// Namespace and ID name the schedule.
	Namespace, ID string
	// Overlap is the overlap policy of a trigger ("": the schedule's).
	Overlap string
	// Backfill, when set, fires the slots of its range instead.
	Backfill *api.ScheduleBackfillRequest
}

// ScheduleTrigger is the answer of Schedules.TriggerSchedule.
type ScheduleTrigger struct {
	// Trigger is the answer of a trigger.
	Trigger api.ScheduleTriggerResponse
	// Backfill is the answer of a backfill.
	Backfill api.ScheduleBackfillResponse
}

// CreateScheduleParams are the parameters of Schedules.CreateSchedule.
type CreateScheduleParams struct {
	// Namespace is the schedule's namespace.
	Namespace string
	// Request is the schedule (its id included).
	Request api.ScheduleRequest
}

// ScheduleRef names a schedule (Schedules.DescribeSchedule,
// DeleteSchedule).
type ScheduleRef struct {
	// Namespace and ID name the schedule.
	Namespace, ID string
}

// ScheduleFilter selects a page of schedules.
type ScheduleFilter struct {
	// Namespace is the schedules' namespace.
	Namespace string
	// Limit defaults to 100 and is capped at 1000.
	Limit int32
	// PageToken continues a previous page ("": the first).
	PageToken string
}
