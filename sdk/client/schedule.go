package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/enums"
	"github.com/tetherhq/tether/sdk/internal/fnsig"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// Server-side schedules, named and shaped after Temporal's Go SDK
// (client.ScheduleClient): a schedule starts a workflow at each slot of its
// spec; the server fires each slot once (docs/api.md, "Schedules";
// docs/sdk.md).

// ScheduleOverlapPolicy is what a slot does while a workflow the schedule
// started still runs: Temporal's enumspb.ScheduleOverlapPolicy, so that
// enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL and the others work too.
type ScheduleOverlapPolicy = enums.ScheduleOverlapPolicy

// Overlap policies (enums.SCHEDULE_OVERLAP_POLICY_*).
const (
	// ScheduleOverlapPolicyUnspecified: the schedule's (for a trigger or a
	// backfill) or skip (for a schedule).
	ScheduleOverlapPolicyUnspecified = enums.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED
	// ScheduleOverlapPolicySkip: the slot is skipped (the default).
	ScheduleOverlapPolicySkip = enums.SCHEDULE_OVERLAP_POLICY_SKIP
	// ScheduleOverlapPolicyBufferOne: the slot starts when the running
	// workflow closes; at most one waits.
	ScheduleOverlapPolicyBufferOne = enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE
	// ScheduleOverlapPolicyBufferAll is Temporal's buffer-all policy, which
	// Tether does not have: the server refuses it (400 on overlap_policy).
	ScheduleOverlapPolicyBufferAll = enums.SCHEDULE_OVERLAP_POLICY_BUFFER_ALL
	// ScheduleOverlapPolicyCancelOther: the running workflows are asked to
	// cancel and the slot starts.
	ScheduleOverlapPolicyCancelOther = enums.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER
	// ScheduleOverlapPolicyTerminateOther: the running workflows are
	// terminated and the slot starts.
	ScheduleOverlapPolicyTerminateOther = enums.SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER
	// ScheduleOverlapPolicyAllowAll: the slot starts beside the running
	// workflows.
	ScheduleOverlapPolicyAllowAll = enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL
)

// overlapWire are the API's names of the overlap policies ("buffer_all",
// which the server refuses, for Temporal's buffer-all).
var overlapWire = map[ScheduleOverlapPolicy]string{
	ScheduleOverlapPolicyUnspecified:    "",
	ScheduleOverlapPolicySkip:           api.OverlapSkip,
	ScheduleOverlapPolicyBufferOne:      api.OverlapBufferOne,
	ScheduleOverlapPolicyBufferAll:      "buffer_all",
	ScheduleOverlapPolicyCancelOther:    api.OverlapCancelOther,
	ScheduleOverlapPolicyTerminateOther: api.OverlapTerminateOther,
	ScheduleOverlapPolicyAllowAll:       api.OverlapAllowAll,
}

// overlapName is p's name in the API (an unknown value: its number, which
// the server refuses).
func overlapName(p ScheduleOverlapPolicy) string {
	if s, ok := overlapWire[p]; ok {
		return s
	}
	return strconv.Itoa(int(p))
}

// ParseScheduleOverlapPolicy returns the policy of an API name (skip,
// buffer_one, cancel_other, terminate_other, allow_all; "" is
// ScheduleOverlapPolicyUnspecified).
func ParseScheduleOverlapPolicy(name string) (ScheduleOverlapPolicy, error) {
	for p, s := range overlapWire {
		if s == name && (name == "" || slices.Contains(api.OverlapPolicies(), name)) {
			return p, nil
		}
	}
	return 0, fmt.Errorf("client: unknown overlap policy %q (one of %v)", name, api.OverlapPolicies())
}

// ScheduleIntervalSpec is a fixed interval: slots at epoch + Offset +
// k*Every.
type ScheduleIntervalSpec struct {
	// Every is the interval (at least 1s).
	Every time.Duration
	// Offset shifts the slots (0 ≤ Offset < Every).
	Offset time.Duration
}

