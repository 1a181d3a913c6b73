package e2e

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/workflow"
)

// Temporal's expense sample, ported: WaitForDecisionActivity registers the
// expense with an outside system (here: a map) and returns
// activity.ErrResultPending; the system completes it later with the task
// token through client.CompleteActivity.

// ExpenseActs are the expense sample's activities.
type ExpenseActs struct {
	mu       sync.Mutex
	tokens   map[string][]byte // expense id → task token
	ids      map[string]int64  // expense id → activity id
	waits    int
	payments []string
}

func newExpenseActs() *ExpenseActs {
	return &ExpenseActs{tokens: map[string][]byte{}, ids: map[string]int64{}}
}

// CreateExpenseActivity creates the expense.
func (a *ExpenseActs) CreateExpenseActivity(ctx context.Context, expenseID string) error {
	if expenseID == "" {
		return errors.New("expense id is empty")
	}
	return nil
}

// WaitForDecisionActivity registers the expense and leaves its result
// pending.
func (a *ExpenseActs) WaitForDecisionActivity(ctx context.Context, expenseID string) (string, error) {
	info := activity.GetInfo(ctx)
	a.mu.Lock()
	a.tokens[expenseID] = info.TaskToken
	a.ids[expenseID], _ = strconv.ParseInt(info.ActivityID, 10, 64)
	a.waits++
	a.mu.Unlock()
	activity.GetLogger(ctx).Info("Waiting for expense decision", "ExpenseID", expenseID)
	return "", activity.ErrResultPending
}

// PaymentActivity pays the expense.
func (a *ExpenseActs) PaymentActivity(ctx context.Context, expenseID string) error {
	a.mu.Lock()
	a.payments = append(a.payments, expenseID)
	a.mu.Unlock()
	return nil
}

func (a *ExpenseActs) registered(id string) ([]byte, int64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	tok, ok := a.tokens[id]
	return tok, a.ids[id], ok
}

// ExpenseWorkflow is the expense sample's workflow.
func ExpenseWorkflow(ctx workflow.Context, expenseID string) (string, error) {
	ao := workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy:         &workflow.RetryPolicy{MaximumAttempts: 1},
	}
	ctx = workflow.WithActivityOptions(ctx, ao)
	logger := workflow.GetLogger(ctx)
	var a *ExpenseActs
	if err := workflow.ExecuteActivity(ctx, a.CreateExpenseActivity, expenseID).Get(ctx, nil); err != nil {
		logger.Error("Failed to create expense report", "Error", err)
		return "", err
	}
	// Short StartToClose for the expense whose decision never comes.
	if expenseID == "never" {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Second,
			RetryPolicy: &workflow.RetryPolicy{MaximumAttempts: 1}})
	}
	var status string
	if err := workflow.ExecuteActivity(ctx, a.WaitForDecisionActivity, expenseID).Get(ctx, &status); err != nil {
		return "", err
	}
	if status != "APPROVED" {
		logger.Info("Workflow completed.", "ExpenseStatus", status)
		return "", nil
	}
	if err := workflow.ExecuteActivity(ctx, a.PaymentActivity, expenseID).Get(ctx, nil); err != nil {
		return "", err
	}
	return "COMPLETED", nil
}

func startExpenseWorker(e *env, acts *ExpenseActs) *running {
	return e.startWorker("q", testOptions(), registers([]any{ExpenseWorkflow}, acts))
}

