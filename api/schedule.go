package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Overlap policies of a schedule (Schedule.OverlapPolicy): what a slot does
// when a workflow the schedule started is still running.
const (
	// OverlapSkip (the default): the slot is skipped.
	OverlapSkip = "skip"
	// OverlapBufferOne: the slot waits until the running workflow closes,
	// then starts; at most one slot waits (later ones are skipped).
	OverlapBufferOne = "buffer_one"
	// OverlapCancelOther: the running workflows are asked to cancel and the
	// slot starts at once.
	OverlapCancelOther = "cancel_other"
	// OverlapTerminateOther: the running workflows are terminated and the
	// slot starts at once.
	OverlapTerminateOther = "terminate_other"
	// OverlapAllowAll: the slot starts at once, beside the running ones.
	OverlapAllowAll = "allow_all"
)

// OverlapPolicies returns every overlap policy.
func OverlapPolicies() []string {
	return []string{OverlapSkip, OverlapBufferOne, OverlapCancelOther, OverlapTerminateOther, OverlapAllowAll}
}

// Kinds of a schedule's actions (ScheduleActionResult.Kind).
const (
	// ScheduleActionScheduled: a slot of the spec, fired by the scheduler.
	ScheduleActionScheduled = "scheduled"
	// ScheduleActionTriggered: fired by POST /schedules/{id}/trigger.
	ScheduleActionTriggered = "triggered"
	// ScheduleActionBackfilled: a slot of POST /schedules/{id}/backfill.
	ScheduleActionBackfilled = "backfilled"
)

// ScheduleActionKinds returns every kind of schedule action.
func ScheduleActionKinds() []string {
	return []string{ScheduleActionScheduled, ScheduleActionTriggered, ScheduleActionBackfilled}
}

// ScheduleIntervalSpec is a fixed interval: the slots are the times
// epoch + Offset + k*Every (the Unix epoch, UTC), as Temporal's.
type ScheduleIntervalSpec struct {
	// Every is the interval, at least 1s and at most 366 days.
	Every Duration `json:"every" swaggertype:"string" example:"1h"`
	// Offset shifts the slots; 0 ≤ Offset < Every.
	Offset Duration `json:"offset,omitempty" swaggertype:"string" example:"5m"`
}

// ScheduleRange is a range of values of a calendar field: Start, Start+Step,
// … up to End, as Temporal's.
type ScheduleRange struct {
	// Start is the first value.
	Start int `json:"start"`
	// End is the last value, not below Start (0: Start).
	End int `json:"end,omitempty"`
	// Step is the distance between values, at least 0 (0: 1).
	Step int `json:"step,omitempty"`
}

// ScheduleCalendarSpec is a calendar of slots, as Temporal's: the times
// whose every field is in one of its ranges, evaluated in the spec's
// TimeZoneName. An empty field takes its default: Second, Minute and Hour
// are 0; DayOfMonth, Month, Year and DayOfWeek are any value. The day must
// match both DayOfMonth and DayOfWeek.
type ScheduleCalendarSpec struct {
	// Second ranges, 0 to 59 (default 0).
	Second []ScheduleRange `json:"second,omitempty" validate:"max=60"`
	// Minute ranges, 0 to 59 (default 0).
	Minute []ScheduleRange `json:"minute,omitempty" validate:"max=60"`
	// Hour ranges, 0 to 23 (default 0).
	Hour []ScheduleRange `json:"hour,omitempty" validate:"max=24"`
	// DayOfMonth ranges, 1 to 31 (default: every day).
	DayOfMonth []ScheduleRange `json:"day_of_month,omitempty" validate:"max=31"`
	// Month ranges, 1 to 12 (default: every month).
	Month []ScheduleRange `json:"month,omitempty" validate:"max=12"`
	// Year ranges, 1970 to 9999 (default: every year).
	Year []ScheduleRange `json:"year,omitempty" validate:"max=100"`
	// DayOfWeek ranges, 0 (Sunday) to 6 (default: every day).
	DayOfWeek []ScheduleRange `json:"day_of_week,omitempty" validate:"max=7"`
	// Comment describes it, at most 256 characters.
	Comment string `json:"comment,omitempty" validate:"max=256"`
}