// ScheduleRange is a range of values of a calendar field: Start,
// Start+Step, … up to End, as Temporal's.
type ScheduleRange struct {
	// Start is the first value.
	Start int
	// End is the last value, not below Start (0: Start).
	End int
	// Step is the distance between values (0: 1).
	Step int
}

// ScheduleCalendarSpec is a calendar of slots, as Temporal's: the times
// whose every field is in one of its ranges, in the spec's TimeZoneName.
// An empty Second, Minute or Hour is 0; an empty DayOfMonth, Month, Year or
// DayOfWeek is any value. The day must match both DayOfMonth and DayOfWeek.
type ScheduleCalendarSpec struct {
	// Second ranges, 0 to 59 (default 0).
	Second []ScheduleRange
	// Minute ranges, 0 to 59 (default 0).
	Minute []ScheduleRange
	// Hour ranges, 0 to 23 (default 0).
	Hour []ScheduleRange
	// DayOfMonth ranges, 1 to 31 (default: every day).
	DayOfMonth []ScheduleRange
	// Month ranges, 1 to 12 (default: every month).
	Month []ScheduleRange
	// Year ranges, 1970 to 9999 (default: every year).
	Year []ScheduleRange
	// DayOfWeek ranges, 0 (Sunday) to 6 (default: every day).
	DayOfWeek []ScheduleRange
	// Comment describes it.
	Comment string
}

// ScheduleSpec is when a schedule fires: the union of its calendars',
// cron expressions' and intervals' times, less the times of Skip.
type ScheduleSpec struct {
	// Calendars are calendar specs.
	Calendars []ScheduleCalendarSpec
	// CronExpressions in standard syntax (five fields, or "@daily",
	// "@every 1h"), evaluated in TimeZoneName.
	CronExpressions []string
	// Intervals are fixed intervals.
	Intervals []ScheduleIntervalSpec
	// Skip are calendars whose times never fire.
	Skip []ScheduleCalendarSpec
	// Jitter delays each slot by a random amount below it.
	Jitter time.Duration
	// TimeZoneName is the IANA time zone of the calendars and cron
	// expressions (default UTC).
	TimeZoneName string
}

// ScheduleAction is what a schedule does at each slot; the one action is
// *ScheduleWorkflowAction (Temporal's interface of the same name).
type ScheduleAction interface {
	isScheduleAction()
}

// ScheduleWorkflowAction starts a workflow at each slot, with id ID (default
// the schedule id), "-" and the slot's time in RFC 3339 (UTC).
type ScheduleWorkflowAction struct {
	// ID is the prefix of the workflows' ids (default: the schedule id).
	ID string
	// Workflow is the workflow function or its registered name; Describe
	// gives the name.
	Workflow any
	// Args is the workflow's argument: none or one value, encoded as JSON
	// (Describe gives it as a json.RawMessage).
	Args []any
	// TaskQueue is the queue whose workers run it.
	TaskQueue string
	// WorkflowExecutionTimeout fails each workflow that runs longer (0: no
	// limit).
	WorkflowExecutionTimeout time.Duration
	// Concurrency limits how many workflows of its key run at once, as
	// StartWorkflowOptions.Concurrency does (nil: no limit); a slot whose
	// start its key refuses (ConcurrencyCancelNewest) is skipped.
	Concurrency *Concurrency
}

func (*ScheduleWorkflowAction) isScheduleAction() {}

// ScheduleOptions configures a new schedule (ScheduleClient.Create).
type ScheduleOptions struct {
	// ID names the schedule. Required.
	ID string
	// Spec is when it fires.
	Spec ScheduleSpec
	// Action is what it starts: a *ScheduleWorkflowAction. Required.
	Action ScheduleAction
	// Overlap is the overlap policy (default skip).
	Overlap ScheduleOverlapPolicy
	// CatchupWindow: after downtime, slots missed longer ago are skipped
	// (default 1m).
	CatchupWindow time.Duration
	// Paused creates it paused.
	Paused bool
	// Note says why it is paused.
	Note string
	// RemainingActions, when positive, limits how many workflows it
	// starts; 0: no limit.
	RemainingActions int
}

