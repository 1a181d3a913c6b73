// Package enums holds the enumerations of Temporal's API that workflow and
// client code names (Temporal's go.temporal.io/api/enums/v1): the same type
// names, the same constant names and the same numeric values, so code that
// spells enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE builds unchanged
// when its import path changes. Which values Tether supports is said where
// they are used (client.StartWorkflowOptions, workflow.ChildWorkflowOptions,
// docs/sdk.md "Coming from Temporal").
package enums

import "strconv"

// WorkflowIdReusePolicy says whether a workflow id may be started again after an instance with that id closed (Temporal's enums.WorkflowIdReusePolicy).
type WorkflowIdReusePolicy int32

// Values of WorkflowIdReusePolicy.
const (
	// WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED is unspecified.
	WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED WorkflowIdReusePolicy = 0
	// WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE is allow duplicate.
	WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE WorkflowIdReusePolicy = 1
	// WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY is allow duplicate failed only.
	WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY WorkflowIdReusePolicy = 2
	// WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE is reject duplicate.
	WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE WorkflowIdReusePolicy = 3
	// WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING is terminate if running.
	WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING WorkflowIdReusePolicy = 4
)

var workflowIdReusePolicyNames = [...]string{"WORKFLOW_ID_REUSE_POLICY_UNSPECIFIED", "WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE", "WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY", "WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE", "WORKFLOW_ID_REUSE_POLICY_TERMINATE_IF_RUNNING"}

// String returns the constant's name, such as "WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE".
func (e WorkflowIdReusePolicy) String() string {
	if e >= 0 && int(e) < len(workflowIdReusePolicyNames) {
		return workflowIdReusePolicyNames[e]
	}
	return strconv.Itoa(int(e))
}

// WorkflowIdConflictPolicy says what a start does when an instance with its id is running (Temporal's enums.WorkflowIdConflictPolicy).
type WorkflowIdConflictPolicy int32

// Values of WorkflowIdConflictPolicy.
const (
	// WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED is unspecified.
	WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED WorkflowIdConflictPolicy = 0
	// WORKFLOW_ID_CONFLICT_POLICY_FAIL is fail.
	WORKFLOW_ID_CONFLICT_POLICY_FAIL WorkflowIdConflictPolicy = 1
	// WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING is use existing.
	WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING WorkflowIdConflictPolicy = 2
	// WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING is terminate existing.
	WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING WorkflowIdConflictPolicy = 3
)

var workflowIdConflictPolicyNames = [...]string{"WORKFLOW_ID_CONFLICT_POLICY_UNSPECIFIED", "WORKFLOW_ID_CONFLICT_POLICY_FAIL", "WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING", "WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING"}

// String returns the constant's name, such as "WORKFLOW_ID_CONFLICT_POLICY_FAIL".
func (e WorkflowIdConflictPolicy) String() string {
	if e >= 0 && int(e) < len(workflowIdConflictPolicyNames) {
		return workflowIdConflictPolicyNames[e]
	}
	return strconv.Itoa(int(e))
}

// ParentClosePolicy says what happens to a child workflow when its parent closes (Temporal's enums.ParentClosePolicy).
type ParentClosePolicy int32

// Values of ParentClosePolicy.
const (
	// PARENT_CLOSE_POLICY_UNSPECIFIED is unspecified.
	PARENT_CLOSE_POLICY_UNSPECIFIED ParentClosePolicy = 0
	// PARENT_CLOSE_POLICY_TERMINATE is terminate.
	PARENT_CLOSE_POLICY_TERMINATE ParentClosePolicy = 1
	// PARENT_CLOSE_POLICY_ABANDON is abandon.
	PARENT_CLOSE_POLICY_ABANDON ParentClosePolicy = 2
	// PARENT_CLOSE_POLICY_REQUEST_CANCEL is request cancel.
	PARENT_CLOSE_POLICY_REQUEST_CANCEL ParentClosePolicy = 3
)

var parentClosePolicyNames = [...]string{"PARENT_CLOSE_POLICY_UNSPECIFIED", "PARENT_CLOSE_POLICY_TERMINATE", "PARENT_CLOSE_POLICY_ABANDON", "PARENT_CLOSE_POLICY_REQUEST_CANCEL"}