// ScheduleSpec is when a schedule fires: the union of the times of its
// calendars, cron expressions and intervals, less the times of Skip.
type ScheduleSpec struct {
	// Calendars are calendar specs. At most 10.
	Calendars []ScheduleCalendarSpec `json:"calendars,omitempty" validate:"max=10,dive"`
	// CronExpressions are cron expressions in standard syntax (five fields,
	// minute first, or a descriptor such as "@daily" or "@every 1h"),
	// evaluated in TimeZoneName. At most 10, each at most 256 characters.
	CronExpressions []string `json:"cron_expressions,omitempty" validate:"max=10,dive,max=256" example:"0 3 * * *"`
	// Intervals are fixed intervals. At most 10.
	Intervals []ScheduleIntervalSpec `json:"intervals,omitempty" validate:"max=10"`
	// Jitter delays each slot by a random amount below it (the same for a
	// slot on every replica), at most 24h. The workflow id keeps the slot's
	// nominal time.
	Jitter Duration `json:"jitter,omitempty" swaggertype:"string" example:"30s"`
	// Skip are calendar specs whose times never fire, whichever part of
	// the spec gives them. At most 10.
	Skip []ScheduleCalendarSpec `json:"skip,omitempty" validate:"max=10,dive"`
	// TimeZoneName is the IANA time zone of the calendars and cron
	// expressions (default UTC), at most 64 characters.
	TimeZoneName string `json:"time_zone_name,omitempty" validate:"max=64" example:"Europe/Paris"`
}

// ScheduleWorkflowAction is what a schedule does at each slot: start a
// workflow whose id is WorkflowIDPrefix (default: the schedule id), "-"
// and the slot's time in RFC 3339 (UTC), so that a slot never starts twice.
type ScheduleWorkflowAction struct {
	// WorkflowType is the registered name of the workflow to run.
	WorkflowType string `json:"workflow_type" validate:"required,name"`
	// TaskQueue is the queue whose workers run it.
	TaskQueue string `json:"task_queue" validate:"required,name"`
	// Input is the workflow's argument, any JSON value.
	Input json.RawMessage `json:"input,omitempty" swaggertype:"object"`
	// WorkflowIDPrefix starts each workflow id (default: the schedule id);
	// at most 160 characters of an instance id.
	WorkflowIDPrefix string `json:"workflow_id_prefix,omitempty" validate:"omitempty,name,max=160"`
	// ExecutionTimeout fails each workflow that runs longer (0: no limit).
	ExecutionTimeout Duration `json:"execution_timeout,omitempty" swaggertype:"string" example:"1h"`
	// Concurrency limits how many workflows of its key run at once, as a
	// start's (docs/api.md, "Concurrency limits"); absent: no limit.
	Concurrency *Concurrency `json:"concurrency,omitempty"`
}

// ScheduleRequest is the body of POST /schedules (with ScheduleID) and of
// PUT /schedules/{id} (which replaces everything but the id).
type ScheduleRequest struct {
	// ScheduleID names the schedule (create only; PUT takes it from the
	// path): an instance id of at most 150 characters.
	ScheduleID string `json:"schedule_id,omitempty" validate:"omitempty,name,max=150"`
	// Spec is when it fires.
	Spec ScheduleSpec `json:"spec"`
	// Action is what it starts.
	Action ScheduleWorkflowAction `json:"action"`
	// OverlapPolicy is what a slot does while a workflow the schedule
	// started still runs: skip (default), buffer_one, cancel_other,
	// terminate_other or allow_all.
	OverlapPolicy string `json:"overlap_policy,omitempty" validate:"omitempty,oneof=skip buffer_one cancel_other terminate_other allow_all"`
	// CatchupWindow: after downtime, slots missed longer ago than this are
	// skipped, newer ones fire (default 1m, at least 1s, at most 365 days).
	CatchupWindow Duration `json:"catchup_window,omitempty" swaggertype:"string" example:"1m"`
	// Paused creates (or leaves) the schedule paused.
	Paused bool `json:"paused,omitempty"`
	// Note says why it is paused, at most 1000 characters.
	Note string `json:"note,omitempty" validate:"max=1000"`
	// RemainingActions, when set, is how many actions the schedule may
	// still take (0 to 1,000,000); it stops firing at 0.
	RemainingActions *int32 `json:"remaining_actions,omitempty" validate:"omitempty,min=0,max=1000000"`
}