// SchedulePolicies are a schedule's policies.
type SchedulePolicies struct {
	// Overlap is the overlap policy.
	Overlap ScheduleOverlapPolicy
	// CatchupWindow is the catch-up window.
	CatchupWindow time.Duration
}

// ScheduleState is whether a schedule fires.
type ScheduleState struct {
	// Note says why it was paused or unpaused.
	Note string
	// Paused: it does not fire.
	Paused bool
	// LimitedActions: RemainingActions applies.
	LimitedActions bool
	// RemainingActions is how many workflows it may still start.
	RemainingActions int
}

// Schedule is a schedule's spec, action, policies and state.
type Schedule struct {
	// Action is what it starts (a *ScheduleWorkflowAction).
	Action ScheduleAction
	// Spec is when it fires.
	Spec *ScheduleSpec
	// Policy is its policies.
	Policy *SchedulePolicies
	// State is whether it fires.
	State *ScheduleState
}

// ScheduleWorkflowExecution is a workflow a schedule started.
type ScheduleWorkflowExecution struct {
	// WorkflowID is the workflow's id.
	WorkflowID string
}

// ScheduleActionResult is one action a schedule took.
type ScheduleActionResult struct {
	// ScheduleTime is the slot's nominal time.
	ScheduleTime time.Time
	// ActualTime is when the workflow was started.
	ActualTime time.Time
	// StartWorkflowResult is the workflow started.
	StartWorkflowResult *ScheduleWorkflowExecution
	// StartWorkflowStatus is the workflow's status now (api.Status*; ""
	// when it was deleted).
	StartWorkflowStatus string
	// Kind is scheduled, triggered or backfilled (api.ScheduleAction*).
	Kind string
}

// ScheduleInfo is what a schedule did and will do.
type ScheduleInfo struct {
	// NumActions is how many workflows it started.
	NumActions int
	// NumActionsMissedCatchupWindow is how many slots were past the
	// catch-up window.
	NumActionsMissedCatchupWindow int
	// NumActionsSkippedOverlap is how many slots the overlap policy skipped.
	NumActionsSkippedOverlap int
	// RunningWorkflows are its workflows still running.
	RunningWorkflows []ScheduleWorkflowExecution
	// RecentActions are its newest actions, newest first.
	RecentActions []ScheduleActionResult
	// NextActionTimes are its next slots.
	NextActionTimes []time.Time
	// CreatedAt is when it was created.
	CreatedAt time.Time
	// LastUpdateAt is when it was last changed.
	LastUpdateAt time.Time
}

// ScheduleDescription is ScheduleHandle.Describe's answer.
type ScheduleDescription struct {
	// Schedule is its spec, action, policies and state.
	Schedule Schedule
	// Info is what it did and will do.
	Info ScheduleInfo
}

// ScheduleUpdateInput is what an update function is given.
type ScheduleUpdateInput struct {
	// Description is the schedule as it is.
	Description ScheduleDescription
}

// ScheduleUpdate is what an update function returns.
type ScheduleUpdate struct {
	// Schedule replaces the schedule (nil: no change).
	Schedule *Schedule
}

// ScheduleUpdateOptions configures ScheduleHandle.Update.
type ScheduleUpdateOptions struct {
	// DoUpdate builds the new schedule from the current one.
	DoUpdate func(ScheduleUpdateInput) (*ScheduleUpdate, error)
}

// ScheduleTriggerOptions configures ScheduleHandle.Trigger.
type ScheduleTriggerOptions struct {
	// Overlap overrides the schedule's overlap policy for this action.
	Overlap ScheduleOverlapPolicy
}

