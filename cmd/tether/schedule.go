package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
)

// scheduleCommand is `tether schedule …`.
func (c *cli) scheduleCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "schedule",
		Aliases: []string{"sched"},
		Short:   "create, list, describe, update, pause, unpause, trigger, backfill and delete schedules",
		Long: `Manage the server's schedules over the REST API (docs/api.md, "Schedules").

A schedule starts a workflow at each slot of its spec (calendars and cron
expressions in a time zone, fixed intervals), named "<id>-<slot time>" so that a slot starts
once; the server fires the slots whatever replica is up.`,
		Example: `  tether schedule create nightly --workflow-type Report --task-queue main --cron "0 3 * * *" --time-zone Europe/Paris
  tether schedule describe nightly
  tether schedule trigger nightly`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(c.scheduleCreate(), c.scheduleUpdate(), c.scheduleList(), c.scheduleDescribe(),
		c.schedulePause(true), c.schedulePause(false), c.scheduleTrigger(), c.scheduleBackfill(), c.scheduleDelete())
	return cmd
}

// scheduleFlags are the flags of create and update: a whole schedule.
type scheduleFlags struct {
	typ, queue, input, prefix, zone, overlap, note string
	crons, intervals, calendars, skip              []string
	jitter, catchup, timeout                       time.Duration
	paused                                         bool
	remaining                                      int
	// conc is each started workflow's concurrency limit (--concurrency-*).
	conc api.Concurrency
}

func (f *scheduleFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.typ, "workflow-type", "t", "", "the workflow type to start (required)")
	fl.StringVarP(&f.queue, "task-queue", "q", "", "the task queue whose workers run it (required)")
	fl.StringVarP(&f.input, "input", "i", "", "the workflow's input, as JSON")
	fl.StringVar(&f.prefix, "workflow-id-prefix", "", "the prefix of the workflow ids (default: the schedule id)")
	fl.StringArrayVar(&f.crons, "cron", nil, `a cron expression ("0 3 * * *", "@hourly"); repeatable`)
	fl.StringArrayVar(&f.intervals, "interval", nil, "an interval EVERY[/OFFSET] (1h, 1h/15m); repeatable")
	fl.StringArrayVar(&f.calendars, "calendar", nil, `a calendar spec FIELD=RANGES;... ("hour=9;day_of_week=1-5", "minute=*/15;hour=9-17"); repeatable`)
	fl.StringArrayVar(&f.skip, "skip", nil, "a calendar spec whose times never fire, in the syntax of --calendar; repeatable")
	fl.StringVar(&f.zone, "time-zone", "", "the IANA time zone of the calendars and cron expressions (default UTC)")
	fl.DurationVar(&f.jitter, "jitter", 0, "delay each slot by a random amount below this")
	fl.StringVar(&f.overlap, "overlap", "", "overlap policy: "+strings.Join(api.OverlapPolicies(), ", ")+" (default skip)")
	fl.DurationVar(&f.catchup, "catchup-window", 0, "after downtime, skip slots older than this (default 1m)")
	fl.DurationVar(&f.timeout, "execution-timeout", 0, "bound on each workflow (0: none)")
	fl.BoolVar(&f.paused, "paused", false, "leave the schedule paused")
	fl.StringVar(&f.note, "note", "", "why it is paused")
	fl.IntVar(&f.remaining, "remaining-actions", 0, "stop after this many workflows (0: no limit)")
	fl.StringVar(&f.conc.Key, "concurrency-key", "", "a concurrency key of each started workflow: at most --concurrency-limit workflows of the key run at once")
	fl.IntVar(&f.conc.Limit, "concurrency-limit", 0, "how many workflows of --concurrency-key may run at once")
	fl.StringVar(&f.conc.Strategy, "concurrency-strategy", "", "past the limit: queue (default: wait), cancel_newest (skip the slot) or cancel_oldest (cancel the oldest running)")
}