// String returns the constant's name, such as "PARENT_CLOSE_POLICY_TERMINATE".
func (e ParentClosePolicy) String() string {
	if e >= 0 && int(e) < len(parentClosePolicyNames) {
		return parentClosePolicyNames[e]
	}
	return strconv.Itoa(int(e))
}

// WorkflowExecutionStatus is the status of a workflow execution (Temporal's enums.WorkflowExecutionStatus).
type WorkflowExecutionStatus int32

// Values of WorkflowExecutionStatus.
const (
	// WORKFLOW_EXECUTION_STATUS_UNSPECIFIED is unspecified.
	WORKFLOW_EXECUTION_STATUS_UNSPECIFIED WorkflowExecutionStatus = 0
	// WORKFLOW_EXECUTION_STATUS_RUNNING is running.
	WORKFLOW_EXECUTION_STATUS_RUNNING WorkflowExecutionStatus = 1
	// WORKFLOW_EXECUTION_STATUS_COMPLETED is completed.
	WORKFLOW_EXECUTION_STATUS_COMPLETED WorkflowExecutionStatus = 2
	// WORKFLOW_EXECUTION_STATUS_FAILED is failed.
	WORKFLOW_EXECUTION_STATUS_FAILED WorkflowExecutionStatus = 3
	// WORKFLOW_EXECUTION_STATUS_CANCELED is canceled.
	WORKFLOW_EXECUTION_STATUS_CANCELED WorkflowExecutionStatus = 4
	// WORKFLOW_EXECUTION_STATUS_TERMINATED is terminated.
	WORKFLOW_EXECUTION_STATUS_TERMINATED WorkflowExecutionStatus = 5
	// WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW is continued as new.
	WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW WorkflowExecutionStatus = 6
	// WORKFLOW_EXECUTION_STATUS_TIMED_OUT is timed out.
	WORKFLOW_EXECUTION_STATUS_TIMED_OUT WorkflowExecutionStatus = 7
)

var workflowExecutionStatusNames = [...]string{"WORKFLOW_EXECUTION_STATUS_UNSPECIFIED", "WORKFLOW_EXECUTION_STATUS_RUNNING", "WORKFLOW_EXECUTION_STATUS_COMPLETED", "WORKFLOW_EXECUTION_STATUS_FAILED", "WORKFLOW_EXECUTION_STATUS_CANCELED", "WORKFLOW_EXECUTION_STATUS_TERMINATED", "WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW", "WORKFLOW_EXECUTION_STATUS_TIMED_OUT"}

// String returns the constant's name, such as "WORKFLOW_EXECUTION_STATUS_RUNNING".
func (e WorkflowExecutionStatus) String() string {
	if e >= 0 && int(e) < len(workflowExecutionStatusNames) {
		return workflowExecutionStatusNames[e]
	}
	return strconv.Itoa(int(e))
}

// ScheduleOverlapPolicy is what a schedule's slot does while a workflow it started still runs (Temporal's enums.ScheduleOverlapPolicy).
type ScheduleOverlapPolicy int32

// Values of ScheduleOverlapPolicy.
const (
	// SCHEDULE_OVERLAP_POLICY_UNSPECIFIED is unspecified.
	SCHEDULE_OVERLAP_POLICY_UNSPECIFIED ScheduleOverlapPolicy = 0
	// SCHEDULE_OVERLAP_POLICY_SKIP is skip.
	SCHEDULE_OVERLAP_POLICY_SKIP ScheduleOverlapPolicy = 1
	// SCHEDULE_OVERLAP_POLICY_BUFFER_ONE is buffer one.
	SCHEDULE_OVERLAP_POLICY_BUFFER_ONE ScheduleOverlapPolicy = 2
	// SCHEDULE_OVERLAP_POLICY_BUFFER_ALL is buffer all.
	SCHEDULE_OVERLAP_POLICY_BUFFER_ALL ScheduleOverlapPolicy = 3
	// SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER is cancel other.
	SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER ScheduleOverlapPolicy = 4
	// SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER is terminate other.
	SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER ScheduleOverlapPolicy = 5
	// SCHEDULE_OVERLAP_POLICY_ALLOW_ALL is allow all.
	SCHEDULE_OVERLAP_POLICY_ALLOW_ALL ScheduleOverlapPolicy = 6
)