// SchedulePauseOptions configures ScheduleHandle.Pause.
type SchedulePauseOptions struct {
	// Note says why.
	Note string
}

// ScheduleUnpauseOptions configures ScheduleHandle.Unpause.
type ScheduleUnpauseOptions struct {
	// Note says why.
	Note string
}

// ScheduleBackfill is a time range whose slots fire.
type ScheduleBackfill struct {
	// Start is the range's first time.
	Start time.Time
	// End is its last time.
	End time.Time
	// Overlap is the overlap policy of its slots (default the schedule's).
	Overlap ScheduleOverlapPolicy
}

// ScheduleBackfillOptions configures ScheduleHandle.Backfill.
type ScheduleBackfillOptions struct {
	// Backfill are the ranges, fired in order.
	Backfill []ScheduleBackfill
}

// ScheduleListOptions configures ScheduleClient.List.
type ScheduleListOptions struct {
	// PageSize is how many schedules each request fetches (default 100).
	PageSize int
}

// ScheduleListEntry is one schedule of a list.
type ScheduleListEntry struct {
	// ID names it.
	ID string
	// WorkflowType is the type its action starts.
	WorkflowType string
	// Paused: it does not fire.
	Paused bool
	// Note says why it was paused.
	Note string
	// NextActionTimes is its next slot (none when paused).
	NextActionTimes []time.Time
	// NumActions is how many workflows it started.
	NumActions int
}

// ScheduleListIterator walks a list of schedules, fetching pages as
// needed.
type ScheduleListIterator interface {
	// HasNext reports whether Next has an entry (or an error) to give.
	HasNext() bool
	// Next returns the next entry.
	Next() (*ScheduleListEntry, error)
}

// ScheduleHandle is a schedule of the client's namespace.
type ScheduleHandle interface {
	// GetID is the schedule's id.
	GetID() string
	// Delete deletes it (its workflows stay).
	Delete(ctx context.Context) error
	// Backfill fires the slots of the ranges.
	Backfill(ctx context.Context, options ScheduleBackfillOptions) error
	// Update replaces its spec, action, policies and state with what
	// DoUpdate returns.
	Update(ctx context.Context, options ScheduleUpdateOptions) error
	// Describe returns it with its next slots and recent actions.
	Describe(ctx context.Context) (*ScheduleDescription, error)
	// Trigger starts its action now.
	Trigger(ctx context.Context, options ScheduleTriggerOptions) error
	// Pause stops it firing.
	Pause(ctx context.Context, options SchedulePauseOptions) error
	// Unpause makes it fire again from its next slot.
	Unpause(ctx context.Context, options ScheduleUnpauseOptions) error
}

// ScheduleClient creates and finds schedules.
type ScheduleClient interface {
	// Create creates a schedule (ErrScheduleAlreadyRunning when the id is
	// taken).
	Create(ctx context.Context, options ScheduleOptions) (ScheduleHandle, error)
	// List lists the namespace's schedules by id.
	List(ctx context.Context, options ScheduleListOptions) (ScheduleListIterator, error)
	// GetHandle returns a handle on a schedule (not checked).
	GetHandle(ctx context.Context, scheduleID string) ScheduleHandle
}

// ScheduleClient returns the client of the namespace's schedules.
func (c *TetherClient) ScheduleClient() ScheduleClient { return &scheduleClient{c: c} }

type scheduleClient struct{ c *TetherClient }

type scheduleHandle struct {
	c  *TetherClient
	id string
}

