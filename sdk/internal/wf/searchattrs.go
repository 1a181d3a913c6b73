package wf

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/api"
)

// encodeAttributes encodes search attribute values for a command (nil when
// none); a value that cannot be encoded is a bug of the workflow code and
// fails it like a panic.
func encodeAttributes(attrs map[string]any) map[string]json.RawMessage {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(attrs))
	for k, v := range attrs {
		b, err := json.Marshal(v)
		if err != nil {
			panic(fmt.Sprintf("workflow: search attribute %s: %v", k, err))
		}
		out[k] = b
	}
	return out
}

// UpsertSearchAttributes sets search attributes of the running workflow
// (Temporal's workflow.UpsertSearchAttributes): an
// upsert_search_attributes command, recorded in history as an
// UpsertWorkflowSearchAttributes event, so that replay issues it again only
// past what history holds. Each name must be registered in the namespace
// and each value of its type (string, integer, number, bool, time.Time,
// []string); a nil value removes the attribute. A value of the wrong type
// fails the turn (the server answers 400 naming the attribute).
func upsertSearchAttributesDirect(ctx Context, attributes map[string]any) error {
	if len(attributes) == 0 {
		return errors.New("workflow.UpsertSearchAttributes: no attributes")
	}
	if len(attributes) > api.MaxSearchAttributesPerWorkflow {
		return fmt.Errorf("workflow.UpsertSearchAttributes: at most %d attributes", api.MaxSearchAttributesPerWorkflow)
	}
	raw := make(map[string]json.RawMessage, len(attributes))
	for k, v := range attributes {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("workflow.UpsertSearchAttributes: %s: %w", k, err)
		}
		raw[k] = b
	}
	s := ctx.impl().s
	s.issue(api.Command{Type: api.CommandUpsertSearchAttributes, SearchAttributes: raw})
	return nil
}