var scheduleOverlapPolicyNames = [...]string{"SCHEDULE_OVERLAP_POLICY_UNSPECIFIED", "SCHEDULE_OVERLAP_POLICY_SKIP", "SCHEDULE_OVERLAP_POLICY_BUFFER_ONE", "SCHEDULE_OVERLAP_POLICY_BUFFER_ALL", "SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER", "SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER", "SCHEDULE_OVERLAP_POLICY_ALLOW_ALL"}

// String returns the constant's name, such as "SCHEDULE_OVERLAP_POLICY_SKIP".
func (e ScheduleOverlapPolicy) String() string {
	if e >= 0 && int(e) < len(scheduleOverlapPolicyNames) {
		return scheduleOverlapPolicyNames[e]
	}
	return strconv.Itoa(int(e))
}

// IndexedValueType is the type of a search attribute (Temporal's enums.IndexedValueType).
type IndexedValueType int32

// Values of IndexedValueType.
const (
	// INDEXED_VALUE_TYPE_UNSPECIFIED is unspecified.
	INDEXED_VALUE_TYPE_UNSPECIFIED IndexedValueType = 0
	// INDEXED_VALUE_TYPE_TEXT is text.
	INDEXED_VALUE_TYPE_TEXT IndexedValueType = 1
	// INDEXED_VALUE_TYPE_KEYWORD is keyword.
	INDEXED_VALUE_TYPE_KEYWORD IndexedValueType = 2
	// INDEXED_VALUE_TYPE_INT is int.
	INDEXED_VALUE_TYPE_INT IndexedValueType = 3
	// INDEXED_VALUE_TYPE_DOUBLE is double.
	INDEXED_VALUE_TYPE_DOUBLE IndexedValueType = 4
	// INDEXED_VALUE_TYPE_BOOL is bool.
	INDEXED_VALUE_TYPE_BOOL IndexedValueType = 5
	// INDEXED_VALUE_TYPE_DATETIME is datetime.
	INDEXED_VALUE_TYPE_DATETIME IndexedValueType = 6
	// INDEXED_VALUE_TYPE_KEYWORD_LIST is keyword list.
	INDEXED_VALUE_TYPE_KEYWORD_LIST IndexedValueType = 7
)

var indexedValueTypeNames = [...]string{"INDEXED_VALUE_TYPE_UNSPECIFIED", "INDEXED_VALUE_TYPE_TEXT", "INDEXED_VALUE_TYPE_KEYWORD", "INDEXED_VALUE_TYPE_INT", "INDEXED_VALUE_TYPE_DOUBLE", "INDEXED_VALUE_TYPE_BOOL", "INDEXED_VALUE_TYPE_DATETIME", "INDEXED_VALUE_TYPE_KEYWORD_LIST"}

// String returns the constant's name, such as "INDEXED_VALUE_TYPE_TEXT".
func (e IndexedValueType) String() string {
	if e >= 0 && int(e) < len(indexedValueTypeNames) {
		return indexedValueTypeNames[e]
	}
	return strconv.Itoa(int(e))
}

// TimeoutType is the kind of timeout of a *temporal.TimeoutError (Temporal's enums.TimeoutType).
type TimeoutType int32

// Values of TimeoutType.
const (
	// TIMEOUT_TYPE_UNSPECIFIED is unspecified.
	TIMEOUT_TYPE_UNSPECIFIED TimeoutType = 0
	// TIMEOUT_TYPE_START_TO_CLOSE is start to close.
	TIMEOUT_TYPE_START_TO_CLOSE TimeoutType = 1
	// TIMEOUT_TYPE_SCHEDULE_TO_START is schedule to start.
	TIMEOUT_TYPE_SCHEDULE_TO_START TimeoutType = 2
	// TIMEOUT_TYPE_SCHEDULE_TO_CLOSE is schedule to close.
	TIMEOUT_TYPE_SCHEDULE_TO_CLOSE TimeoutType = 3
	// TIMEOUT_TYPE_HEARTBEAT is heartbeat.
	TIMEOUT_TYPE_HEARTBEAT TimeoutType = 4
)

var timeoutTypeNames = [...]string{"TIMEOUT_TYPE_UNSPECIFIED", "TIMEOUT_TYPE_START_TO_CLOSE", "TIMEOUT_TYPE_SCHEDULE_TO_START", "TIMEOUT_TYPE_SCHEDULE_TO_CLOSE", "TIMEOUT_TYPE_HEARTBEAT"}