func (sc *scheduleClient) Create(ctx context.Context, o ScheduleOptions) (ScheduleHandle, error) {
	if o.ID == "" {
		return nil, errors.New("tether: create schedule: no ID")
	}
	req, err := scheduleRequest(o.Spec, o.Action, SchedulePolicies{Overlap: o.Overlap, CatchupWindow: o.CatchupWindow},
		ScheduleState{Paused: o.Paused, Note: o.Note, LimitedActions: o.RemainingActions > 0, RemainingActions: o.RemainingActions})
	if err != nil {
		return nil, fmt.Errorf("tether: create schedule %s: %w", o.ID, err)
	}
	req.ScheduleID = o.ID
	if _, err := sc.c.do(ctx, http.MethodPost, "POST /schedules", nil, req, nil, "schedules"); err != nil {
		return nil, refine(err, ErrScheduleAlreadyRunning)
	}
	return &scheduleHandle{c: sc.c, id: o.ID}, nil
}

func (sc *scheduleClient) GetHandle(_ context.Context, id string) ScheduleHandle {
	return &scheduleHandle{c: sc.c, id: id}
}

func (sc *scheduleClient) List(ctx context.Context, o ScheduleListOptions) (ScheduleListIterator, error) {
	size := o.PageSize
	if size <= 0 {
		size = 100
	}
	it := &scheduleIterator{ctx: ctx, c: sc.c, size: size}
	it.fetch()
	return it, nil
}

// scheduleIterator pages through GET /schedules.
type scheduleIterator struct {
	ctx   context.Context
	c     *TetherClient
	size  int
	page  []api.ScheduleSummary
	token string
	done  bool
	err   error
}

func (it *scheduleIterator) fetch() {
	q := url.Values{"page_size": {strconv.Itoa(it.size)}}
	if it.token != "" {
		q.Set("page_token", it.token)
	}
	var resp api.ListSchedulesResponse
	if _, err := it.c.do(it.ctx, http.MethodGet, "GET /schedules", q, nil, &resp, "schedules"); err != nil {
		it.err = err
		return
	}
	it.page, it.token = resp.Schedules, resp.NextPageToken
	it.done = resp.NextPageToken == ""
}

func (it *scheduleIterator) HasNext() bool {
	for len(it.page) == 0 && it.err == nil && !it.done {
		it.fetch()
	}
	return len(it.page) > 0 || it.err != nil
}

func (it *scheduleIterator) Next() (*ScheduleListEntry, error) {
	if !it.HasNext() {
		return nil, errors.New("tether: schedule list: no more entries")
	}
	if it.err != nil {
		err := it.err
		it.err, it.done = nil, true
		return nil, err
	}
	s := it.page[0]
	it.page = it.page[1:]
	e := &ScheduleListEntry{ID: s.ScheduleID, WorkflowType: s.WorkflowType, Paused: s.Paused, Note: s.Note, NumActions: int(s.ActionCount)}
	if s.NextActionTime != nil {
		e.NextActionTimes = []time.Time{*s.NextActionTime}
	}
	return e, nil
}

// scheduleRequest is the wire form of a schedule.
func scheduleRequest(spec ScheduleSpec, action ScheduleAction, pol SchedulePolicies, st ScheduleState) (api.ScheduleRequest, error) {
	wa, ok := action.(*ScheduleWorkflowAction)
	if !ok || wa == nil {
		return api.ScheduleRequest{}, errors.New("action: want a *ScheduleWorkflowAction")
	}
	name, err := workflowName(wa.Workflow)
	if err != nil {
		return api.ScheduleRequest{}, fmt.Errorf("action: %w", err)
	}
	var input json.RawMessage
	switch len(wa.Args) {
	case 0:
	case 1:
		if input, err = fnsig.Encode(wa.Args[0]); err != nil {
			return api.ScheduleRequest{}, fmt.Errorf("action: args: %w", err)
		}
	default:
		return api.ScheduleRequest{}, errors.New("action: at most one argument")
	}
	req := api.ScheduleRequest{
		Spec: api.ScheduleSpec{CronExpressions: spec.CronExpressions, Jitter: api.Duration(spec.Jitter), TimeZoneName: spec.TimeZoneName},
		Action: api.ScheduleWorkflowAction{WorkflowType: name, TaskQueue: wa.TaskQueue, Input: input, WorkflowIDPrefix: wa.ID,
			ExecutionTimeout: api.Duration(wa.WorkflowExecutionTimeout), Concurrency: wf.APIConcurrency(wa.Concurrency)},
		OverlapPolicy: overlapName(pol.Overlap), CatchupWindow: api.Duration(pol.CatchupWindow), Paused: st.Paused, Note: st.Note,
	}
	req.Spec.Calendars, req.Spec.Skip = calendarsToAPI(spec.Calendars), calendarsToAPI(spec.Skip)
	for _, iv := range spec.Intervals {
		req.Spec.Intervals = append(req.Spec.Intervals, api.ScheduleIntervalSpec{Every: api.Duration(iv.Every), Offset: api.Duration(iv.Offset)})
	}
	if st.LimitedActions {
		n := int32(st.RemainingActions)
		req.RemainingActions = &n
	}
	return req, nil
}

