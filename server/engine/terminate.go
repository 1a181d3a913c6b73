package engine

import "github.com/tetherhq/tether/api"

// ReasonWorkflowTerminated is the cancel reason of the attempts of a
// terminated execution (POST /workflows/{id}/terminate).
const ReasonWorkflowTerminated = api.CancelReasonWorkflowTerminated
