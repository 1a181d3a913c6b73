package server

import (
	"net/http"
	"testing"
)

// A start with a cron schedule that does not parse is a 400 naming
// cron_schedule, and starts nothing; a valid one starts the instance.
func TestStartCronScheduleValidated(t *testing.T) {
	e := newEnv(t, Config{})
	for _, spec := range []string{"not a schedule", "* * * *", "61 * * * *", "@every nope"} {
		badCase{name: spec, method: http.MethodPost, path: "/workflows",
			body:   `{"workflow_type":"W","task_queue":"q","instance_id":"c1","cron_schedule":"` + spec + `"}`,
			status: http.StatusBadRequest, fields: []string{"cron_schedule"}}.check(t, e)
	}
	e.get("/workflows/c1").want(t, http.StatusNotFound)
	e.post("/workflows", map[string]any{"workflow_type": "W", "task_queue": "q", "instance_id": "c1",
		"cron_schedule": "*/5 * * * *"}).want(t, http.StatusCreated)
}
