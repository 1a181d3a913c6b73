package server

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/server/storage"
)

// badCase is a request that must be refused with a 4xx problem.
type badCase struct {
	name   string
	method string
	path   string // under the base, or absolute when it starts with "/v1/" or "//"
	body   string // "" sends no body
	status int
	fields []string // fields the problem must name (400)
}

func (c badCase) url(e *env) string {
	if strings.HasPrefix(c.path, "/v1/") {
		return e.ts.URL + c.path
	}
	return e.base + c.path
}

// check sends the request and checks the answer.
func (c badCase) check(t *testing.T, e *env) {
	t.Helper()
	var body []byte
	if c.body != "" {
		body = []byte(c.body)
	}
	r := e.do(c.method, c.url(e), body)
	if r.status != c.status {
		t.Fatalf("%s %s %s: status %d, want %d; body %s", c.method, c.path, c.body, r.status, c.status, r.body)
	}
	p := r.problem(t)
	var got []string
	for _, f := range p.Errors {
		got = append(got, f.Field)
		if f.Message == "" {
			t.Errorf("field %q has an empty message", f.Field)
		}
	}
	for _, f := range c.fields {
		if !slices.Contains(got, f) {
			t.Errorf("%s %s %s: problem names fields %q, want %q among them; body %s", c.method, c.path, c.body, got, f, r.body)
		}
	}
	if c.status == http.StatusBadRequest && len(p.Errors) == 0 {
		t.Errorf("a 400 names no field: %s", r.body)
	}
}

const longName = "a123456789" // ×20 + 1 below

func tooLongName() string { return strings.Repeat(longName, 20) + "x" } // 201 characters