// TestAsyncCompletion_ExpenseSample: the pending attempt outlives the
// worker that ran it, is heartbeated by id and completed by token from
// outside any worker; the activity ran once.
func TestAsyncCompletion_ExpenseSample(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := newExpenseActs()
	w1 := startExpenseWorker(e, acts)
	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "expense-1", TaskQueue: "q"}, ExpenseWorkflow, "expense-1")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the decision activity to register", func() bool { _, _, ok := acts.registered("expense-1"); return ok })
	token, aid, _ := acts.registered("expense-1")
	// The worker that ran it stops: the attempt is neither reported nor
	// given back, and stays held, bound to no worker, its lock lasting
	// past the StartToClose deadline (10 minutes) rather than the
	// worker's renewals.
	w1.stop()
	waitFor(t, 30*time.Second, "the attempt to be pending", func() bool {
		var pending bool
		if err := e.pool.QueryRow(ctx, `SELECT worker_id IS NULL AND locked_until > now() + interval '5 minutes'
			FROM worker_queue WHERE instance_id = 'expense-1' AND activity_id = $1`, aid).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		return pending
	})
	if err := e.c.RecordActivityHeartbeatByID(ctx, "", "expense-1", "", strconv.FormatInt(aid, 10), "waiting"); err != nil {
		t.Fatalf("heartbeat by id: %v", err)
	}
	if err := e.c.RecordActivityHeartbeat(ctx, token, "still waiting"); err != nil {
		t.Fatalf("heartbeat by token: %v", err)
	}
	startExpenseWorker(e, acts)
	if err := e.c.CompleteActivity(ctx, token, "APPROVED", nil); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if res, err := result[string](t, run, 30*time.Second); err != nil || res != "COMPLETED" {
		t.Fatalf("result %q, %v: want COMPLETED", res, err)
	}
	acts.mu.Lock()
	waits, payments := acts.waits, acts.payments
	acts.mu.Unlock()
	if waits != 1 || len(payments) != 1 {
		t.Fatalf("decision activity ran %d times, payments %v: want once and one", waits, payments)
	}
	h := e.history("expense-1")
	for _, ev := range h {
		if ev.Kind == api.EventActivityCompleted && ev.ActivityID == aid && (ev.Attempt != 1 || string(ev.Result) != `"APPROVED"`) {
			t.Fatalf("decision recorded as %+v, want attempt 1 APPROVED", ev)
		}
	}
	if n := count(h, api.EventActivityCompleted, ""); n != 3 {
		t.Fatalf("%d activities completed, want 3", n)
	}
	e.replayClean("expense-1", ExpenseWorkflow)
}

// TestAsyncCompletion_FailByIDAndTimeout: CompleteActivityByID with an
// error fails the activity; a pending attempt still times out (its
// completer's heartbeat then learns it was cancelled).
func TestAsyncCompletion_FailByIDAndTimeout(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	acts := newExpenseActs()
	startExpenseWorker(e, acts)

	run, err := e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "expense-2", TaskQueue: "q"}, ExpenseWorkflow, "expense-2")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the decision activity to register", func() bool { _, _, ok := acts.registered("expense-2"); return ok })
	_, aid, _ := acts.registered("expense-2")
	if err := e.c.CompleteActivityByID(ctx, "", "expense-2", "1", strconv.FormatInt(aid, 10), nil,
		activity.NewNonRetryableError("Rejected", "expense rejected", nil)); err != nil {
		t.Fatalf("fail by id: %v", err)
	}
	_, err = result[string](t, run, 30*time.Second)
	var fe *client.WorkflowFailedError
	if !errors.As(err, &fe) || fe.Failure.Type != "Rejected" {
		t.Fatalf("result: %v, want the activity's Rejected failure", err)
	}
	if err := e.c.CompleteActivityByID(ctx, "", "expense-2", "", strconv.FormatInt(aid, 10), "APPROVED", nil); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("completion of a finished activity: %v, want ErrNotFound", err)
	}

	run, err = e.c.StartWorkflow(ctx, client.StartWorkflowOptions{ID: "never", TaskQueue: "q"}, ExpenseWorkflow, "never")
	if err != nil {
		t.Fatal(err)
	}
	_, err = result[string](t, run, 30*time.Second)
	if !errors.As(err, &fe) || fe.Failure.Type != api.ErrorTypeTimeout || !strings.Contains(fe.Failure.Message, api.TimeoutStartToClose) {
		t.Fatalf("result: %v, want a start_to_close timeout", err)
	}
	token, _, _ := acts.registered("never")
	var ce *client.ActivityCanceledError
	if err := e.c.RecordActivityHeartbeat(ctx, token, nil); !errors.As(err, &ce) && !errors.Is(err, client.ErrConflict) {
		t.Fatalf("heartbeat after the timeout: %v, want cancelled or lock lost", err)
	}
	e.replayClean("expense-2", ExpenseWorkflow)
	e.replayClean("never", ExpenseWorkflow)
}
