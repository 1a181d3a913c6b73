package testsuite_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/activity"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

// reverseCodec reverses each payload's data and marks it, counting the
// payloads it encodes and decodes; with failDecode set it refuses to
// decode.
type reverseCodec struct {
	mu               sync.Mutex
	encoded, decoded int
	failDecode       bool
	sawReversedHello bool
}

func reversed(b []byte) []byte {
	out := bytes.Clone(b)
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func (c *reverseCodec) Encode(ps []*common.Payload) ([]*common.Payload, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		c.encoded++
		md := map[string][]byte{"encoding": []byte("binary/reversed")}
		for k, v := range p.Metadata {
			md["orig-"+k] = v
		}
		out[i] = &common.Payload{Metadata: md, Data: reversed(p.Data)}
	}
	return out, nil
}

func (c *reverseCodec) Decode(ps []*common.Payload) ([]*common.Payload, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failDecode {
		return nil, errors.New("no key to decrypt with")
	}
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		c.decoded++
		if bytes.Equal(p.Data, reversed([]byte(`"World"`))) {
			c.sawReversedHello = true
		}
		md := map[string][]byte{}
		for k, v := range p.Metadata {
			if len(k) > 5 && k[:5] == "orig-" {
				md[k[5:]] = v
			}
		}
		out[i] = &common.Payload{Metadata: md, Data: reversed(p.Data)}
	}
	return out, nil
}

func TestSetDataConverterPassesPayloadsThroughTheCodec(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	codec := &reverseCodec{}
	env.SetDataConverter(converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec))
	env.RegisterActivity(Greet)

	env.ExecuteWorkflow(Greeting, "World")

	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var result string
	require.NoError(t, env.GetWorkflowResult(&result))
	require.Equal(t, "Hello World!", result)
	// The workflow's input, the activity's input and result, the
	// workflow's result: each encoded once and decoded once.
	require.Equal(t, 4, codec.encoded)
	require.Equal(t, 4, codec.decoded)
	require.True(t, codec.sawReversedHello, "the codec saw the input encoded")
}

func TestSetDataConverterCodecFailureFailsTheActivityNamed(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	codec := &reverseCodec{}
	env.SetDataConverter(converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), codec))
	env.RegisterActivity(Greet)
	var activityErr error
	env.SetOnActivityCompletedListener(func(_ *activity.Info, _ testsuite.EncodedValue, err error) {
		activityErr = err
	})
	// The workflow's input and the activity's decode; then the codec
	// loses its key.
	env.OnActivity(Greet, mock.Anything, mock.Anything).Return(func(context.Context, string) (string, error) {
		codec.mu.Lock()
		codec.failDecode = true
		codec.mu.Unlock()
		return "Hello", nil
	})

	env.ExecuteWorkflow(Greeting, "World")

	require.True(t, env.IsWorkflowCompleted())
	var codecErr *converter.PayloadCodecError
	require.ErrorAs(t, activityErr, &codecErr)
	require.Equal(t, "result", codecErr.Field)
	require.ErrorContains(t, env.GetWorkflowError(), "no key to decrypt with")
}

func TestChildWorkflowListeners(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflow(Child)
	var startedID, startedType, arg, parentID, completedResult string
	var completedErr error
	env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, ctx workflow.Context, args testsuite.EncodedValues) {
		startedID = info.WorkflowExecution.ID
		startedType = info.WorkflowType.Name
		parentID = workflow.GetInfo(ctx).ParentWorkflowExecution.ID
		require.NoError(t, args.Get(&arg))
	})
	env.SetOnChildWorkflowCompletedListener(func(info *workflow.Info, result testsuite.EncodedValue, err error) {
		completedErr = err
		require.NoError(t, result.Get(&completedResult))
	})

	env.ExecuteWorkflow(Parent)

	require.NoError(t, env.GetWorkflowError())
	require.NotEmpty(t, startedID)
	require.Equal(t, "Child", startedType)
	require.Equal(t, "World", arg)
	require.Equal(t, "default-test-workflow-id", parentID)
	require.NoError(t, completedErr)
	require.Equal(t, "Hello World!", completedResult)
}