// request builds the wire form of the schedule the flags describe.
func (f *scheduleFlags) request() (api.ScheduleRequest, error) {
	if f.typ == "" || f.queue == "" {
		return api.ScheduleRequest{}, usageErrorf("--workflow-type and --task-queue are required")
	}
	if f.overlap != "" && !contains(api.OverlapPolicies(), f.overlap) {
		return api.ScheduleRequest{}, usageErrorf("--overlap must be one of %v, not %q", api.OverlapPolicies(), f.overlap)
	}
	if f.remaining < 0 {
		return api.ScheduleRequest{}, usageErrorf("--remaining-actions must not be negative")
	}
	raw, err := jsonFlag("input", f.input)
	if err != nil {
		return api.ScheduleRequest{}, err
	}
	req := api.ScheduleRequest{
		Spec: api.ScheduleSpec{CronExpressions: f.crons, Jitter: api.Duration(f.jitter), TimeZoneName: f.zone},
		Action: api.ScheduleWorkflowAction{WorkflowType: f.typ, TaskQueue: f.queue, Input: raw, WorkflowIDPrefix: f.prefix,
			ExecutionTimeout: api.Duration(f.timeout)},
		OverlapPolicy: f.overlap, CatchupWindow: api.Duration(f.catchup), Paused: f.paused, Note: f.note,
	}
	if f.conc != (api.Concurrency{}) {
		c := f.conc
		req.Action.Concurrency = &c
	}
	for _, text := range f.calendars {
		cal, err := parseCalendarFlag(text)
		if err != nil {
			return api.ScheduleRequest{}, usageErrorf("--calendar %q: %v", text, err)
		}
		req.Spec.Calendars = append(req.Spec.Calendars, cal)
	}
	for _, text := range f.skip {
		cal, err := parseCalendarFlag(text)
		if err != nil {
			return api.ScheduleRequest{}, usageErrorf("--skip %q: %v", text, err)
		}
		req.Spec.Skip = append(req.Spec.Skip, cal)
	}
	for _, iv := range f.intervals {
		everyText, offText, _ := strings.Cut(iv, "/")
		every, err := time.ParseDuration(everyText)
		if err != nil {
			return api.ScheduleRequest{}, usageErrorf("--interval %q: %v", iv, err)
		}
		var off time.Duration
		if offText != "" {
			if off, err = time.ParseDuration(offText); err != nil {
				return api.ScheduleRequest{}, usageErrorf("--interval %q: offset: %v", iv, err)
			}
		}
		req.Spec.Intervals = append(req.Spec.Intervals, api.ScheduleIntervalSpec{Every: api.Duration(every), Offset: api.Duration(off)})
	}
	if f.remaining > 0 {
		n := int32(f.remaining)
		req.RemainingActions = &n
	}
	return req, nil
}

func (c *cli) scheduleCreate() *cobra.Command {
	var f scheduleFlags
	cmd := &cobra.Command{
		Use:   "create ID --workflow-type TYPE --task-queue QUEUE (--calendar SPEC | --cron EXPR | --interval EVERY[/OFFSET])...",
		Short: "create a schedule",
		Long: `Create a schedule that starts a workflow of TYPE at each slot of its spec:
the union of its calendars and cron expressions (in --time-zone) and its
intervals, less the times of its --skip calendars. An id in use exits with
the conflict code.

A calendar spec (--calendar, --skip) is FIELD=RANGES pairs joined by ";".
The fields are second, minute, hour (default 0), day_of_month, month, year
and day_of_week (0 is Sunday; default: any), and comment=TEXT. RANGES are
ranges joined by ",": N, N-M, N-M/STEP, * (the field's whole range) or
*/STEP. A day must match both day_of_month and day_of_week.`,
		Example: `  tether schedule create nightly -t Report -q main --cron "0 3 * * *" --time-zone Europe/Paris
  tether schedule create standup -t Remind -q main --calendar 'hour=9;day_of_week=1-5;comment=weekdays at nine'
  tether schedule create office -t Poll -q main --calendar 'minute=*/15;hour=9-17' --skip 'month=12;day_of_month=24-26'
  tether schedule create poll -t Poll -q main --interval 5m --overlap buffer_one --input '{"url":"x"}'
  tether schedule create once-a-day -t Tick -q main --interval 24h/6h --remaining-actions 7 -o json`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			req.ScheduleID = args[0]
			cl, err := c.client()
			if err != nil {
				return err
			}
			s, err := cl.CreateSchedule(cmd.Context(), req)
			if err != nil {
				return apiError(err)
			}
			return c.printSchedule(s)
		},
	}
	f.add(cmd)
	return cmd
}

