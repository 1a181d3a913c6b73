package enums_test

import (
	"testing"

	"github.com/tetherhq/tether/sdk/enums"
)

// Goal: the constants have Temporal's numeric values (code that stores or
// compares them keeps working) and print their names.
func TestTemporalValuesAndNames(t *testing.T) {
	for _, c := range []struct {
		got  int32
		want int32
		name string
		str  string
	}{
		{int32(enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE), 1, "WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE", enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE.String()},
		{int32(enums.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING), 4, "WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING", enums.WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING.String()},
		{int32(enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING), 2, "WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING", enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING.String()},
		{int32(enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL), 3, "PARENT_CLOSE_POLICY_REQUEST_CANCEL", enums.PARENT_CLOSE_POLICY_REQUEST_CANCEL.String()},
		{int32(enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT), 7, "WORKFLOW_EXECUTION_STATUS_TIMED_OUT", enums.WORKFLOW_EXECUTION_STATUS_TIMED_OUT.String()},
		{int32(enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL), 6, "SCHEDULE_OVERLAP_POLICY_ALLOW_ALL", enums.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL.String()},
		{int32(enums.INDEXED_VALUE_TYPE_KEYWORD_LIST), 7, "INDEXED_VALUE_TYPE_KEYWORD_LIST", enums.INDEXED_VALUE_TYPE_KEYWORD_LIST.String()},
		{int32(enums.TIMEOUT_TYPE_HEARTBEAT), 4, "TIMEOUT_TYPE_HEARTBEAT", enums.TIMEOUT_TYPE_HEARTBEAT.String()},
		{int32(enums.RESET_REAPPLY_TYPE_NONE), 2, "RESET_REAPPLY_TYPE_NONE", enums.RESET_REAPPLY_TYPE_NONE.String()},
		{int32(enums.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL), 1, "RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL", enums.RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL.String()},
	} {
		if c.got != c.want || c.str != c.name {
			t.Errorf("%s = %d (%q), want %d", c.name, c.got, c.str, c.want)
		}
	}
	if s := enums.TimeoutType(42).String(); s != "42" {
		t.Errorf("unknown value prints %q", s)
	}
}
