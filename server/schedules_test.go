package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/internal/pgtest"
	"github.com/tetherhq/tether/server/services/scheduler"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/storage/storagetest"
	"github.com/tetherhq/tether/server/store"
)

func scheduleBody(id string) api.ScheduleRequest {
	return api.ScheduleRequest{ScheduleID: id,
		Spec:   api.ScheduleSpec{CronExpressions: []string{"*/5 * * * *"}},
		Action: api.ScheduleWorkflowAction{WorkflowType: "W", TaskQueue: "q"}}
}

// TestSchedules_Validation: bad input is a 400 problem naming the field;
// a taken id is 409 already-exists, an unknown one 404.
func TestSchedules_Validation(t *testing.T) {
	e := newEnv(t, Config{})
	for field, mod := range map[string]func(*api.ScheduleRequest){
		"schedule_id":              func(r *api.ScheduleRequest) { r.ScheduleID = "" },
		"spec.cron_expressions[0]": func(r *api.ScheduleRequest) { r.Spec.CronExpressions = []string{"not cron"} },
		"spec.time_zone_name":      func(r *api.ScheduleRequest) { r.Spec.TimeZoneName = "Nowhere/Atlantis" },
		"spec.intervals[0].every": func(r *api.ScheduleRequest) {
			r.Spec.Intervals = []api.ScheduleIntervalSpec{{Every: api.Duration(time.Millisecond)}}
		},
		"overlap_policy":        func(r *api.ScheduleRequest) { r.OverlapPolicy = "sometimes" },
		"action.workflow_type":  func(r *api.ScheduleRequest) { r.Action.WorkflowType = "" },
		"catchup_window":        func(r *api.ScheduleRequest) { r.CatchupWindow = api.Duration(time.Millisecond) },
		"note":                  func(r *api.ScheduleRequest) { r.Note = string(make([]byte, 1001)) },
		"spec.cron_expressions": func(r *api.ScheduleRequest) { r.Spec.CronExpressions = make([]string, 11) },
		"action.workflow_id_prefix": func(r *api.ScheduleRequest) {
			r.Action.WorkflowIDPrefix = fmt.Sprintf("%0161d", 0)
		},
	} {
		t.Run(field, func(t *testing.T) {
			req := scheduleBody("s1")
			mod(&req)
			wantProblemField(t, e.post("/schedules", req), http.StatusBadRequest, field)
		})
	}
	long := scheduleBody(fmt.Sprintf("%0151d", 0))
	wantProblemField(t, e.post("/schedules", long), http.StatusBadRequest, "schedule_id")

	var sc api.Schedule
	e.post("/schedules", scheduleBody("s1")).want(t, http.StatusCreated).decode(t, &sc)
	if sc.ScheduleID != "s1" || len(sc.Info.NextActionTimes) != 10 || sc.Info.NextActionTimes[0].Minute()%5 != 0 {
		t.Fatalf("created %+v", sc)
	}
	if p := e.post("/schedules", scheduleBody("s1")).want(t, http.StatusConflict).problem(t); p.Type != api.ProblemAlreadyExists {
		t.Fatalf("second create: %+v", p)
	}
	e.get("/schedules/nope").want(t, http.StatusNotFound).problem(t)
	e.post("/schedules/nope/trigger", api.ScheduleTriggerRequest{}).want(t, http.StatusNotFound).problem(t)
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	wantProblemField(t, e.post("/schedules/s1/backfill", api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(-time.Minute)}),
		http.StatusBadRequest, "end_at")
	wantProblemField(t, e.post("/schedules/s1/backfill", api.ScheduleBackfillRequest{StartAt: start, EndAt: start.Add(time.Hour), OverlapPolicy: "x"}),
		http.StatusBadRequest, "overlap_policy")
	wantProblemField(t, e.post("/schedules/s1/trigger", api.ScheduleTriggerRequest{OverlapPolicy: "x"}), http.StatusBadRequest, "overlap_policy")
	wantProblemField(t, e.get("/schedules?page_size=1001"), http.StatusBadRequest, "page_size")
	wantProblemField(t, e.get("/schedules?page_token=%21%21"), http.StatusBadRequest, "page_token")

	upd := scheduleBody("other")
	wantProblemField(t, e.do(http.MethodPut, e.base+"/schedules/s1", mustMarshal(t, upd)), http.StatusBadRequest, "schedule_id")
	upd.ScheduleID = ""
	upd.Spec = api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Hour), Offset: api.Duration(time.Minute)}}}
	sc = api.Schedule{}
	e.do(http.MethodPut, e.base+"/schedules/s1", mustMarshal(t, upd)).want(t, http.StatusOK).decode(t, &sc)
	if len(sc.Spec.CronExpressions) != 0 || sc.Info.NextActionTimes[0].Minute() != 1 {
		t.Fatalf("updated %+v", sc)
	}
	e.post("/schedules/s1/pause", api.SchedulePauseRequest{Note: "why"}).want(t, http.StatusOK).decode(t, &sc)
	if !sc.Paused || sc.Note != "why" {
		t.Fatalf("paused %+v", sc)
	}
	var list api.ListSchedulesResponse
	e.get("/schedules").want(t, http.StatusOK).decode(t, &list)
	if len(list.Schedules) != 1 || !list.Schedules[0].Paused {
		t.Fatalf("list %+v", list)
	}
	e.do(http.MethodDelete, e.base+"/schedules/s1", nil).want(t, http.StatusNoContent)
	e.do(http.MethodDelete, e.base+"/schedules/s1", nil).want(t, http.StatusNotFound).problem(t)
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// replica is one running App of a test.
type replica struct {
	app  *App
	stop func()
}