func (c *cli) scheduleUpdate() *cobra.Command {
	var f scheduleFlags
	cmd := &cobra.Command{
		Use:   "update ID --workflow-type TYPE --task-queue QUEUE (--calendar SPEC | --cron EXPR | --interval EVERY[/OFFSET])...",
		Short: "replace a schedule's spec, action and policies",
		Long: `Replace everything but the id of a schedule with what the flags say (the
flags of create; what a flag leaves out takes its default). Its counters and
recent actions stay; its next slot is computed from now.`,
		Example: `  tether schedule update nightly -t Report -q main --cron "0 4 * * *"`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := f.request()
			if err != nil {
				return err
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			s, err := cl.ReplaceSchedule(cmd.Context(), args[0], req)
			if err != nil {
				return apiError(err)
			}
			return c.printSchedule(s)
		},
	}
	f.add(cmd)
	return cmd
}

func (c *cli) scheduleList() *cobra.Command {
	var token string
	var limit int
	var all bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "list schedules by id",
		Long: `List the namespace's schedules by id, one page (--limit) at a time; the token
of the next page is printed on stderr (table) or in next_page_token (json).
--all follows every page.`,
		Example: `  tether schedule list
  tether schedule list --all -o json | jq -r '.schedules[].schedule_id'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 || limit > 1000 {
				return usageErrorf("--limit must be between 0 and 1000")
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			var resp api.ListSchedulesResponse
			resp.Schedules, resp.NextPageToken, err = collectPages(all, token, func(token string) ([]api.ScheduleSummary, string, error) {
				page, err := cl.ListSchedules(cmd.Context(), limit, token)
				return page.Schedules, page.NextPageToken, err
			})
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(resp)
			}
			rows := [][]string{{"SCHEDULE ID", "WORKFLOW TYPE", "PAUSED", "NEXT", "ACTIONS", "NOTE"}}
			for _, s := range resp.Schedules {
				rows = append(rows, []string{s.ScheduleID, s.WorkflowType, strconv.FormatBool(s.Paused),
					timePtrText(s.NextActionTime), strconv.FormatInt(s.ActionCount, 10), s.Note})
			}
			if err := c.table(rows); err != nil {
				return err
			}
			if resp.NextPageToken != "" {
				fmt.Fprintf(c.stderr, "more: add --page-token %s (or --all)\n", resp.NextPageToken)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&limit, "limit", 0, "schedules per page (0: the server's default)")
	f.StringVar(&token, "page-token", "", "the next_page_token of the previous page")
	f.BoolVar(&all, "all", false, "follow every page")
	return cmd
}

func (c *cli) scheduleDescribe() *cobra.Command {
	return &cobra.Command{
		Use:   "describe ID",
		Short: "describe a schedule: spec, state, next runs, recent actions",
		Example: `  tether schedule describe nightly
  tether schedule describe nightly -o json | jq '.info.next_action_times'`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			s, err := cl.DescribeSchedule(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return c.printSchedule(s)
		},
	}
}

// printSchedule prints a schedule as JSON or as name/value lines followed
// by its recent actions.
func (c *cli) printSchedule(s *api.Schedule) error {
	if c.json() {
		return c.printJSON(s)
	}
	var spec []string
	for _, e := range s.Spec.CronExpressions {
		spec = append(spec, "cron "+e)
	}
	for _, cal := range s.Spec.Calendars {
		spec = append(spec, "calendar "+cal.String())
	}
	for _, cal := range s.Spec.Skip {
		spec = append(spec, "skip "+cal.String())
	}
	for _, iv := range s.Spec.Intervals {
		t := "every " + iv.Every.D().String()
		if iv.Offset != 0 {
			t += " offset " + iv.Offset.D().String()
		}
		spec = append(spec, t)
	}
	var next []string
	for _, t := range s.Info.NextActionTimes {
		next = append(next, timeText(t))
	}
	remaining := ""
	if s.RemainingActions != nil {
		remaining = strconv.Itoa(int(*s.RemainingActions))
	}
	if err := c.fields(
		"schedule_id", s.ScheduleID,
		"spec", strings.Join(spec, "; "),
		"time_zone", s.Spec.TimeZoneName,
		"jitter", durationText(s.Spec.Jitter.D()),
		"workflow_type", s.Action.WorkflowType,
		"task_queue", s.Action.TaskQueue,
		"input", jsonText(s.Action.Input),
		"overlap_policy", s.OverlapPolicy,
		"catchup_window", s.CatchupWindow.D().String(),
		"paused", strconv.FormatBool(s.Paused),
		"note", s.Note,
		"remaining_actions", remaining,
		"actions", strconv.FormatInt(s.Info.ActionCount, 10),
		"overlap_skipped", strconv.FormatInt(s.Info.OverlapSkipped, 10),
		"missed_catchup", strconv.FormatInt(s.Info.MissedCatchupWindow, 10),
		"running", strings.Join(s.Info.RunningWorkflows, " "),
		"next_runs", strings.Join(next, " "),
	); err != nil {
		return err
	}
	if len(s.Info.RecentActions) == 0 {
		return nil
	}
	fmt.Fprintln(c.stdout)
	rows := [][]string{{"SLOT", "KIND", "WORKFLOW ID", "STATUS"}}
	for _, a := range s.Info.RecentActions {
		rows = append(rows, []string{timeText(a.SlotAt), a.Kind, a.WorkflowID, a.Status})
	}
	return c.table(rows)
}

func durationText(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

func (c *cli) schedulePause(pause bool) *cobra.Command {
	var note string
	use, short, example := "pause", "pause a schedule (it fires no slot until unpaused)", `  tether schedule pause nightly --note "migration until Monday"`
	if !pause {
		use, short, example = "unpause", "unpause a schedule (it fires from its next slot after now)", `  tether schedule unpause nightly --note "migration done"`
	}
	cmd := &cobra.Command{
		Use:     use + " ID [--note TEXT]",
		Short:   short,
		Example: example,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			h := cl.ScheduleClient().GetHandle(cmd.Context(), args[0])
			if pause {
				err = h.Pause(cmd.Context(), client.SchedulePauseOptions{Note: note})
			} else {
				err = h.Unpause(cmd.Context(), client.ScheduleUnpauseOptions{Note: note})
			}
			if err != nil {
				return apiError(err)
			}
			s, err := cl.DescribeSchedule(cmd.Context(), args[0])
			if err != nil {
				return apiError(err)
			}
			return c.printSchedule(s)
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "why")
	return cmd
}

func (c *cli) scheduleTrigger() *cobra.Command {
	var overlap string
	cmd := &cobra.Command{
		Use:   "trigger ID [--overlap POLICY]",
		Short: "start the schedule's action now",
		Long: `Start the schedule's action now, with its overlap policy unless --overlap
overrides it (also when paused). Prints started, skipped or buffered.`,
		Example: `  tether schedule trigger nightly
  tether schedule trigger nightly --overlap allow_all -o json`,
		Args: exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if overlap != "" && !contains(api.OverlapPolicies(), overlap) {
				return usageErrorf("--overlap must be one of %v, not %q", api.OverlapPolicies(), overlap)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			policy, err := client.ParseScheduleOverlapPolicy(overlap)
			if err != nil {
				return usageErrorf("--overlap: %v", err)
			}
			r, err := cl.TriggerSchedule(cmd.Context(), args[0], policy)
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(r)
			}
			return c.fields("outcome", r.Outcome, "workflow_id", r.WorkflowID)
		},
	}
	cmd.Flags().StringVar(&overlap, "overlap", "", "overlap policy for this action (default: the schedule's)")
	return cmd
}

func (c *cli) scheduleBackfill() *cobra.Command {
	var start, end, overlap string
	cmd := &cobra.Command{
		Use:   "backfill ID --start TIME --end TIME [--overlap POLICY]",
		Short: "fire every slot of a time range",
		Long: `Fire every slot of the schedule's spec between --start and --end (RFC 3339,
both included; at most 1000 slots), oldest first, with --overlap (default:
the schedule's). A slot that fired already is skipped.`,
		Example: `  tether schedule backfill nightly --start 2024-01-01T00:00:00Z --end 2024-01-07T23:59:59Z --overlap allow_all`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, err := time.Parse(time.RFC3339, start)
			if err != nil {
				return usageErrorf("--start: want an RFC 3339 time: %v", err)
			}
			to, err := time.Parse(time.RFC3339, end)
			if err != nil {
				return usageErrorf("--end: want an RFC 3339 time: %v", err)
			}
			if to.Before(from) {
				return usageErrorf("--end is before --start")
			}
			if overlap != "" && !contains(api.OverlapPolicies(), overlap) {
				return usageErrorf("--overlap must be one of %v, not %q", api.OverlapPolicies(), overlap)
			}
			cl, err := c.client()
			if err != nil {
				return err
			}
			policy, err := client.ParseScheduleOverlapPolicy(overlap)
			if err != nil {
				return usageErrorf("--overlap: %v", err)
			}
			r, err := cl.BackfillSchedule(cmd.Context(), args[0], client.ScheduleBackfill{Start: from, End: to, Overlap: policy})
			if err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(r)
			}
			rows := [][]string{{"STARTED"}}
			for _, id := range r.Started {
				rows = append(rows, []string{id})
			}
			if err := c.table(rows); err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "%d started, %d skipped\n", len(r.Started), r.Skipped)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&start, "start", "", "the range's first time, RFC 3339 (required)")
	f.StringVar(&end, "end", "", "the range's last time, RFC 3339 (required)")
	f.StringVar(&overlap, "overlap", "", "overlap policy of the slots (default: the schedule's)")
	return cmd
}