// SchedulePauseRequest is the body of POST /schedules/{id}/pause and
// /unpause.
type SchedulePauseRequest struct {
	// Note says why, at most 1000 characters.
	Note string `json:"note,omitempty" validate:"max=1000"`
}

// ScheduleTriggerRequest is the body of POST /schedules/{id}/trigger.
type ScheduleTriggerRequest struct {
	// OverlapPolicy overrides the schedule's for this action (empty: the
	// schedule's).
	OverlapPolicy string `json:"overlap_policy,omitempty" validate:"omitempty,oneof=skip buffer_one cancel_other terminate_other allow_all"`
}

// ScheduleBackfillRequest is the body of POST /schedules/{id}/backfill:
// every slot of the spec in [StartAt, EndAt] fires, with OverlapPolicy.
// At most 1000 slots.
type ScheduleBackfillRequest struct {
	// StartAt is the first time of the range.
	StartAt time.Time `json:"start_at" validate:"required"`
	// EndAt is the last time of the range, not before StartAt.
	EndAt time.Time `json:"end_at" validate:"required"`
	// OverlapPolicy applies to the backfilled slots (empty: the
	// schedule's).
	OverlapPolicy string `json:"overlap_policy,omitempty" validate:"omitempty,oneof=skip buffer_one cancel_other terminate_other allow_all"`
}

// ScheduleActionResult is one action a schedule took.
type ScheduleActionResult struct {
	// SlotAt is the slot's nominal time (a trigger's: when it was asked).
	SlotAt time.Time `json:"slot_at"`
	// FiredAt is when the workflow was started.
	FiredAt time.Time `json:"fired_at"`
	// WorkflowID is the workflow started.
	WorkflowID string `json:"workflow_id"`
	// Kind is scheduled, triggered or backfilled.
	Kind string `json:"kind"`
	// Status is the workflow's status now (empty when it was deleted).
	Status string `json:"status,omitempty"`
}

// ScheduleInfo is what a schedule did and will do.
type ScheduleInfo struct {
	// ActionCount is how many workflows it started.
	ActionCount int64 `json:"action_count"`
	// OverlapSkipped is how many slots the overlap policy skipped.
	OverlapSkipped int64 `json:"overlap_skipped"`
	// MissedCatchupWindow is how many slots were older than the catch-up
	// window when the scheduler saw them.
	MissedCatchupWindow int64 `json:"missed_catchup_window"`
	// BufferedSlot is the slot waiting for a running workflow (buffer_one).
	BufferedSlot *time.Time `json:"buffered_slot,omitempty"`
	// NextActionTimes are the next (at most 10) slots, when not paused.
	NextActionTimes []time.Time `json:"next_action_times"`
	// RecentActions are the newest (at most 10) actions, newest first.
	RecentActions []ScheduleActionResult `json:"recent_actions"`
	// RunningWorkflows are the ids of its workflows still running (at most
	// 100).
	RunningWorkflows []string `json:"running_workflows"`
	// CreatedAt is when the schedule was created.
	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when it was last changed.
	UpdatedAt time.Time `json:"updated_at"`
}

