package testsuite_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

var customerKey = temporal.NewSearchAttributeKeyKeyword("CustomerId")

// memoReader reports its memo field "note" and attribute CustomerId, then
// upserts the note and reports it again.
func memoReader(ctx workflow.Context) (string, error) {
	read := func() string {
		var note string
		_ = converter.GetDefaultDataConverter().FromPayload(workflow.GetInfo(ctx).Memo.GetFields()["note"], &note)
		customer, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(customerKey)
		return note + "/" + customer
	}
	before := read()
	if err := workflow.UpsertMemo(ctx, map[string]any{"note": "changed"}); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s then %s", before, read()), nil
}

// Goal: SetMemoOnStart and SetTypedSearchAttributesOnStart give the
// workflow its memo and attributes (Temporal's test environment calls),
// and UpsertMemo shows at once in GetInfo.
func Test_MemoAndSearchAttributesOnStart(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	require.NoError(t, env.SetMemoOnStart(map[string]any{"note": "hello"}))
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(customerKey.ValueSet("c-1"))))
	env.ExecuteWorkflow(memoReader)
	require.True(t, env.IsWorkflowCompleted())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "hello/c-1 then changed/c-1", got)
	require.Error(t, env.SetMemoOnStart(map[string]any{"bad": func() {}}))
}
