package testsuite_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/temporal"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

var customerKey = temporal.NewSearchAttributeKeyKeyword("CustomerId")

// ScheduledBy returns who scheduled the run, the time it was scheduled
// for, its customer and the memo's description (samples-go's schedule
// and memo workflows).
func ScheduledBy(ctx workflow.Context) ([]string, error) {
	info := workflow.GetInfo(ctx)
	var by string
	var at time.Time
	if err := converter.GetDefaultDataConverter().FromPayload(info.SearchAttributes.IndexedFields["TemporalScheduledById"], &by); err != nil {
		return nil, err
	}
	if err := converter.GetDefaultDataConverter().FromPayload(info.SearchAttributes.IndexedFields["TemporalScheduledStartTime"], &at); err != nil {
		return nil, err
	}
	customer, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(customerKey)
	var description string
	if info.Memo != nil {
		if err := converter.GetDefaultDataConverter().FromPayload(info.Memo.Fields["description"], &description); err != nil {
			return nil, err
		}
	}
	return []string{by, at.UTC().Format(time.RFC3339), customer, description}, nil
}

func TestSetSearchAttributesAndMemoOnStart(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	require.NoError(t, env.SetSearchAttributesOnStart(map[string]any{
		"TemporalScheduledById":      "schedule_test_ID",
		"TemporalScheduledStartTime": at,
	}))
	require.NoError(t, env.SetMemoOnStart(map[string]any{"description": "Test memo workflow"}))

	env.ExecuteWorkflow(ScheduledBy)

	require.NoError(t, env.GetWorkflowError())
	var got []string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, []string{"schedule_test_ID", "2026-03-01T09:00:00Z", "", "Test memo workflow"}, got)
}

// CustomerOf returns the workflow's CustomerId search attribute.
func CustomerOf(ctx workflow.Context) (string, error) {
	v, _ := workflow.GetTypedSearchAttributes(ctx).GetKeyword(customerKey)
	return v, nil
}

func TestSetTypedSearchAttributesOnStart(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(customerKey.ValueSet("c-42"))))
	require.Error(t, env.SetMemoOnStart(map[string]any{"bad": func() {}}), "a memo value that is not JSON is refused")
	require.NoError(t, env.SetSearchAttributesOnStart(nil))
	require.NoError(t, env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(customerKey.ValueSet("c-42"))))

	env.ExecuteWorkflow(CustomerOf)

	require.NoError(t, env.GetWorkflowError())
	var got string
	require.NoError(t, env.GetWorkflowResult(&got))
	require.Equal(t, "c-42", got)
}