// badInputCases are refused by validation, before the store is called.
func badInputCases() []badCase {
	tok := uuid.NewString()
	turnTok := storage.TurnToken{InstanceID: "i1", Lock: uuid.New()}.String()
	post, get, del := http.MethodPost, http.MethodGet, http.MethodDelete
	const bad = 400
	name201 := tooLongName()
	many := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return strings.Join(parts, ",")
	}
	return []badCase{
		// POST /workflows
		{"start: malformed JSON", post, "/workflows", `{"workflow_type":`, bad, []string{"body"}},
		{"start: not JSON", post, "/workflows", `workflow_type=A`, bad, []string{"body"}},
		{"start: array body", post, "/workflows", `[]`, bad, []string{"body"}},
		{"start: two values", post, "/workflows", `{"workflow_type":"A","task_queue":"q"}{}`, bad, []string{"body"}},
		{"start: missing fields", post, "/workflows", `{}`, bad, []string{"workflow_type", "task_queue"}},
		{"start: no body", post, "/workflows", ``, bad, []string{"workflow_type", "task_queue"}},
		{"start: mistyped", post, "/workflows", `{"workflow_type":5,"task_queue":"q"}`, bad, []string{"workflow_type"}},
		{"start: unknown field", post, "/workflows", `{"workflow_type":"A","task_queue":"q","tsak_queue":"r"}`, bad, []string{"tsak_queue"}},
		{"start: unknown field and bad name", post, "/workflows", `{"workflow_type":"A|B","task_queue":"q","wait":"1s"}`, bad, []string{"wait", "workflow_type"}},
		{"start: pipe in type", post, "/workflows", `{"workflow_type":"a|b","task_queue":"q"}`, bad, []string{"workflow_type"}},
		{"start: pipe in queue", post, "/workflows", `{"workflow_type":"A","task_queue":"q|1"}`, bad, []string{"task_queue"}},
		{"start: pipe in id", post, "/workflows", `{"workflow_type":"A","task_queue":"q","instance_id":"i|1"}`, bad, []string{"instance_id"}},
		{"start: space in id", post, "/workflows", `{"workflow_type":"A","task_queue":"q","instance_id":"i 1"}`, bad, []string{"instance_id"}},
		{"start: name too long", post, "/workflows", `{"workflow_type":"` + name201 + `","task_queue":"q"}`, bad, []string{"workflow_type"}},
		{"start: leading dot", post, "/workflows", `{"workflow_type":".A","task_queue":"q"}`, bad, []string{"workflow_type"}},
		{"start: negative timeout", post, "/workflows", `{"workflow_type":"A","task_queue":"q","execution_timeout":"-1s"}`, bad, []string{"execution_timeout"}},
		{"start: bad timeout", post, "/workflows", `{"workflow_type":"A","task_queue":"q","execution_timeout":"soon"}`, bad, []string{"execution_timeout"}},
		{"start: timeout as bool", post, "/workflows", `{"workflow_type":"A","task_queue":"q","execution_timeout":true}`, bad, []string{"execution_timeout"}},
		{"start: bad namespace", post, "/v1/namespaces/a%7Cb/workflows", `{"workflow_type":"A","task_queue":"q"}`, bad, []string{"namespace"}},

		// GET /workflows/{id}
		{"describe: pipe in id", get, "/workflows/a%7Cb", ``, bad, []string{"instance_id"}},
		{"describe: bad namespace", get, "/v1/namespaces/%20x/workflows/a", ``, bad, []string{"namespace"}},
		{"describe: id too long", get, "/workflows/" + name201, ``, bad, []string{"instance_id"}},

		// GET /workflows
		{"list: bad status", get, "/workflows?status=sleeping", ``, bad, []string{"status"}},
		{"list: limit not a number", get, "/workflows?limit=ten", ``, bad, []string{"limit"}},
		{"list: limit 0", get, "/workflows?limit=0", ``, bad, []string{"limit"}},
		{"list: limit too big", get, "/workflows?limit=1001", ``, bad, []string{"limit"}},
		{"list: bad type", get, "/workflows?workflow_type=a%7Cb", ``, bad, []string{"workflow_type"}},
		{"list: several bad", get, "/workflows?status=x&limit=-1", ``, bad, []string{"status", "limit"}},

		// GET /workflows/{id}/history
		{"history: execution not a number", get, "/workflows/i1/history?execution_id=last", ``, bad, []string{"execution_id"}},
		{"history: execution 0", get, "/workflows/i1/history?execution_id=0", ``, bad, []string{"execution_id"}},
		{"history: pipe in id", get, "/workflows/i%7C1/history", ``, bad, []string{"instance_id"}},

		// GET /workflows/{id}/result
		{"result: wait 61s", get, "/workflows/i1/result?wait=61s", ``, bad, []string{"wait"}},
		{"result: negative wait", get, "/workflows/i1/result?wait=-1s", ``, bad, []string{"wait"}},
		{"result: wait not a duration", get, "/workflows/i1/result?wait=30", ``, bad, []string{"wait"}},
		{"result: pipe in id", get, "/workflows/i%7C1/result", ``, bad, []string{"instance_id"}},

		// POST /workflows/{id}/cancel
		{"cancel: malformed", post, "/workflows/i1/cancel", `{"reason":`, bad, []string{"body"}},
		{"cancel: unknown field", post, "/workflows/i1/cancel", `{"reson":"x"}`, bad, []string{"reson"}},
		{"cancel: mistyped", post, "/workflows/i1/cancel", `{"reason":1}`, bad, []string{"reason"}},
		{"cancel: reason too long", post, "/workflows/i1/cancel", `{"reason":"` + strings.Repeat("r", 1025) + `"}`, bad, []string{"reason"}},
		{"cancel: pipe in id", post, "/workflows/i%7C1/cancel", `{}`, bad, []string{"instance_id"}},

		// POST /workflows/{id}/signals/{name}
		{"signal: pipe in name", post, "/workflows/i1/signals/s%7C1", `{}`, bad, []string{"name"}},
		{"signal: pipe in id", post, "/workflows/i%7C1/signals/s", `{}`, bad, []string{"instance_id"}},
		{"signal: malformed", post, "/workflows/i1/signals/s", `{"input":}`, bad, []string{"body"}},
		{"signal: unknown field", post, "/workflows/i1/signals/s", `{"inputs":1}`, bad, []string{"inputs"}},

		// DELETE /workflows/{id}
		{"delete: bad force", del, "/workflows/i1?force=maybe", ``, bad, []string{"force"}},
		{"delete: pipe in id", del, "/workflows/i%7C1", ``, bad, []string{"instance_id"}},

		// POST /workflow-tasks/poll
		{"wpoll: missing fields", post, "/workflow-tasks/poll", `{}`, bad, []string{"task_queue", "worker_id"}},
		{"wpoll: malformed", post, "/workflow-tasks/poll", `{"task_queue":"q",`, bad, []string{"body"}},
		{"wpoll: mistyped worker", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":7}`, bad, []string{"worker_id"}},
		{"wpoll: unknown field", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","timeout":"1s"}`, bad, []string{"timeout"}},
		{"wpoll: pipe in queue", post, "/workflow-tasks/poll", `{"task_queue":"q|x","worker_id":"w"}`, bad, []string{"task_queue"}},
		{"wpoll: pipe in worker", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w|x"}`, bad, []string{"worker_id"}},
		{"wpoll: wait 61s", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","wait":"61s"}`, bad, []string{"wait"}},
		{"wpoll: negative wait", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","wait":"-1s"}`, bad, []string{"wait"}},
		{"wpoll: wait not a duration", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","wait":"long"}`, bad, []string{"wait"}},
		{"wpoll: lock_for 11m", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","lock_for":"11m"}`, bad, []string{"lock_for"}},
		{"wpoll: lock_for 500ms", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","lock_for":"500ms"}`, bad, []string{"lock_for"}},
		{"wpoll: negative lock_for", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","lock_for":"-5s"}`, bad, []string{"lock_for"}},
		{"wpoll: max_tasks 17", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","max_tasks":17}`, bad, []string{"max_tasks"}},
		{"wpoll: negative max_tasks", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","max_tasks":-1}`, bad, []string{"max_tasks"}},
		{"wpoll: max_tasks not a number", post, "/workflow-tasks/poll", `{"task_queue":"q","worker_id":"w","max_tasks":"2"}`, bad, []string{"max_tasks"}},

		// POST /workflow-tasks/{token}/complete
		{"wcomplete: bad token", post, "/workflow-tasks/not-a-token/complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: an attempt's token", post, "/workflow-tasks/" + tok + "/complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: token without instance", post, "/workflow-tasks/" + tok + "./complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: token, instance not base64url", post, "/workflow-tasks/" + tok + ".a+b/complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: token, instance not a name", post, "/workflow-tasks/" + storage.TurnToken{InstanceID: "a|b", Lock: uuid.New()}.String() + "/complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: token, lock not a UUID", post, "/workflow-tasks/not-a-uuid-not-a-uuid-not-a-uuid-1234.aTE/complete", `{"commands":[]}`, bad, []string{"token"}},
		{"wcomplete: malformed", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[`, bad, []string{"body"}},
		{"wcomplete: commands not an array", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":"x"}`, bad, []string{"commands"}},
		{"wcomplete: unknown command type", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[{"type":"launch"}]}`, bad, []string{"commands[0].type"}},
		{"wcomplete: eager without queues", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[],"eager_activities":{"max":1}}`, bad, []string{"eager_activities.task_queues"}},
		{"wcomplete: eager max 0", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[],"eager_activities":{"task_queues":["q"],"max":0}}`, bad, []string{"eager_activities.max"}},
		{"wcomplete: eager bad queue", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[],"eager_activities":{"task_queues":["a|b"],"max":1}}`, bad, []string{"eager_activities.task_queues[0]"}},
		{"wcomplete: eager lock too long", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[],"eager_activities":{"task_queues":["q"],"max":1,"lock_for":"1h"}}`, bad, []string{"eager_activities.lock_for"}},
		{"wcomplete: missing type", post, "/workflow-tasks/" + turnTok + "/complete", `{"commands":[{}]}`, bad, []string{"commands[0].type"}},
		{"wcomplete: schedule without fields", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"schedule_activity"}]}`, bad, []string{"commands[0].activity_id", "commands[0].activity_type"}},
		{"wcomplete: activity pipe", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"schedule_activity","activity_id":1,"activity_type":"a|b","task_queue":"q|r"}]}`, bad,
			[]string{"commands[0].activity_type", "commands[0].task_queue"}},
		{"wcomplete: negative timeout", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"schedule_activity","activity_id":1,"activity_type":"A","options":{"start_to_close_timeout":"-1s"}}]}`, bad,
			[]string{"commands[0].options.start_to_close_timeout"}},
		{"wcomplete: bad retry policy", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"schedule_activity","activity_id":1,"activity_type":"A","options":{"retry_policy":{"backoff_coefficient":0.5,"maximum_attempts":-1}}}]}`, bad,
			[]string{"commands[0].options.retry_policy.backoff_coefficient", "commands[0].options.retry_policy.maximum_attempts"}},
		{"wcomplete: timer negative", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"start_timer","timer_id":1,"fire_after":"-1s"}]}`, bad, []string{"commands[0].fire_after"}},
		{"wcomplete: timer without id", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"start_timer","fire_after":"1s"}]}`, bad, []string{"commands[0].timer_id"}},
		{"wcomplete: start_child_workflow without fields", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"start_child_workflow"}]}`, bad,
			[]string{"commands[0].child_id", "commands[0].workflow_id", "commands[0].workflow_type"}},
		{"wcomplete: start_child_workflow bad fields", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"start_child_workflow","child_id":-1,"workflow_id":"a|b","workflow_type":"W","parent_close_policy":"x","execution_timeout":"-1s"}]}`, bad,
			[]string{"commands[0].child_id", "commands[0].workflow_id", "commands[0].parent_close_policy", "commands[0].execution_timeout"}},
		{"wcomplete: request_cancel_child_workflow without fields", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"request_cancel_child_workflow"}]}`, bad,
			[]string{"commands[0].child_id", "commands[0].workflow_id"}},
		{"wcomplete: cancel_timer without id", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"cancel_timer"}]}`, bad, []string{"commands[0].timer_id"}},
		{"wcomplete: cancel_timer negative id", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"cancel_timer","timer_id":-1}]}`, bad, []string{"commands[0].timer_id"}},
		{"wcomplete: record_marker without name", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"record_marker","marker_details":1}]}`, bad, []string{"commands[0].marker_name"}},
		{"wcomplete: record_marker without details", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"record_marker","marker_name":"SideEffect"}]}`, bad, []string{"commands[0].marker_details"}},
		{"wcomplete: fail without error", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"fail_workflow"}]}`, bad, []string{"commands[0].error"}},
		{"wcomplete: fail with empty error", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"fail_workflow","error":{}}]}`, bad, []string{"commands[0].error.message"}},
		{"wcomplete: second command bad", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"cancel_workflow"},{"type":"start_timer","timer_id":1,"fire_after":"soon"}]}`, bad, []string{"commands.fire_after"}},
		{"wcomplete: bad cancel", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[],"activity_cancels":[{"activity_id":0}]}`, bad, []string{"activity_cancels[0].activity_id", "activity_cancels[0].reason"}},
		{"wcomplete: unknown command field", post, "/workflow-tasks/" + turnTok + "/complete",
			`{"commands":[{"type":"cancel_workflow","why":"x"}]}`, bad, []string{"why"}},

		// POST /workflow-tasks/{token}/fail
		{"wfail: no error", post, "/workflow-tasks/" + turnTok + "/fail", `{}`, bad, []string{"error.message"}},
		{"wfail: bad token", post, "/workflow-tasks/" + tok + "x/fail", `{"error":{"message":"m"}}`, bad, []string{"token"}},
		{"wfail: mistyped", post, "/workflow-tasks/" + turnTok + "/fail", `{"error":"boom"}`, bad, []string{"error"}},

		// POST /activity-tasks/poll
		{"apoll: missing fields", post, "/activity-tasks/poll", `{}`, bad, []string{"task_queues", "worker_id"}},
		{"apoll: empty queues", post, "/activity-tasks/poll", `{"task_queues":[],"worker_id":"w"}`, bad, []string{"task_queues"}},
		{"apoll: queues not an array", post, "/activity-tasks/poll", `{"task_queues":"q","worker_id":"w"}`, bad, []string{"task_queues"}},
		{"apoll: pipe in a queue", post, "/activity-tasks/poll", `{"task_queues":["q","r|s"],"worker_id":"w"}`, bad, []string{"task_queues[1]"}},
		{"apoll: too many queues", post, "/activity-tasks/poll",
			`{"task_queues":[` + many(17, func(i int) string { return fmt.Sprintf("%q", fmt.Sprint("q", i)) }) + `],"worker_id":"w"}`, bad, []string{"task_queues"}},
		{"apoll: wait 61s", post, "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w","wait":"61s"}`, bad, []string{"wait"}},
		{"apoll: lock_for 11m", post, "/activity-tasks/poll", `{"task_queues":["q"],"worker_id":"w","lock_for":"11m"}`, bad, []string{"lock_for"}},
		{"apoll: unknown field", post, "/activity-tasks/poll", `{"task_queue":"q","worker_id":"w"}`, bad, []string{"task_queue"}},

		// POST /activity-tasks/{token}/heartbeat
		{"aheartbeat: extend 11m", post, "/activity-tasks/" + tok + "/heartbeat", `{"extend_for":"11m"}`, bad, []string{"extend_for"}},
		{"aheartbeat: negative extend", post, "/activity-tasks/" + tok + "/heartbeat", `{"extend_for":"-1s"}`, bad, []string{"extend_for"}},
		{"aheartbeat: bad token", post, "/activity-tasks/abc/heartbeat", `{}`, bad, []string{"token"}},
		{"aheartbeat: malformed", post, "/activity-tasks/" + tok + "/heartbeat", `{"details":{`, bad, []string{"body"}},
		{"aheartbeat: unknown field", post, "/activity-tasks/" + tok + "/heartbeat", `{"detail":1}`, bad, []string{"detail"}},

		// POST /activity-tasks/{token}/complete
		{"acomplete: bad token", post, "/activity-tasks/" + strings.ToUpper("zz"+tok[2:]) + "/complete", `{}`, bad, []string{"token"}},
		{"acomplete: unknown field", post, "/activity-tasks/" + tok + "/complete", `{"results":1}`, bad, []string{"results"}},
		{"acomplete: malformed", post, "/activity-tasks/" + tok + "/complete", `{"result":tru}`, bad, []string{"body"}},
		{"acomplete: eager without queue", post, "/activity-tasks/" + tok + "/complete", `{"eager_workflow_task":{}}`, bad, []string{"eager_workflow_task.task_queue"}},
		{"acomplete: eager lock too long", post, "/activity-tasks/" + tok + "/complete", `{"eager_workflow_task":{"task_queue":"q","lock_for":"1h"}}`, bad, []string{"eager_workflow_task.lock_for"}},
		{"acomplete: next turn without eager", post, "/activity-tasks/" + tok + "/complete",
			`{"next_turn":{"instance_id":"i","execution_id":1,"next_event_id":4,"event_time":"2026-01-01T00:00:00Z","commands":[]}}`, bad, []string{"eager_workflow_task"}},
		{"acomplete: next turn without its fields", post, "/activity-tasks/" + tok + "/complete",
			`{"eager_workflow_task":{"task_queue":"q"},"next_turn":{"commands":[]}}`, bad, []string{"next_turn.instance_id", "next_turn.execution_id", "next_turn.next_event_id", "next_turn.event_time"}},
		{"acomplete: next turn bad command", post, "/activity-tasks/" + tok + "/complete",
			`{"eager_workflow_task":{"task_queue":"q"},"next_turn":{"instance_id":"i","execution_id":1,"next_event_id":4,"event_time":"2026-01-01T00:00:00Z","commands":[{"type":"nope"}]}}`, bad, []string{"next_turn.commands[0].type"}},
		{"acomplete: next turn eager lock too long", post, "/activity-tasks/" + tok + "/complete",
			`{"eager_workflow_task":{"task_queue":"q"},"next_turn":{"instance_id":"i","execution_id":1,"next_event_id":4,"event_time":"2026-01-01T00:00:00Z","commands":[],"eager_activities":{"task_queues":["q"],"max":1,"lock_for":"1h"}}}`, bad, []string{"next_turn.eager_activities.lock_for"}},

		// POST /activity-tasks/{token}/fail
		{"afail: no error", post, "/activity-tasks/" + tok + "/fail", `{}`, bad, []string{"error.message"}},
		{"afail: retryable mistyped", post, "/activity-tasks/" + tok + "/fail", `{"error":{"message":"m","retryable":"no"}}`, bad, []string{"error.retryable"}},
		{"afail: type too long", post, "/activity-tasks/" + tok + "/fail", `{"error":{"message":"m","type":"` + strings.Repeat("t", 257) + `"}}`, bad, []string{"error.type"}},

		// POST /activity-tasks/{token}/abandon
		{"aabandon: negative delay", post, "/activity-tasks/" + tok + "/abandon", `{"delay":"-1s"}`, bad, []string{"delay"}},
		{"aabandon: bad delay", post, "/activity-tasks/" + tok + "/abandon", `{"delay":"later"}`, bad, []string{"delay"}},
		{"aabandon: bad token", post, "/activity-tasks/x/abandon", `{}`, bad, []string{"token"}},

		// POST /workers/heartbeat
		{"wheartbeat: missing fields", post, "/workers/heartbeat", `{}`, bad, []string{"worker_id", "lease_duration"}},
		{"wheartbeat: lease 0", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"0s"}`, bad, []string{"lease_duration"}},
		{"wheartbeat: lease too long", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"6m"}`, bad, []string{"lease_duration"}},
		{"wheartbeat: lease too short", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"100ms"}`, bad, []string{"lease_duration"}},
		{"wheartbeat: lease not a duration", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"10"}`, bad, []string{"lease_duration"}},
		{"wheartbeat: pipe in worker", post, "/workers/heartbeat", `{"worker_id":"w|1","lease_duration":"10s"}`, bad, []string{"worker_id"}},
		{"wheartbeat: pipe in queues", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"10s","task_queues":["a|b"],"host_task_queue":"h|w"}`, bad,
			[]string{"task_queues[0]", "host_task_queue"}},
		{"wheartbeat: wait over half the lease", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"10s","wait":"6s"}`, bad, []string{"wait"}},
		{"wheartbeat: wait 61s", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"5m","wait":"61s"}`, bad, []string{"wait"}},
		{"wheartbeat: metadata mistyped", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"10s","metadata":{"a":1}}`, bad, []string{"metadata"}},
		{"wheartbeat: too much metadata", post, "/workers/heartbeat",
			`{"worker_id":"w","lease_duration":"10s","metadata":{` + many(65, func(i int) string { return fmt.Sprintf(`"k%d":"v"`, i) }) + `}}`, bad, []string{"metadata"}},
		{"wheartbeat: unknown field", post, "/workers/heartbeat", `{"worker_id":"w","lease_duration":"10s","lease":"10s"}`, bad, []string{"lease"}},

		// GET /workers, /workers/{id}
		{"workers: bad state", get, "/workers?state=zombie", ``, bad, []string{"state"}},
		{"worker: pipe in id", get, "/workers/w%7C1", ``, bad, []string{"worker_id"}},

		// GET /task-queues/{name}
		{"task queue: pipe in name", get, "/task-queues/q%7C1", ``, bad, []string{"name"}},
		{"task queue: bad namespace", get, "/v1/namespaces/-x/task-queues/q", ``, bad, []string{"namespace"}},

		// Routing.
		{"no such route", get, "/nothing-here", ``, 404, nil},
		{"no such route outside the base", get, "/v2/namespaces/default/workflows", ``, 404, nil},
		{"method not allowed", http.MethodPut, "/workflows", `{}`, 405, nil},
		{"method not allowed on poll", get, "/workflow-tasks/poll", ``, 405, nil},
	}
}

// TestBadInput checks that every route refuses bad input with a 4xx
// problem naming the bad fields. Validation runs before the store.
func TestBadInput(t *testing.T) {
	e := newEnv(t, Config{})
	for _, c := range badInputCases() {
		t.Run(c.name, func(t *testing.T) { c.check(t, e) })
	}
}

// postRoutes are the routes that take a body, with a token where needed.
func postRoutes() []string {
	tok := uuid.NewString()
	turnTok := storage.TurnToken{InstanceID: "i1", Lock: uuid.New()}.String()
	return []string{
		"/workflows",
		"/workflows/i1/cancel",
		"/workflows/i1/signals/s",
		"/workflow-tasks/poll",
		"/workflow-tasks/" + turnTok + "/complete",
		"/workflow-tasks/" + turnTok + "/fail",
		"/activity-tasks/poll",
		"/activity-tasks/" + tok + "/heartbeat",
		"/activity-tasks/" + tok + "/complete",
		"/activity-tasks/" + tok + "/fail",
		"/activity-tasks/" + tok + "/abandon",
		"/workers/heartbeat",
	}
}

// TestOversizedBody checks the body limit on every route that takes a
// body, with and without a Content-Length.
func TestOversizedBody(t *testing.T) {
	e := newEnv(t, Config{BodyLimit: 1 << 10})
	big := []byte(`{"input":"` + strings.Repeat("x", 2<<10) + `"}`)
	for _, path := range postRoutes() {
		t.Run(path, func(t *testing.T) {
			r := e.do(http.MethodPost, e.base+path, big)
			r.want(t, http.StatusRequestEntityTooLarge).problem(t)

			// Chunked: no Content-Length, the limit bites while reading.
			req, err := http.NewRequest(http.MethodPost, e.base+path, &chunkedReader{data: big})
			if err != nil {
				t.Fatal(err)
			}
			req.ContentLength = -1
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("chunked: status %d, want 413", resp.StatusCode)
			}
			if ct := resp.Header.Get("Content-Type"); ct != ProblemContentType {
				t.Fatalf("chunked: Content-Type %q", ct)
			}
		})
	}
}

// chunkedReader hides its length from net/http, so that the body is sent
// chunked.
type chunkedReader struct{ data []byte }

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestGarbageNeverFails5xx throws odd bodies at every route that takes one:
// the answer is never a 5xx, and every error is a problem document.
func TestGarbageNeverFails5xx(t *testing.T) {
	e := newEnv(t, Config{})
	bodies := []string{
		`null`, `true`, `"text"`, `123`, `[]`, `[{}]`, `{"":""}`, `{"a":{"b":{"c":[1,2,{"d":null}]}}}`,
		`{"wait":1e400}`, `{"worker_id":"w","task_queue":"q","wait":9223372036854775807}`,
		`{"worker_id":"w","task_queue":"q","lock_for":-9223372036854775808}`,
		`{"worker_id":"` + strings.Repeat("é", 150) + `","task_queue":"q"}`,
		`{"commands":[{"type":"schedule_activity","activity_id":1e30,"activity_type":"A"}]}`,
		`{"commands":null,"activity_cancels":null}`, `{"error":null}`, `{"error":{"message":"m","details":{"x":[]}}}`,
		"\x00\x01\x02", `{"task_queues":[null],"worker_id":"w"}`, `{"lease_duration":"1h","worker_id":"w"}`,
		`{"input":"\ud800"}`, strings.Repeat("[", 10000),
	}
	for _, path := range postRoutes() {
		for _, body := range bodies {
			r := e.do(http.MethodPost, e.base+path, []byte(body))
			if r.status >= 500 {
				t.Errorf("POST %s %.40q: status %d; body %s", path, body, r.status, r.body)
				continue
			}
			if r.status >= 400 {
				r.problem(t)
			}
		}
	}
}
