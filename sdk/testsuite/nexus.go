package testsuite

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/nexus-rpc/sdk-go/nexus"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/internal/errconv"
	"github.com/tetherhq/tether/sdk/internal/nexusop"
	"github.com/tetherhq/tether/sdk/internal/wf"
)

// RegisterNexusService registers the operations of service for the
// workflow's Nexus calls (Temporal's
// TestWorkflowEnvironment.RegisterNexusService): the environment runs
// their handlers in process, whatever endpoint the workflow names, and a
// workflow-run operation's workflow (registered with RegisterWorkflow) as
// a child of the calling workflow. temporalnexus.GetClient returns nil
// there. It panics on a service without a name or registered twice.
func (t *TestWorkflowEnvironment) RegisterNexusService(service *nexus.Service) {
	if service == nil || service.Name == "" {
		panic("testsuite: RegisterNexusService: a service needs a name")
	}
	for _, s := range t.nexusServices {
		if s.Name == service.Name {
			panic(fmt.Sprintf("testsuite: RegisterNexusService: service %q registered twice", service.Name))
		}
	}
	if len(t.nexusServices) == 0 {
		var n atomic.Int64
		start := func(ctx context.Context, req wf.NexusStartRequest) (wf.NexusStartResult, error) {
			id := fmt.Sprintf("test-nexus-operation-%d", n.Add(1))
			env := &nexusop.Env{Logger: activity.GetLogger(ctx), Namespace: defaultNamespace, TaskQueue: t.taskQueue}
			h, err := nexusop.Handle(ctx, t.nexusServices, env, wf.NexusOperationRequest{Endpoint: req.Endpoint,
				Service: req.Service, Operation: req.Operation, Input: req.Input, Header: req.Header, RequestID: id})
			if err != nil {
				// No retries in process: the handler's error is the
				// operation's.
				e := errconv.ToAPI(err)
				h = wf.NexusHandled{Failure: &e}
			}
			return wf.NexusStartResult{OperationID: id, TargetNamespace: defaultNamespace, Inline: &h}, nil
		}
		if _, err := t.reg.addActivityFunc(start, wf.NexusStartActivity, false); err != nil {
			panic(fmt.Sprintf("testsuite: RegisterNexusService: %v", err))
		}
	}
	t.nexusServices = append(t.nexusServices, service)
}
