package workflow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/converter"
	"github.com/tetherhq/tether/sdk/testsuite"
	"github.com/tetherhq/tether/sdk/workflow"
)

type keyIDKey struct{}

// keyedConverter is the shape of samples-go's encryption converter: a
// codec data converter that marks each payload with its key id, and
// implements workflow.ContextAware to pick the key from the context.
type keyedConverter struct {
	converter.DataConverter
	keyID string
}

func newKeyedConverter(keyID string) *keyedConverter {
	return &keyedConverter{DataConverter: converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), keyCodec{keyID}), keyID: keyID}
}

func (c *keyedConverter) WithWorkflowContext(ctx workflow.Context) converter.DataConverter {
	if id, ok := ctx.Value(keyIDKey{}).(string); ok {
		return newKeyedConverter(id)
	}
	return c
}

func (c *keyedConverter) WithContext(ctx context.Context) converter.DataConverter {
	if id, ok := ctx.Value(keyIDKey{}).(string); ok {
		return newKeyedConverter(id)
	}
	return c
}

// keyCodec records its key id in each payload it encodes.
type keyCodec struct{ keyID string }

func (k keyCodec) Encode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		md := map[string][]byte{"encryption-key-id": []byte(k.keyID)}
		for name, v := range p.Metadata {
			md[name] = v
		}
		out[i] = &common.Payload{Metadata: md, Data: p.Data}
	}
	return out, nil
}

func (k keyCodec) Decode(ps []*common.Payload) ([]*common.Payload, error) {
	out := make([]*common.Payload, len(ps))
	for i, p := range ps {
		md := map[string][]byte{}
		for name, v := range p.Metadata {
			if name != "encryption-key-id" {
				md[name] = v
			}
		}
		out[i] = &common.Payload{Metadata: md, Data: p.Data}
	}
	return out, nil
}

func Echo(_ workflow.Context, s string) (string, error) { return s, nil }

// A context-aware converter is a data converter like any other: its
// payloads carry the key id it was configured with.
func TestContextAwareConverter(t *testing.T) {
	dc := newKeyedConverter("k1")
	var _ workflow.ContextAware = dc

	p, err := dc.ToPayload("secret")
	require.NoError(t, err)
	require.Equal(t, "k1", string(p.Metadata["encryption-key-id"]))
	other := dc.WithContext(context.WithValue(context.Background(), keyIDKey{}, "k2"))
	p, err = other.ToPayload("secret")
	require.NoError(t, err)
	require.Equal(t, "k2", string(p.Metadata["encryption-key-id"]))

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetDataConverter(dc)
	env.ExecuteWorkflow(Echo, "secret")
	require.NoError(t, env.GetWorkflowError())
	var out string
	require.NoError(t, env.GetWorkflowResult(&out))
	require.Equal(t, "secret", out)
}