// Schedule is a schedule as described by GET /schedules/{id}.
type Schedule struct {
	// ScheduleID names it.
	ScheduleID string `json:"schedule_id"`
	// Spec is when it fires.
	Spec ScheduleSpec `json:"spec"`
	// Action is what it starts.
	Action ScheduleWorkflowAction `json:"action"`
	// OverlapPolicy is its overlap policy.
	OverlapPolicy string `json:"overlap_policy"`
	// CatchupWindow is its catch-up window.
	CatchupWindow Duration `json:"catchup_window" swaggertype:"string" example:"1m"`
	// Paused: it does not fire.
	Paused bool `json:"paused"`
	// Note says why it was paused or unpaused.
	Note string `json:"note,omitempty"`
	// RemainingActions is how many actions it may still take (absent:
	// no limit).
	RemainingActions *int32 `json:"remaining_actions,omitempty"`
	// Info is what it did and will do.
	Info ScheduleInfo `json:"info"`
}

// ScheduleSummary is one schedule in a list.
type ScheduleSummary struct {
	// ScheduleID names it.
	ScheduleID string `json:"schedule_id"`
	// WorkflowType is the type its action starts.
	WorkflowType string `json:"workflow_type"`
	// Paused: it does not fire.
	Paused bool `json:"paused"`
	// Note says why it was paused.
	Note string `json:"note,omitempty"`
	// NextActionTime is its next slot (absent when paused or none).
	NextActionTime *time.Time `json:"next_action_time,omitempty"`
	// ActionCount is how many workflows it started.
	ActionCount int64 `json:"action_count"`
}

// ListSchedulesResponse is a page of schedules, by id.
type ListSchedulesResponse struct {
	// Schedules are at most the page size (default 100, at most 1000).
	Schedules []ScheduleSummary `json:"schedules"`
	// NextPageToken fetches the next page; empty on the last.
	NextPageToken string `json:"next_page_token,omitempty"`
}

// ScheduleBackfillResponse says what a backfill did.
type ScheduleBackfillResponse struct {
	// Started are the workflows started, oldest slot first.
	Started []string `json:"started"`
	// Skipped is how many slots the overlap policy skipped or that had
	// fired already.
	Skipped int `json:"skipped"`
}

// ScheduleTriggerResponse says what a trigger did.
type ScheduleTriggerResponse struct {
	// WorkflowID is the workflow started (empty when the overlap policy
	// skipped or buffered the action).
	WorkflowID string `json:"workflow_id,omitempty"`
	// Outcome is started, skipped or buffered.
	Outcome string `json:"outcome"`
}

// Outcomes of a trigger (ScheduleTriggerResponse.Outcome).
const (
	// TriggerStarted: the workflow started.
	TriggerStarted = "started"
	// TriggerSkipped: the overlap policy skipped it.
	TriggerSkipped = "skipped"
	// TriggerBuffered: it waits for the running workflow (buffer_one).
	TriggerBuffered = "buffered"
)

// String is the calendar spec in the CLI's syntax (tether schedule create
// --calendar): its non-empty fields as name=ranges joined by ";", each
// range START, START-END or START-END/STEP, e.g.
// "hour=9;day_of_week=1-5;comment=weekdays".
func (c ScheduleCalendarSpec) String() string {
	var parts []string
	for _, f := range []struct {
		name string
		rs   []ScheduleRange
	}{
		{"second", c.Second}, {"minute", c.Minute}, {"hour", c.Hour}, {"day_of_month", c.DayOfMonth},
		{"month", c.Month}, {"year", c.Year}, {"day_of_week", c.DayOfWeek},
	} {
		if len(f.rs) == 0 {
			continue
		}
		var rs []string
		for _, r := range f.rs {
			rs = append(rs, r.String())
		}
		parts = append(parts, f.name+"="+strings.Join(rs, ","))
	}
	if c.Comment != "" {
		parts = append(parts, "comment="+c.Comment)
	}
	return strings.Join(parts, ";")
}

// String is the range as START, START-END or START-END/STEP.
func (r ScheduleRange) String() string {
	s := strconv.Itoa(r.Start)
	if r.End == 0 || r.End == r.Start {
		return s
	}
	s += "-" + strconv.Itoa(r.End)
	if r.Step > 1 {
		s += "/" + strconv.Itoa(r.Step)
	}
	return s
}