// String returns the constant's name, such as "TIMEOUT_TYPE_START_TO_CLOSE".
func (e TimeoutType) String() string {
	if e >= 0 && int(e) < len(timeoutTypeNames) {
		return timeoutTypeNames[e]
	}
	return strconv.Itoa(int(e))
}

// ResetReapplyType says which events received after a reset point are
// applied again to the new run (Temporal's enums.ResetReapplyType).
// Tether re-applies signals; updates are never re-applied.
type ResetReapplyType int32

// Values of ResetReapplyType.
const (
	// RESET_REAPPLY_TYPE_UNSPECIFIED is unspecified (signals are re-applied).
	RESET_REAPPLY_TYPE_UNSPECIFIED ResetReapplyType = 0
	// RESET_REAPPLY_TYPE_SIGNAL re-applies signals.
	RESET_REAPPLY_TYPE_SIGNAL ResetReapplyType = 1
	// RESET_REAPPLY_TYPE_NONE re-applies nothing.
	RESET_REAPPLY_TYPE_NONE ResetReapplyType = 2
	// RESET_REAPPLY_TYPE_ALL_ELIGIBLE re-applies what can be (signals).
	RESET_REAPPLY_TYPE_ALL_ELIGIBLE ResetReapplyType = 3
)

var resetReapplyTypeNames = [...]string{"RESET_REAPPLY_TYPE_UNSPECIFIED", "RESET_REAPPLY_TYPE_SIGNAL", "RESET_REAPPLY_TYPE_NONE", "RESET_REAPPLY_TYPE_ALL_ELIGIBLE"}

// String returns the constant's name, such as "RESET_REAPPLY_TYPE_SIGNAL".
func (e ResetReapplyType) String() string {
	if e >= 0 && int(e) < len(resetReapplyTypeNames) {
		return resetReapplyTypeNames[e]
	}
	return strconv.Itoa(int(e))
}

// ResetReapplyExcludeType names a kind of event a reset does not apply
// again (Temporal's enums.ResetReapplyExcludeType).
type ResetReapplyExcludeType int32

// Values of ResetReapplyExcludeType.
const (
	// RESET_REAPPLY_EXCLUDE_TYPE_UNSPECIFIED is unspecified.
	RESET_REAPPLY_EXCLUDE_TYPE_UNSPECIFIED ResetReapplyExcludeType = 0
	// RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL leaves out signals.
	RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL ResetReapplyExcludeType = 1
	// RESET_REAPPLY_EXCLUDE_TYPE_UPDATE leaves out updates (Tether never
	// re-applies them).
	RESET_REAPPLY_EXCLUDE_TYPE_UPDATE ResetReapplyExcludeType = 2
)

var resetReapplyExcludeTypeNames = [...]string{"RESET_REAPPLY_EXCLUDE_TYPE_UNSPECIFIED", "RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL", "RESET_REAPPLY_EXCLUDE_TYPE_UPDATE"}

// String returns the constant's name, such as "RESET_REAPPLY_EXCLUDE_TYPE_SIGNAL".
func (e ResetReapplyExcludeType) String() string {
	if e >= 0 && int(e) < len(resetReapplyExcludeTypeNames) {
		return resetReapplyExcludeTypeNames[e]
	}
	return strconv.Itoa(int(e))
}

// ActivityExecutionStatus is the status of a standalone activity (Temporal's enums.ActivityExecutionStatus).
type ActivityExecutionStatus int32

// Values of ActivityExecutionStatus.
const (
	// ACTIVITY_EXECUTION_STATUS_UNSPECIFIED is unspecified.
	ACTIVITY_EXECUTION_STATUS_UNSPECIFIED ActivityExecutionStatus = 0
	// ACTIVITY_EXECUTION_STATUS_RUNNING is running (scheduled, started or backing off).
	ACTIVITY_EXECUTION_STATUS_RUNNING ActivityExecutionStatus = 1
	// ACTIVITY_EXECUTION_STATUS_COMPLETED is completed.
	ACTIVITY_EXECUTION_STATUS_COMPLETED ActivityExecutionStatus = 2
	// ACTIVITY_EXECUTION_STATUS_FAILED is failed.
	ACTIVITY_EXECUTION_STATUS_FAILED ActivityExecutionStatus = 3
	// ACTIVITY_EXECUTION_STATUS_CANCELED is canceled.
	ACTIVITY_EXECUTION_STATUS_CANCELED ActivityExecutionStatus = 4
	// ACTIVITY_EXECUTION_STATUS_TERMINATED is terminated.
	ACTIVITY_EXECUTION_STATUS_TERMINATED ActivityExecutionStatus = 5
	// ACTIVITY_EXECUTION_STATUS_TIMED_OUT is timed out.
	ACTIVITY_EXECUTION_STATUS_TIMED_OUT ActivityExecutionStatus = 6
)