func startReplica(t *testing.T, url string, clock *fakeClock) *replica {
	t.Helper()
	app, err := NewApp(context.Background(), AppConfig{
		DatabaseURL: url,
		Server:      Config{Addr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second},
		Store:       store.Options{Now: clock.Now},
		Scheduler:   scheduler.Config{MaxWait: 20 * time.Millisecond},
		Logger:      testLogger(t, slog.LevelWarn),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx) }()
	r := &replica{app: app}
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(r.stop)
	select {
	case <-app.ListenerConnected():
	case err := <-done:
		t.Fatalf("Run ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the listener did not connect")
	}
	return r
}

// scheduledIDs are the ids of the instances whose id starts with prefix.
func scheduledIDs(t *testing.T, pool *pgxpool.Pool, prefix string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT instance_id FROM instances WHERE starts_with(instance_id, $1) ORDER BY instance_id`, prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSchedules_TwoReplicasFireEachSlotOnce: two App replicas on one
// database, on one fake clock, fire each slot of a schedule once; both
// stop, the clock moves on, and new replicas fire the slots of the
// downtime once (within the catch-up window) and skip the older ones.
func TestSchedules_TwoReplicasFireEachSlotOnce(t *testing.T) {
	url := pgtest.NewURL(t)
	t0 := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour + 30*time.Second)
	clock := &fakeClock{now: t0}
	a, b := startReplica(t, url, clock), startReplica(t, url, clock)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	every := api.ScheduleSpec{Intervals: []api.ScheduleIntervalSpec{{Every: api.Duration(time.Minute)}}}
	action := api.ScheduleWorkflowAction{WorkflowType: "W", TaskQueue: "q"}
	for _, req := range []api.ScheduleRequest{
		{ScheduleID: "tick", Spec: every, Action: action, OverlapPolicy: api.OverlapAllowAll, CatchupWindow: api.Duration(time.Hour)},
		{ScheduleID: "late", Spec: every, Action: action, OverlapPolicy: api.OverlapAllowAll},
	} {
		resp, err := http.Post(a.app.URL()+"/v1/namespaces/default/schedules", "application/json", bytes.NewReader(mustMarshal(t, req)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create %s: %d", req.ScheduleID, resp.StatusCode)
		}
	}
	slot := func(prefix string, k int) string {
		return prefix + "-" + t0.Truncate(time.Minute).Add(time.Duration(k)*time.Minute).Format(time.RFC3339)
	}
	waitIDs := func(prefix string, want []string) {
		t.Helper()
		storagetest.Eventually(t, 30*time.Second, fmt.Sprintf("%d workflows of %s", len(want), prefix), func() bool {
			return len(scheduledIDs(t, pool, prefix)) >= len(want)
		})
		if got := scheduledIDs(t, pool, prefix); !slices.Equal(got, want) {
			t.Fatalf("%s started %v, want %v", prefix, got, want)
		}
	}
	var tick, late []string
	for k := 1; k <= 4; k++ {
		clock.Add(time.Minute)
		tick, late = append(tick, slot("tick", k)), append(late, slot("late", k))
		waitIDs("tick-", tick)
		waitIDs("late-", late)
	}

	// Both replicas stop; three minutes pass; new replicas start.
	a.stop()
	b.stop()
	clock.Add(3 * time.Minute)
	c, d := startReplica(t, url, clock), startReplica(t, url, clock)
	tick = append(tick, slot("tick", 5), slot("tick", 6), slot("tick", 7))
	late = append(late, slot("late", 7)) // 5 and 6 are older than the 1m window
	waitIDs("tick-", tick)
	waitIDs("late-", late)
	clock.Add(time.Minute)
	tick, late = append(tick, slot("tick", 8)), append(late, slot("late", 8))
	waitIDs("tick-", tick)
	waitIDs("late-", late)

	// Nothing more is due: explicit passes on both replicas fire nothing.
	for _, r := range []*replica{c, d} {
		if _, err := r.app.Scheduler().Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	waitIDs("tick-", tick)
	waitIDs("late-", late)
	// allow_all never skips: a skip would be a slot fired twice, refused
	// by the instance's uniqueness.
	tk, err := c.app.Store().DescribeSchedule(context.Background(), &storage.ScheduleRef{Namespace: "default", ID: "tick"})
	if err != nil {
		t.Fatal(err)
	}
	if tk.Info.OverlapSkipped != 0 || tk.Info.ActionCount != 8 {
		t.Fatalf("tick: skipped %d, actions %d; want 0 and 8", tk.Info.OverlapSkipped, tk.Info.ActionCount)
	}
	sc, err := c.app.Store().DescribeSchedule(context.Background(), &storage.ScheduleRef{Namespace: "default", ID: "late"})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Info.MissedCatchupWindow != 2 || sc.Info.ActionCount != 6 {
		t.Fatalf("late: missed %d, actions %d; want 2 and 6", sc.Info.MissedCatchupWindow, sc.Info.ActionCount)
	}
}
