package storagetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// scheduleBehaviours are the behaviours of storage.Schedules.
var scheduleBehaviours = []behaviour{
	{"Schedules_CreateDescribeListDelete", schedulesCreateDescribeListDelete},
	{"Schedules_RefuseBadSpecsNamingTheField", schedulesRefuseBadSpecsNamingTheField},
	{"Schedules_TriggerHonoursTheOverlapPolicy", schedulesTriggerHonoursTheOverlapPolicy},
	{"Schedules_BackfillFiresEachSlotOnce", schedulesBackfillFiresEachSlotOnce},
	{"Schedules_ConcurrentClaimsFireEachSlotOnce", schedulesConcurrentClaimsFireEachSlotOnce},
	{"Schedules_PauseStopsFiring", schedulesPauseStopsFiring},
	{"Schedules_BufferedSlotStartsWhenTheRunningOneCloses", schedulesBufferedSlotStartsWhenTheRunningOneCloses},
}

func scheduleReq(id string) api.ScheduleRequest {
	return api.ScheduleRequest{ScheduleID: id,
		Spec:   api.ScheduleSpec{CronExpressions: []string{"0 3 * * *"}, TimeZoneName: "Europe/Paris"},
		Action: api.ScheduleWorkflowAction{WorkflowType: "W", TaskQueue: "q", Input: []byte(`{"n":1}`)}}
}

// Goal: a schedule is stored as given, with defaults (skip, 1m), its next
// slots follow its spec in its time zone, a second create of the id is
// ErrScheduleExists, the list pages by id, and a delete removes it.
func schedulesCreateDescribeListDelete(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	for _, id := range []string{"b", "a", "c"} {
		Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: scheduleReq(id)}))
	}
	if err := s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: scheduleReq("a")}); !errors.Is(err, storage.ErrScheduleExists) {
		t.Fatalf("second create: %v, want ErrScheduleExists", err)
	}
	sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "a"}))(t)
	if sc.OverlapPolicy != api.OverlapSkip || sc.CatchupWindow.D() != time.Minute || sc.Paused || sc.Action.WorkflowType != "W" {
		t.Fatalf("described %+v", sc)
	}
	if len(sc.Info.NextActionTimes) != 10 {
		t.Fatalf("%d next times, want 10", len(sc.Info.NextActionTimes))
	}
	paris, err := time.LoadLocation("Europe/Paris")
	Must0(t, err)
	for i, at := range sc.Info.NextActionTimes {
		if l := at.In(paris); l.Hour() != 3 || l.Minute() != 0 || !at.After(time.Now().Add(-time.Minute)) {
			t.Fatalf("next time %d is %s (%s in Paris), want 03:00 Paris", i, at, l)
		}
		if i > 0 && !at.After(sc.Info.NextActionTimes[i-1]) {
			t.Fatalf("next times not increasing: %v", sc.Info.NextActionTimes)
		}
	}
	p1 := m(s.ListSchedules(ctx, &storage.ScheduleFilter{Namespace: ns, Limit: 2}))(t)
	if len(p1.Schedules) != 2 || p1.Schedules[0].ScheduleID != "a" || p1.Schedules[1].ScheduleID != "b" || p1.NextPageToken == "" {
		t.Fatalf("first page %+v", p1)
	}
	p2 := m(s.ListSchedules(ctx, &storage.ScheduleFilter{Namespace: ns, Limit: 2, PageToken: p1.NextPageToken}))(t)
	if len(p2.Schedules) != 1 || p2.Schedules[0].ScheduleID != "c" || p2.NextPageToken != "" {
		t.Fatalf("second page %+v", p2)
	}
	if _, err := s.ListSchedules(ctx, &storage.ScheduleFilter{Namespace: ns, PageToken: "!!"}); !errors.Is(err, storage.ErrBadPageToken) {
		t.Fatalf("bad token: %v", err)
	}
	Must0(t, s.DeleteSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "a"}))
	if _, err := s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "a"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("describe after delete: %v", err)
	}
	if err := s.DeleteSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "a"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
}