func (h *scheduleHandle) GetID() string { return h.id }

func (h *scheduleHandle) Describe(ctx context.Context) (*ScheduleDescription, error) {
	s, err := h.c.DescribeSchedule(ctx, h.id)
	if err != nil {
		return nil, err
	}
	return scheduleDescription(*s), nil
}

// DescribeSchedule returns a schedule in its wire form (the CLI's and the
// UI's view; ScheduleHandle.Describe is the SDK's). ErrNotFound when
// unknown.
func (c *TetherClient) DescribeSchedule(ctx context.Context, id string) (*api.Schedule, error) {
	var s api.Schedule
	if _, err := c.do(ctx, http.MethodGet, "GET /schedules/{id}", nil, nil, &s, "schedules", id); err != nil {
		return nil, err
	}
	return &s, nil
}

// ListSchedules returns one page of the namespace's schedules in their
// wire form (pageSize 0: the server's default; token: the previous page's
// NextPageToken).
func (c *TetherClient) ListSchedules(ctx context.Context, pageSize int, token string) (*api.ListSchedulesResponse, error) {
	q := url.Values{}
	if pageSize > 0 {
		q.Set("page_size", strconv.Itoa(pageSize))
	}
	if token != "" {
		q.Set("page_token", token)
	}
	var resp api.ListSchedulesResponse
	if _, err := c.do(ctx, http.MethodGet, "GET /schedules", q, nil, &resp, "schedules"); err != nil {
		return nil, err
	}
	return &resp, nil
}

// CreateSchedule creates a schedule from its wire form
// (ErrScheduleAlreadyRunning when the id is taken).
func (c *TetherClient) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (*api.Schedule, error) {
	var s api.Schedule
	if _, err := c.do(ctx, http.MethodPost, "POST /schedules", nil, req, &s, "schedules"); err != nil {
		return nil, refine(err, ErrScheduleAlreadyRunning)
	}
	return &s, nil
}

// ReplaceSchedule replaces a schedule's spec, action and policies (PUT).
func (c *TetherClient) ReplaceSchedule(ctx context.Context, id string, req api.ScheduleRequest) (*api.Schedule, error) {
	var s api.Schedule
	if _, err := c.do(ctx, http.MethodPut, "PUT /schedules/{id}", nil, req, &s, "schedules", id); err != nil {
		return nil, err
	}
	return &s, nil
}

// TriggerSchedule fires a schedule's action now and says what happened
// (started, skipped or buffered).
func (c *TetherClient) TriggerSchedule(ctx context.Context, id string, overlap ScheduleOverlapPolicy) (*api.ScheduleTriggerResponse, error) {
	var r api.ScheduleTriggerResponse
	if _, err := c.do(ctx, http.MethodPost, "POST /schedules/{id}/trigger", nil,
		api.ScheduleTriggerRequest{OverlapPolicy: overlapName(overlap)}, &r, "schedules", id, "trigger"); err != nil {
		return nil, err
	}
	return &r, nil
}

