package testsuite

import (
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/temporal"
)

// This file holds what the workflow ExecuteWorkflow runs starts with
// besides its arguments: its memo and search attributes.

// SetMemoOnStart sets the memo the workflow starts with (Temporal's): the
// workflow reads it in workflow.GetInfo(ctx).Memo. It returns an error
// for a value that does not encode as JSON.
func (t *TestWorkflowEnvironment) SetMemoOnStart(memo map[string]any) error {
	m, err := encodeFields("memo", memo)
	if err != nil {
		return err
	}
	t.impl.startMemo = m
	return nil
}

// SetSearchAttributesOnStart sets the search attributes the workflow
// starts with, by name (Temporal's, deprecated there for
// SetTypedSearchAttributesOnStart): the workflow reads them in
// workflow.GetInfo(ctx).SearchAttributes and GetTypedSearchAttributes.
func (t *TestWorkflowEnvironment) SetSearchAttributesOnStart(searchAttributes map[string]any) error {
	m, err := encodeFields("search attribute", searchAttributes)
	if err != nil {
		return err
	}
	t.impl.startSearchAttrs = m
	return nil
}

// SetTypedSearchAttributesOnStart sets the search attributes the workflow
// starts with (Temporal's).
func (t *TestWorkflowEnvironment) SetTypedSearchAttributesOnStart(searchAttributes temporal.SearchAttributes) error {
	values, err := searchAttributes.Map()
	if err != nil {
		return fmt.Errorf("testsuite: search attributes: %w", err)
	}
	return t.SetSearchAttributesOnStart(values)
}

func encodeFields(what string, values map[string]any) (map[string]json.RawMessage, error) {
	out := make(map[string]json.RawMessage, len(values))
	for k, v := range values {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("testsuite: %s %q: %w", what, k, err)
		}
		out[k] = raw
	}
	return out, nil
}

// withStartFields adds the memo and search attributes set on start to the
// start event of the root execution.
func (x *execution) withStartFields(ev *api.Event) {
	if ev.Kind != api.EventWorkflowStarted || x != x.e.root {
		return
	}
	if ev.Memo == nil {
		ev.Memo = x.e.startMemo
	}
	if ev.SearchAttributes == nil {
		ev.SearchAttributes = x.e.startSearchAttrs
	}
}