var activityExecutionStatusNames = [...]string{"ACTIVITY_EXECUTION_STATUS_UNSPECIFIED", "ACTIVITY_EXECUTION_STATUS_RUNNING", "ACTIVITY_EXECUTION_STATUS_COMPLETED", "ACTIVITY_EXECUTION_STATUS_FAILED", "ACTIVITY_EXECUTION_STATUS_CANCELED", "ACTIVITY_EXECUTION_STATUS_TERMINATED", "ACTIVITY_EXECUTION_STATUS_TIMED_OUT"}

// String returns the constant's name, such as "ACTIVITY_EXECUTION_STATUS_COMPLETED".
func (e ActivityExecutionStatus) String() string {
	if e >= 0 && int(e) < len(activityExecutionStatusNames) {
		return activityExecutionStatusNames[e]
	}
	return strconv.Itoa(int(e))
}

// ActivityIdReusePolicy says whether a standalone activity's id may start again after an activity with that id closed (Temporal's enums.ActivityIdReusePolicy).
type ActivityIdReusePolicy int32

// Values of ActivityIdReusePolicy.
const (
	// ACTIVITY_ID_REUSE_POLICY_UNSPECIFIED is unspecified.
	ACTIVITY_ID_REUSE_POLICY_UNSPECIFIED ActivityIdReusePolicy = 0
	// ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE is allow duplicate.
	ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE ActivityIdReusePolicy = 1
	// ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY is allow duplicate failed only.
	ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY ActivityIdReusePolicy = 2
	// ACTIVITY_ID_REUSE_POLICY_REJECT_DUPLICATE is reject duplicate.
	ACTIVITY_ID_REUSE_POLICY_REJECT_DUPLICATE ActivityIdReusePolicy = 3
)

var activityIdReusePolicyNames = [...]string{"ACTIVITY_ID_REUSE_POLICY_UNSPECIFIED", "ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE", "ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY", "ACTIVITY_ID_REUSE_POLICY_REJECT_DUPLICATE"}

// String returns the constant's name, such as "ACTIVITY_ID_REUSE_POLICY_ALLOW_DUPLICATE".
func (e ActivityIdReusePolicy) String() string {
	if e >= 0 && int(e) < len(activityIdReusePolicyNames) {
		return activityIdReusePolicyNames[e]
	}
	return strconv.Itoa(int(e))
}

// ActivityIdConflictPolicy says what starting a standalone activity does when one with its id is running (Temporal's enums.ActivityIdConflictPolicy).
type ActivityIdConflictPolicy int32

// Values of ActivityIdConflictPolicy.
const (
	// ACTIVITY_ID_CONFLICT_POLICY_UNSPECIFIED is unspecified (FAIL).
	ACTIVITY_ID_CONFLICT_POLICY_UNSPECIFIED ActivityIdConflictPolicy = 0
	// ACTIVITY_ID_CONFLICT_POLICY_FAIL is fail.
	ACTIVITY_ID_CONFLICT_POLICY_FAIL ActivityIdConflictPolicy = 1
	// ACTIVITY_ID_CONFLICT_POLICY_USE_EXISTING is use existing.
	ACTIVITY_ID_CONFLICT_POLICY_USE_EXISTING ActivityIdConflictPolicy = 2
)

var activityIdConflictPolicyNames = [...]string{"ACTIVITY_ID_CONFLICT_POLICY_UNSPECIFIED", "ACTIVITY_ID_CONFLICT_POLICY_FAIL", "ACTIVITY_ID_CONFLICT_POLICY_USE_EXISTING"}

// String returns the constant's name, such as "ACTIVITY_ID_CONFLICT_POLICY_FAIL".
func (e ActivityIdConflictPolicy) String() string {
	if e >= 0 && int(e) < len(activityIdConflictPolicyNames) {
		return activityIdConflictPolicyNames[e]
	}
	return strconv.Itoa(int(e))
}