// BackfillSchedule fires the slots of one range and says which workflows
// started.
func (c *TetherClient) BackfillSchedule(ctx context.Context, id string, b ScheduleBackfill) (*api.ScheduleBackfillResponse, error) {
	var r api.ScheduleBackfillResponse
	req := api.ScheduleBackfillRequest{StartAt: b.Start, EndAt: b.End, OverlapPolicy: overlapName(b.Overlap)}
	if _, err := c.do(ctx, http.MethodPost, "POST /schedules/{id}/backfill", nil, req, &r, "schedules", id, "backfill"); err != nil {
		return nil, err
	}
	return &r, nil
}

// scheduleDescription is the SDK's form of a described schedule.
func scheduleDescription(s api.Schedule) *ScheduleDescription {
	spec := &ScheduleSpec{CronExpressions: s.Spec.CronExpressions, Jitter: s.Spec.Jitter.D(), TimeZoneName: s.Spec.TimeZoneName}
	spec.Calendars, spec.Skip = calendarsFromAPI(s.Spec.Calendars), calendarsFromAPI(s.Spec.Skip)
	for _, iv := range s.Spec.Intervals {
		spec.Intervals = append(spec.Intervals, ScheduleIntervalSpec{Every: iv.Every.D(), Offset: iv.Offset.D()})
	}
	action := &ScheduleWorkflowAction{ID: s.Action.WorkflowIDPrefix, Workflow: s.Action.WorkflowType, TaskQueue: s.Action.TaskQueue,
		WorkflowExecutionTimeout: s.Action.ExecutionTimeout.D(), Concurrency: wf.FromAPIConcurrency(s.Action.Concurrency)}
	if len(s.Action.Input) > 0 {
		action.Args = []any{s.Action.Input}
	}
	st := &ScheduleState{Note: s.Note, Paused: s.Paused}
	if s.RemainingActions != nil {
		st.LimitedActions, st.RemainingActions = true, int(*s.RemainingActions)
	}
	d := &ScheduleDescription{
		Schedule: Schedule{Action: action, Spec: spec, State: st,
			Policy: &SchedulePolicies{Overlap: overlapOf(s.OverlapPolicy), CatchupWindow: s.CatchupWindow.D()}},
		Info: ScheduleInfo{NumActions: int(s.Info.ActionCount), NumActionsMissedCatchupWindow: int(s.Info.MissedCatchupWindow),
			NumActionsSkippedOverlap: int(s.Info.OverlapSkipped), NextActionTimes: s.Info.NextActionTimes,
			CreatedAt: s.Info.CreatedAt, LastUpdateAt: s.Info.UpdatedAt},
	}
	for _, id := range s.Info.RunningWorkflows {
		d.Info.RunningWorkflows = append(d.Info.RunningWorkflows, ScheduleWorkflowExecution{WorkflowID: id})
	}
	for _, a := range s.Info.RecentActions {
		d.Info.RecentActions = append(d.Info.RecentActions, ScheduleActionResult{ScheduleTime: a.SlotAt, ActualTime: a.FiredAt,
			StartWorkflowResult: &ScheduleWorkflowExecution{WorkflowID: a.WorkflowID}, StartWorkflowStatus: a.Status, Kind: a.Kind})
	}
	return d
}

func (h *scheduleHandle) Update(ctx context.Context, o ScheduleUpdateOptions) error {
	if o.DoUpdate == nil {
		return errors.New("tether: update schedule: no DoUpdate")
	}
	d, err := h.Describe(ctx)
	if err != nil {
		return err
	}
	u, err := o.DoUpdate(ScheduleUpdateInput{Description: *d})
	if err != nil {
		return err
	}
	if u == nil || u.Schedule == nil {
		return nil
	}
	s := u.Schedule
	spec, pol, st := ScheduleSpec{}, SchedulePolicies{}, ScheduleState{}
	if s.Spec != nil {
		spec = *s.Spec
	}
	if s.Policy != nil {
		pol = *s.Policy
	}
	if s.State != nil {
		st = *s.State
	}
	req, err := scheduleRequest(spec, s.Action, pol, st)
	if err != nil {
		return fmt.Errorf("tether: update schedule %s: %w", h.id, err)
	}
	_, err = h.c.do(ctx, http.MethodPut, "PUT /schedules/{id}", nil, req, nil, "schedules", h.id)
	return err
}