// Goal: a spec or policy the provider cannot run is refused with an
// *InvalidError naming its field, and nothing is stored.
func schedulesRefuseBadSpecsNamingTheField(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	for field, mod := range map[string]func(*api.ScheduleRequest){
		"spec.cron_expressions[0]": func(r *api.ScheduleRequest) { r.Spec.CronExpressions = []string{"61 * * * *"} },
		"spec.time_zone_name":      func(r *api.ScheduleRequest) { r.Spec.TimeZoneName = "Mars/Olympus" },
		"spec.intervals[0].every": func(r *api.ScheduleRequest) {
			r.Spec.Intervals = []api.ScheduleIntervalSpec{{Every: api.Duration(time.Millisecond)}}
		},
		"spec.intervals[0].offset": func(r *api.ScheduleRequest) {
			r.Spec.Intervals = []api.ScheduleIntervalSpec{{Every: api.Duration(time.Minute), Offset: api.Duration(time.Hour)}}
		},
		"spec.jitter":    func(r *api.ScheduleRequest) { r.Spec.Jitter = api.Duration(-time.Second) },
		"overlap_policy": func(r *api.ScheduleRequest) { r.OverlapPolicy = "sometimes" },
		"catchup_window": func(r *api.ScheduleRequest) { r.CatchupWindow = api.Duration(time.Millisecond) },
	} {
		req := scheduleReq("bad")
		mod(&req)
		var inv *storage.InvalidError
		if err := s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}); !errors.As(err, &inv) || inv.Field != field {
			t.Errorf("%s: %v, want an InvalidError naming it", field, err)
		}
	}
	if _, err := s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "bad"}); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a refused schedule was stored: %v", err)
	}
}

// Goal: a trigger starts the action at once as "<id>-<time>"; while that
// workflow runs, skip skips, buffer_one buffers one, allow_all starts
// another beside it and terminate_other terminates the running ones first.
func schedulesTriggerHonoursTheOverlapPolicy(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: scheduleReq("tr")}))
	first := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "tr", Overlap: ""}))(t).Trigger
	if first.Outcome != api.TriggerStarted || len(first.WorkflowID) < len("tr-2006-01-02T15:04:05Z") || first.WorkflowID[:3] != "tr-" {
		t.Fatalf("first trigger %+v", first)
	}
	if wf := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: first.WorkflowID}))(t); wf.Status != api.StatusRunning || wf.WorkflowType != "W" || !sameJSON(wf.Input, `{"n":1}`) {
		t.Fatalf("started workflow %+v", wf)
	}
	if r := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "tr", Overlap: ""}))(t).Trigger; r.Outcome != api.TriggerSkipped || r.WorkflowID != "" {
		t.Fatalf("trigger while running, skip: %+v", r)
	}
	if r := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "tr", Overlap: api.OverlapBufferOne}))(t).Trigger; r.Outcome != api.TriggerBuffered {
		t.Fatalf("trigger while running, buffer_one: %+v", r)
	}
	if sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "tr"}))(t); sc.Info.BufferedSlot == nil || sc.Info.OverlapSkipped != 1 {
		t.Fatalf("after a skip and a buffer: %+v", sc.Info)
	}
	var second api.ScheduleTriggerResponse
	Eventually(t, 5*time.Second, "a second trigger in another millisecond", func() bool {
		second = m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "tr", Overlap: api.OverlapAllowAll}))(t).Trigger
		return second.Outcome == api.TriggerStarted
	})
	sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "tr"}))(t)
	if !slices.Equal(sc.Info.RunningWorkflows, []string{first.WorkflowID, second.WorkflowID}) || sc.Info.ActionCount != 2 {
		t.Fatalf("running %v (count %d), want %s and %s", sc.Info.RunningWorkflows, sc.Info.ActionCount, first.WorkflowID, second.WorkflowID)
	}
	var third api.ScheduleTriggerResponse
	Eventually(t, 5*time.Second, "a third trigger in another millisecond", func() bool {
		third = m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "tr", Overlap: api.OverlapTerminateOther}))(t).Trigger
		return third.Outcome == api.TriggerStarted && third.WorkflowID != second.WorkflowID
	})
	for _, id := range []string{first.WorkflowID, second.WorkflowID} {
		if wf := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: id}))(t); wf.Status != api.StatusTerminated {
			t.Fatalf("%s is %s after terminate_other, want terminated", id, wf.Status)
		}
	}
	sc = m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "tr"}))(t)
	if !slices.Equal(sc.Info.RunningWorkflows, []string{third.WorkflowID}) || len(sc.Info.RecentActions) != 3 ||
		sc.Info.RecentActions[0].WorkflowID != third.WorkflowID || sc.Info.RecentActions[0].Kind != api.ScheduleActionTriggered {
		t.Fatalf("after terminate_other: running %v, recent %+v", sc.Info.RunningWorkflows, sc.Info.RecentActions)
	}
}

