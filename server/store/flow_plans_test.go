package store_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/tetherhq/tether/internal/pgtest"
)

// Goal: flow control keeps the fetches index scans. On a fresh database's
// generic plans, the turn fetch (LockNextTurns) and the attempt fetch
// (FetchAttempts) take flow-controlled work from the flow indexes in
// (priority, pass) order and the rest from the dequeue indexes, with no
// sequential scan of either queue; the starts and the statements that
// enqueue a workflow's later messages find a queue's current virtual time
// through the flow index too.
func TestFlowPlansUseTheFlowIndexes(t *testing.T) {
	pool := pgtest.New(t)
	want := map[string][]string{
		"LockNextTurns": {"orchestrator_queue_flow", "orchestrator_queue_dequeue", "instances_pkey"},
		"FetchAttempts": {"worker_queue_flow", "worker_queue_dequeue", "worker_queue_pkey"},
		// With a rate limit per fairness key, each key's bucket by its key.
		"LockNextTurnsKeyed":     {"orchestrator_queue_flow", "orchestrator_queue_dequeue", "instances_pkey", "fairness_key_buckets_pkey"},
		"FetchAttemptsKeyed":     {"worker_queue_flow", "worker_queue_dequeue", "worker_queue_pkey", "fairness_key_buckets_pkey"},
		"StartInstances":         {"orchestrator_queue_flow"},
		"StartChildren":          {"orchestrator_queue_flow"},
		"InsertAttempts":         {"worker_queue_flow"},
		"InsertAttemptsClaiming": {"worker_queue_flow"},
		// A later message's pass: the queue's virtual time.
		"EnqueueMessages":     {"orchestrator_queue_flow"},
		"EnqueueMessagesJoin": {"orchestrator_queue_flow"},
		"EnqueueMessagesTo":   {"orchestrator_queue_flow"},
		"EnqueueSignal":       {"orchestrator_queue_flow"},
		"EnqueueUpdate":       {"orchestrator_queue_flow"},
		"NotifyParents":       {"orchestrator_queue_flow"},
		"NotifyParentsJoin":   {"orchestrator_queue_flow"},
		"CancelChildren":      {"orchestrator_queue_flow"},
		"ApplyClosePolicy":    {"orchestrator_queue_flow"},
		"ResetEnqueue":        {"orchestrator_queue_flow"},
		"ResetTimers":         {"orchestrator_queue_flow"},
		"TakeAttempts":        {"orchestrator_queue_flow"},
	}
	eachGenericPlan(t, pool, func(name string, plan map[string]any) {
		indexes, ok := want[name]
		if !ok {
			return
		}
		delete(want, name)
		used := map[string]bool{}
		planIndexes(plan, used)
		var list []string
		for ix := range used {
			list = append(list, ix)
		}
		sort.Strings(list)
		for _, ix := range indexes {
			if !used[ix] {
				t.Errorf("%s does not read %s: %v", name, ix, list)
			}
		}
		if used["seq:orchestrator_queue"] || used["seq:worker_queue"] {
			t.Errorf("%s reads a queue sequentially: %v", name, list)
		}
	})
	for name := range want {
		t.Errorf("no generated statement %s", name)
	}
}

// Goal: the statements a queue without flow control is fetched with read
// neither the flow indexes nor the rate limits, on a fresh database's
// generic plans: the turn fetch and the attempt fetch dequeue from the
// dequeue indexes alone, as before flow control, and the wake reads of the
// polls from the queues alone. The claim of attempts writes them through
// the ctids their locks found.
func TestFlowPlainPlansReadNoFlowIndex(t *testing.T) {
	pool := pgtest.New(t)
	want := map[string][]string{
		"LockNextTurnsPlain":    {"orchestrator_queue_dequeue", "instances_pkey"},
		"FetchAttemptsPlain":    {"worker_queue_dequeue"},
		"NextWorkflowWakePlain": nil,
		"NextActivityWakePlain": nil,
	}
	eachGenericPlan(t, pool, func(name string, plan map[string]any) {
		indexes, ok := want[name]
		if !ok {
			return
		}
		delete(want, name)
		used := map[string]bool{}
		planIndexes(plan, used)
		for _, ix := range indexes {
			if !used[ix] {
				t.Errorf("%s does not read %s: %v", name, ix, used)
			}
		}
		for ix := range used {
			if strings.HasSuffix(ix, "_flow") || strings.Contains(ix, "task_queue_limits") || strings.Contains(ix, "flow_keys") {
				t.Errorf("%s reads %s", name, ix)
			}
		}
		if used["seq:orchestrator_queue"] || used["seq:worker_queue"] {
			t.Errorf("%s reads a queue sequentially: %v", name, used)
		}
		// The claim writes the attempts it locked through their ctids,
		// never by walking the namespace's attempts.
		if strings.HasPrefix(name, "FetchAttempts") && used["worker_queue_activity"] {
			t.Errorf("%s reads worker_queue_activity: %v", name, used)
		}
	})
	for name := range want {
		t.Errorf("no generated statement %s", name)
	}
}