func (c *cli) scheduleDelete() *cobra.Command {
	return &cobra.Command{
		Use:     "delete ID",
		Short:   "delete a schedule (the workflows it started stay)",
		Example: `  tether schedule delete nightly`,
		Args:    exactArgs("ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cl, err := c.client()
			if err != nil {
				return err
			}
			if err := cl.ScheduleClient().GetHandle(cmd.Context(), args[0]).Delete(cmd.Context()); err != nil {
				return apiError(err)
			}
			if c.json() {
				return c.printJSON(map[string]string{"deleted": args[0]})
			}
			return c.fields("deleted", args[0])
		},
	}
}

// calendarBounds are the bounds of the fields of a calendar spec, for "*".
var calendarBounds = map[string][2]int{
	"second": {0, 59}, "minute": {0, 59}, "hour": {0, 23}, "day_of_month": {1, 31},
	"month": {1, 12}, "year": {1970, 9999}, "day_of_week": {0, 6},
}

// parseCalendarFlag parses a calendar spec in the syntax of --calendar:
// FIELD=RANGES pairs joined by ";", RANGES as N, N-M, N-M/STEP, * or
// */STEP joined by ",". The server checks the bounds.
func parseCalendarFlag(text string) (api.ScheduleCalendarSpec, error) {
	var c api.ScheduleCalendarSpec
	if strings.TrimSpace(text) == "" {
		return c, errors.New("empty calendar spec")
	}
	for part := range strings.SplitSeq(text, ";") {
		name, value, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return c, fmt.Errorf("%q: want FIELD=RANGES", part)
		}
		if name == "comment" {
			c.Comment = value
			continue
		}
		bounds, known := calendarBounds[name]
		if !known {
			return c, fmt.Errorf("unknown field %q (want second, minute, hour, day_of_month, month, year, day_of_week or comment)", name)
		}
		var rs []api.ScheduleRange
		for rt := range strings.SplitSeq(value, ",") {
			r, err := parseRangeFlag(strings.TrimSpace(rt), bounds)
			if err != nil {
				return c, fmt.Errorf("%s: %w", name, err)
			}
			rs = append(rs, r)
		}
		switch name {
		case "second":
			c.Second = rs
		case "minute":
			c.Minute = rs
		case "hour":
			c.Hour = rs
		case "day_of_month":
			c.DayOfMonth = rs
		case "month":
			c.Month = rs
		case "year":
			c.Year = rs
		case "day_of_week":
			c.DayOfWeek = rs
		}
	}
	return c, nil
}

// parseRangeFlag parses N, N-M, N-M/STEP, * or */STEP.
func parseRangeFlag(text string, bounds [2]int) (api.ScheduleRange, error) {
	var r api.ScheduleRange
	span, stepText, hasStep := strings.Cut(text, "/")
	if hasStep {
		step, err := strconv.Atoi(stepText)
		if err != nil {
			return r, fmt.Errorf("range %q: bad step", text)
		}
		r.Step = step
	}
	if span == "*" {
		r.Start, r.End = bounds[0], bounds[1]
		return r, nil
	}
	startText, endText, hasEnd := strings.Cut(span, "-")
	start, err := strconv.Atoi(startText)
	if err != nil {
		return r, fmt.Errorf("range %q: bad start", text)
	}
	r.Start = start
	if hasEnd {
		if r.End, err = strconv.Atoi(endText); err != nil {
			return r, fmt.Errorf("range %q: bad end", text)
		}
	} else if hasStep {
		return r, fmt.Errorf("range %q: a step needs START-END or *", text)
	}
	return r, nil
}