// Goal: a backfill starts one workflow per slot of the range, named by the
// slot; a second backfill of the same range starts nothing (each slot
// fires once); a range past the bound is refused naming end_at.
func schedulesBackfillFiresEachSlotOnce(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	req := scheduleReq("bf")
	req.Spec = api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Hour), Offset: api.Duration(15 * time.Minute)}}}
	Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}))
	start := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	r := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "bf", Backfill: &api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(3 * time.Hour), OverlapPolicy: api.OverlapAllowAll}}))(t).Backfill
	want := []string{"bf-2024-03-01T00:15:00Z", "bf-2024-03-01T01:15:00Z", "bf-2024-03-01T02:15:00Z"}
	if !slices.Equal(r.Started, want) || r.Skipped != 0 {
		t.Fatalf("backfill %+v, want started %v", r, want)
	}
	again := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "bf", Backfill: &api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(3 * time.Hour), OverlapPolicy: api.OverlapAllowAll}}))(t).Backfill
	if len(again.Started) != 0 || again.Skipped != 3 {
		t.Fatalf("second backfill %+v, want nothing started", again)
	}
	for _, id := range want {
		if wf := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: id}))(t); wf.ExecutionID != 1 {
			t.Fatalf("%s restarted: execution %d", id, wf.ExecutionID)
		}
	}
	var inv *storage.InvalidError
	if _, err := s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "bf", Backfill: &api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(2000 * time.Hour)}}); !errors.As(err, &inv) || inv.Field != "end_at" {
		t.Fatalf("a backfill of 2000 slots: %v", err)
	}
	if _, err := s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "bf", Backfill: &api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(-time.Hour)}}); !errors.As(err, &inv) || inv.Field != "end_at" {
		t.Fatalf("a backfill ending before it starts: %v", err)
	}
}

// Goal: claims racing on one due schedule fire each slot once: every
// action names a distinct slot, one workflow per action, the slots are
// consecutive seconds.
func schedulesConcurrentClaimsFireEachSlotOnce(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	req := scheduleReq("race")
	req.Spec = api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Second)}}}
	req.OverlapPolicy = api.OverlapAllowAll
	Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}))
	Eventually(t, 10*time.Second, "three slots fired", func() bool {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					f, err := s.FireDueSchedule(ctx)
					if err != nil {
						t.Error(err)
					}
					if !f.Fired || err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		return m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "race"}))(t).Info.ActionCount >= 3
	})
	sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "race"}))(t)
	acts := sc.Info.RecentActions
	if int64(len(acts)) != min(sc.Info.ActionCount, 10) {
		t.Fatalf("%d recent actions for %d taken", len(acts), sc.Info.ActionCount)
	}
	for i, a := range acts {
		if a.Kind != api.ScheduleActionScheduled || a.WorkflowID != "race-"+a.SlotAt.UTC().Format(time.RFC3339) {
			t.Fatalf("action %+v", a)
		}
		if wf := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: a.WorkflowID}))(t); wf.ExecutionID != 1 {
			t.Fatalf("%s started %d times", a.WorkflowID, wf.ExecutionID)
		}
		if i > 0 && !acts[i-1].SlotAt.Equal(a.SlotAt.Add(time.Second)) {
			t.Fatalf("slots not consecutive seconds: %+v", acts)
		}
	}
}

