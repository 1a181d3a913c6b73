package common_test

import (
	"testing"

	"github.com/tetherhq/tether/sdk/common"
)

// Goal: the getters are nil-safe, as the protobuf ones are.
func TestGettersAreNilSafe(t *testing.T) {
	var e *common.WorkflowExecution
	var p *common.Payload
	var ps *common.Payloads
	var m *common.Memo
	var sa *common.SearchAttributes
	var wt *common.WorkflowType
	if e.GetWorkflowId() != "" || e.GetRunId() != "" || p.GetData() != nil || p.GetMetadata() != nil ||
		ps.GetPayloads() != nil || m.GetFields() != nil || sa.GetIndexedFields() != nil || wt.GetName() != "" {
		t.Fatal("a nil message's getter returned a value")
	}
	e = &common.WorkflowExecution{WorkflowId: "w", RunId: "r"}
	if e.GetWorkflowId() != "w" || e.GetRunId() != "r" {
		t.Fatal("getters")
	}
}