func (h *scheduleHandle) Delete(ctx context.Context) error {
	_, err := h.c.do(ctx, http.MethodDelete, "DELETE /schedules/{id}", nil, nil, nil, "schedules", h.id)
	return err
}

func (h *scheduleHandle) Pause(ctx context.Context, o SchedulePauseOptions) error {
	_, err := h.c.do(ctx, http.MethodPost, "POST /schedules/{id}/pause", nil, api.SchedulePauseRequest{Note: o.Note}, nil, "schedules", h.id, "pause")
	return err
}

func (h *scheduleHandle) Unpause(ctx context.Context, o ScheduleUnpauseOptions) error {
	_, err := h.c.do(ctx, http.MethodPost, "POST /schedules/{id}/unpause", nil, api.SchedulePauseRequest{Note: o.Note}, nil, "schedules", h.id, "unpause")
	return err
}

func (h *scheduleHandle) Trigger(ctx context.Context, o ScheduleTriggerOptions) error {
	_, err := h.c.TriggerSchedule(ctx, h.id, o.Overlap)
	return err
}

func (h *scheduleHandle) Backfill(ctx context.Context, o ScheduleBackfillOptions) error {
	for _, b := range o.Backfill {
		if _, err := h.c.BackfillSchedule(ctx, h.id, b); err != nil {
			return err
		}
	}
	return nil
}

// calendarsToAPI is the wire form of calendar specs.
func calendarsToAPI(cs []ScheduleCalendarSpec) []api.ScheduleCalendarSpec {
	if len(cs) == 0 {
		return nil
	}
	rs := func(in []ScheduleRange) []api.ScheduleRange {
		var out []api.ScheduleRange
		for _, r := range in {
			out = append(out, api.ScheduleRange(r))
		}
		return out
	}
	out := make([]api.ScheduleCalendarSpec, 0, len(cs))
	for _, c := range cs {
		out = append(out, api.ScheduleCalendarSpec{Second: rs(c.Second), Minute: rs(c.Minute), Hour: rs(c.Hour),
			DayOfMonth: rs(c.DayOfMonth), Month: rs(c.Month), Year: rs(c.Year), DayOfWeek: rs(c.DayOfWeek), Comment: c.Comment})
	}
	return out
}

// calendarsFromAPI is the SDK's form of wire calendar specs.
func calendarsFromAPI(cs []api.ScheduleCalendarSpec) []ScheduleCalendarSpec {
	if len(cs) == 0 {
		return nil
	}
	rs := func(in []api.ScheduleRange) []ScheduleRange {
		var out []ScheduleRange
		for _, r := range in {
			out = append(out, ScheduleRange(r))
		}
		return out
	}
	out := make([]ScheduleCalendarSpec, 0, len(cs))
	for _, c := range cs {
		out = append(out, ScheduleCalendarSpec{Second: rs(c.Second), Minute: rs(c.Minute), Hour: rs(c.Hour),
			DayOfMonth: rs(c.DayOfMonth), Month: rs(c.Month), Year: rs(c.Year), DayOfWeek: rs(c.DayOfWeek), Comment: c.Comment})
	}
	return out
}

// overlapOf is the policy of the API's name (unspecified when unknown).
func overlapOf(name string) ScheduleOverlapPolicy {
	p, _ := ParseScheduleOverlapPolicy(name)
	return p
}