// Goal: a paused schedule lists no next times and no claim fires it; a
// trigger still does.
func schedulesPauseStopsFiring(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	req := scheduleReq("p")
	req.Spec = api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Second)}}}
	Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}))
	Must0(t, s.UpdateSchedule(ctx, &storage.UpdateScheduleParams{Namespace: ns, ID: "p", Pause: &storage.SchedulePause{Paused: true, Note: "maintenance"}}))
	sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "p"}))(t)
	if !sc.Paused || sc.Note != "maintenance" || len(sc.Info.NextActionTimes) != 0 {
		t.Fatalf("paused: %+v", sc)
	}
	f := m(s.FireDueSchedule(ctx))(t)
	if f.Fired {
		t.Fatal("a paused schedule was claimed")
	}
	if f.Next.Before(time.Now().Add(24 * time.Hour)) {
		t.Fatalf("a paused schedule wakes the scheduler at %s", f.Next)
	}
	if r := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "p", Overlap: ""}))(t).Trigger; r.Outcome != api.TriggerStarted {
		t.Fatalf("trigger of a paused schedule: %+v", r)
	}
	Must0(t, s.UpdateSchedule(ctx, &storage.UpdateScheduleParams{Namespace: ns, ID: "p", Pause: &storage.SchedulePause{Paused: false, Note: "done"}}))
	if sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "p"}))(t); sc.Paused || sc.Note != "done" || len(sc.Info.NextActionTimes) != 10 {
		t.Fatalf("unpaused: %+v", sc)
	}
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a []byte, b string) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal([]byte(b), &y) == nil && reflect.DeepEqual(x, y)
}

// Goal: a slot buffered by buffer_one starts (named by its slot) once the
// workflow it waited for closes, at the next claim, and not before; a
// cancel_other slot asks the running workflow to cancel.
func schedulesBufferedSlotStartsWhenTheRunningOneCloses(t *testing.T, newProvider func(t *testing.T) storage.Provider) {
	s := newProvider(t)
	ctx := ctxT(t)
	req := scheduleReq("buf")
	req.OverlapPolicy = api.OverlapBufferOne
	Must0(t, s.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}))
	first := m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "buf", Overlap: ""}))(t).Trigger
	var buffered api.ScheduleTriggerResponse
	Eventually(t, 5*time.Second, "a trigger in another millisecond", func() bool {
		buffered = m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "buf", Overlap: ""}))(t).Trigger
		return buffered.Outcome == api.TriggerBuffered
	})
	slot := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "buf"}))(t).Info.BufferedSlot
	if slot == nil {
		t.Fatal("no buffered slot")
	}
	if f := m(s.FireDueSchedule(ctx))(t); f.Fired {
		t.Fatal("the buffered slot was claimed while its workflow runs")
	}
	Must0(t, s.TerminateWorkflow(ctx, &storage.TerminateWorkflowParams{Namespace: ns, InstanceID: first.WorkflowID, ExecutionID: 0, Reason: "done", Details: nil}))
	if f := m(s.FireDueSchedule(ctx))(t); !f.Fired {
		t.Fatal("the buffered slot was not claimed after the workflow closed")
	}
	sc := m(s.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: "buf"}))(t)
	want := "buf-" + slot.UTC().Format(time.RFC3339Nano)
	if sc.Info.BufferedSlot != nil || !slices.Equal(sc.Info.RunningWorkflows, []string{want}) || sc.Info.ActionCount != 2 {
		t.Fatalf("after the close: buffered %v, running %v (want %s), actions %d", sc.Info.BufferedSlot, sc.Info.RunningWorkflows, want, sc.Info.ActionCount)
	}
	var third api.ScheduleTriggerResponse
	Eventually(t, 5*time.Second, "a trigger in another millisecond", func() bool {
		third = m(s.TriggerSchedule(ctx, &storage.TriggerScheduleParams{Namespace: ns, ID: "buf", Overlap: api.OverlapCancelOther}))(t).Trigger
		return third.Outcome == api.TriggerStarted
	})
	if wf := m(s.DescribeWorkflow(ctx, &storage.WorkflowRef{Namespace: ns, InstanceID: want}))(t); !wf.CancelRequested {
		t.Fatalf("%s: no cancel requested by cancel_other: %+v", want, wf)
	}
}
