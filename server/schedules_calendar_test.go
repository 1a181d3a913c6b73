package server

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/storage/storagetest"
)

// TestSchedules_CalendarValidation: a calendar range out of bounds is a 400
// naming the field; a valid calendar spec is described as it was given,
// with its next times.
func TestSchedules_CalendarValidation(t *testing.T) {
	e := newEnv(t, Config{})
	r := func(start, end, step int) []api.ScheduleRange {
		return []api.ScheduleRange{{Start: start, End: end, Step: step}}
	}
	for field, cal := range map[string]api.ScheduleCalendarSpec{
		"spec.calendars[0].second[0].start":       {Second: r(60, 0, 0)},
		"spec.calendars[0].minute[0].end":         {Minute: r(0, 60, 0)},
		"spec.calendars[0].hour[0].end":           {Hour: r(9, 5, 0)},
		"spec.calendars[0].day_of_month[0].start": {DayOfMonth: r(0, 0, 0)},
		"spec.calendars[0].month[0].start":        {Month: r(13, 0, 0)},
		"spec.calendars[0].day_of_week[0].end":    {DayOfWeek: r(1, 7, 0)},
		"spec.calendars[0].year[0].start":         {Year: r(1900, 0, 0)},
		"spec.calendars[0].hour[0].step":          {Hour: r(0, 23, -2)},
	} {
		t.Run(field, func(t *testing.T) {
			req := scheduleBody("cal")
			req.Spec = api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{cal}}
			wantProblemField(t, e.post("/schedules", req), http.StatusBadRequest, field)
		})
	}
	req := scheduleBody("cal")
	req.Spec = api.ScheduleSpec{CronExpressions: []string{"0 12 * * *"}, Skip: []api.ScheduleCalendarSpec{{Hour: r(25, 0, 0)}}}
	wantProblemField(t, e.post("/schedules", req), http.StatusBadRequest, "spec.skip[0].hour[0].start")
	req.Spec = api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{Comment: string(make([]byte, 257))}}}
	wantProblemField(t, e.post("/schedules", req), http.StatusBadRequest, "spec.calendars[0].comment")
	req.Spec = api.ScheduleSpec{Calendars: make([]api.ScheduleCalendarSpec, 11)}
	wantProblemField(t, e.post("/schedules", req), http.StatusBadRequest, "spec.calendars")

	// The documented JSON form.
	body := []byte(`{"schedule_id":"weekdays","spec":{"calendars":[{"hour":[{"start":9}],"day_of_week":[{"start":1,"end":5}],"comment":"weekdays at nine"}]},
		"action":{"workflow_type":"W","task_queue":"q"}}`)
	var sc api.Schedule
	e.do(http.MethodPost, e.base+"/schedules", body).want(t, http.StatusCreated).decode(t, &sc)
	if len(sc.Spec.Calendars) != 1 || sc.Spec.Calendars[0].Comment != "weekdays at nine" || len(sc.Info.NextActionTimes) != 10 {
		t.Fatalf("created %+v", sc)
	}
	for _, n := range sc.Info.NextActionTimes {
		if n.Hour() != 9 || n.Minute() != 0 || n.Second() != 0 || n.Weekday() == time.Saturday || n.Weekday() == time.Sunday {
			t.Fatalf("next times %v", sc.Info.NextActionTimes)
		}
	}
}

// TestSchedules_CalendarFires: a calendar schedule (every other minute)
// fires its slots as the clock moves, and not the minutes between them.
func TestSchedules_CalendarFires(t *testing.T) {
	url := pgtest.NewURL(t)
	// An even minute, 30s in.
	t0 := time.Now().UTC().Truncate(2 * time.Minute).Add(-time.Hour + 30*time.Second)
	clock := &fakeClock{now: t0}
	a := startReplica(t, url, clock)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	req := api.ScheduleRequest{ScheduleID: "even",
		Spec: api.ScheduleSpec{Calendars: []api.ScheduleCalendarSpec{{
			Minute: []api.ScheduleRange{{Start: 0, End: 59, Step: 2}},
			Hour:   []api.ScheduleRange{{Start: 0, End: 23}},
		}}},
		Action: api.ScheduleWorkflowAction{WorkflowType: "W", TaskQueue: "q"}, OverlapPolicy: api.OverlapAllowAll}
	resp, err := http.Post(a.app.URL()+"/v1/namespaces/default/schedules", "application/json", bytes.NewReader(mustMarshal(t, req)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	slot := func(k int) string {
		return "even-" + t0.Truncate(time.Minute).Add(time.Duration(k)*time.Minute).Format(time.RFC3339)
	}
	var want []string
	for k := 1; k <= 6; k++ {
		clock.Add(time.Minute)
		if k%2 == 0 {
			want = append(want, slot(k))
		}
		storagetest.Eventually(t, 30*time.Second, fmt.Sprintf("%d workflows", len(want)), func() bool {
			return len(scheduledIDs(t, pool, "even-")) >= len(want)
		})
		if _, err := a.app.Scheduler().Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := scheduledIDs(t, pool, "even-"); !slices.Equal(got, want) {
			t.Fatalf("after %d minutes: started %v, want %v", k, got, want)
		}
	}
}
