package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/client"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/worker"
	"github.com/tetherhq/tether/sdk/workflow"
)

// The typed keys the memo tests read, as Temporal code declares them.
var (
	memoCustomerKey = temporal.NewSearchAttributeKeyKeyword("CustomerId")
	memoAmountKey   = temporal.NewSearchAttributeKeyInt64("Amount")
)

// memoNote reads the memo field "note" of the running workflow the way
// Temporal code does: GetInfo(ctx).Memo through the default converter.
func memoNote(ctx workflow.Context) string {
	var note string
	p := workflow.GetInfo(ctx).Memo.GetFields()["note"]
	if p == nil {
		return "<none>"
	}
	if err := converter.GetDefaultDataConverter().FromPayload(p, &note); err != nil {
		return "<" + err.Error() + ">"
	}
	return note
}

// memoView describes what the workflow sees of its memo and attributes.
func memoView(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	customer, _ := info.TypedSearchAttributes.GetKeyword(memoCustomerKey)
	amount, hasAmount := workflow.GetTypedSearchAttributes(ctx).GetInt64(memoAmountKey)
	raw := ""
	if p := info.SearchAttributes.GetIndexedFields()["CustomerId"]; p != nil {
		raw = string(p.GetData())
	}
	return fmt.Sprintf("note=%s customer=%s raw=%s amount=%d/%v", memoNote(ctx), customer, raw, amount, hasAmount)
}

// MemoKid reports what it sees of its memo and attributes.
func MemoKid(ctx workflow.Context) (string, error) { return memoView(ctx), nil }

// MemoFlow reports what it sees at start, upserts its memo and an
// attribute and reports again, starts a child with a memo of its own, and
// continues as new once: the next run reports what it carried over.
func MemoFlow(ctx workflow.Context, run int) ([]string, error) {
	if run == 1 {
		return []string{"run2: " + memoView(ctx)}, nil
	}
	out := []string{"start: " + memoView(ctx)}
	if err := workflow.SetQueryHandler(ctx, "seen", func() ([]string, error) { return out, nil }); err != nil {
		return nil, err
	}
	if err := workflow.UpsertMemo(ctx, map[string]any{"note": "changed", "gone": nil}); err != nil {
		return nil, err
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, memoAmountKey.ValueSet(42)); err != nil {
		return nil, err
	}
	out = append(out, "upserted: "+memoView(ctx))
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "memo-kid",
		Memo:                  map[string]any{"note": "for the kid"},
		TypedSearchAttributes: temporal.NewSearchAttributes(memoCustomerKey.ValueSet("kid-7"))})
	var kid string
	if err := workflow.ExecuteChildWorkflow(cctx, MemoKid).Get(ctx, &kid); err != nil {
		return nil, err
	}
	out = append(out, "kid: "+kid)
	// The signal holds the first run open for the describe of the test.
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	return nil, workflow.NewContinueAsNewError(ctx, MemoFlow, 1)
}

// TestMemoAndSearchAttributesInWorkflow: a workflow sees its start memo and
// search attributes in GetInfo (Memo through the converter,
// SearchAttributes, TypedSearchAttributes) and GetTypedSearchAttributes,
// sees its own UpsertMemo and upserts at once, describe shows the upserted
// memo, a child sees the memo and attributes its parent gave it, and the
// run after continue-as-new carries them over; the histories replay.
func TestMemoAndSearchAttributesInWorkflow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for name, typ := range map[string]string{"CustomerId": api.SearchAttributeKeyword, "Amount": api.SearchAttributeInt} {
		if _, err := e.c.RegisterSearchAttribute(ctx, name, typ); err != nil {
			t.Fatal(err)
		}
	}
	c := e.dialTemporal()
	e.startTemporalWorker(c, "memo", func(w worker.Worker) {
		must(t, w.AddWorkflow(MemoFlow))
		must(t, w.AddWorkflow(MemoKid))
	})
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "memo-1", TaskQueue: "memo",
		Memo:                  map[string]any{"note": "hello", "gone": 1},
		TypedSearchAttributes: temporal.NewSearchAttributes(memoCustomerKey.ValueSet("c-1"))}, MemoFlow, 0)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the child to finish", func() bool {
		d, err := e.c.Describe(ctx, "memo-kid")
		return err == nil && d.Status == api.StatusCompleted
	})
	d, err := e.c.Describe(ctx, "memo-1")
	if err != nil {
		t.Fatal(err)
	}
	if string(d.Memo) != `{"note": "changed"}` && string(d.Memo) != `{"note":"changed"}` {
		t.Fatalf("describe memo %s, want the upserted one", d.Memo)
	}
	kid, err := e.c.Describe(ctx, "memo-kid")
	if err != nil || !strings.Contains(string(kid.Memo), "for the kid") {
		t.Fatalf("kid memo %s, %v", kid.Memo, err)
	}
	var seen []string
	waitFor(t, 30*time.Second, "the parent to see its child's result", func() bool {
		v, err := c.QueryWorkflow(ctx, "memo-1", "", "seen")
		return err == nil && v.Get(&seen) == nil && len(seen) == 3
	})
	wantSeen := []string{
		`start: note=hello customer=c-1 raw="c-1" amount=0/false`,
		`upserted: note=changed customer=c-1 raw="c-1" amount=42/true`,
		`kid: note=for the kid customer=kid-7 raw="kid-7" amount=0/false`,
	}
	if fmt.Sprint(seen) != fmt.Sprint(wantSeen) {
		t.Fatalf("first run saw\n%q\nwant\n%q", seen, wantSeen)
	}
	e.replayClean("memo-1", MemoFlow)
	if err := c.SignalWorkflow(ctx, "memo-1", "", "go", nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := c.GetWorkflow(ctx, "memo-1", "").Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{`run2: note=changed customer=c-1 raw="c-1" amount=42/true`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("second run saw %q, want %q", got, want)
	}
	e.replayClean("memo-1", MemoFlow)
	e.replayClean("memo-kid", MemoKid)
}
