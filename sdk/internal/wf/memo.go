package wf

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/sdk/common"
	"github.com/tetherhq/tether/sdk/internal/searchattr"
)

// UpsertMemo sets fields of the running workflow's memo (Temporal's
// workflow.UpsertMemo): an upsert_memo command, recorded in history as an
// UpsertWorkflowMemo event, so that replay issues it again only past what
// history holds. A nil value removes the field. The memo shows at once in
// GetInfo(ctx).Memo, and in describe once the turn is acknowledged; a memo
// that would grow past 32 KiB of JSON fails the turn.
func UpsertMemo(ctx Context, memo map[string]any) error {
	if len(memo) == 0 {
		return errors.New("workflow.UpsertMemo: no fields")
	}
	raw := make(map[string]json.RawMessage, len(memo))
	n := 0
	for k, v := range memo {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("workflow.UpsertMemo: %s: %w", k, err)
		}
		raw[k] = b
		n += len(k) + len(b) + 4
	}
	if n > api.MaxMemoBytes {
		return fmt.Errorf("workflow.UpsertMemo: at most %d bytes of JSON", api.MaxMemoBytes)
	}
	ctx.impl().s.issue(api.Command{Type: api.CommandUpsertMemo, Memo: raw})
	return nil
}

// GetTypedSearchAttributes returns the running workflow's search
// attributes (Temporal's workflow.GetTypedSearchAttributes): those it
// started with and its own upserts. Read them with typed keys
// (temporal.NewSearchAttributeKeyKeyword(name), …): a value is found by
// its name and converted to the key's type.
func GetTypedSearchAttributes(ctx Context) searchattr.SearchAttributes {
	return searchattr.FromJSON(ctx.impl().s.searchAttrs)
}

// mergeFields returns base with patch merged in (a JSON null removes a
// field), nil when empty; base is not changed.
func mergeFields(base, patch map[string]json.RawMessage) map[string]json.RawMessage {
	out := maps.Clone(base)
	if out == nil {
		out = make(map[string]json.RawMessage, len(patch))
	}
	for k, v := range patch {
		if string(v) == "null" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// payloads returns fields as JSON payloads (nil for none).
func payloads(fields map[string]json.RawMessage) map[string]*common.Payload {
	if len(fields) == 0 {
		return nil
	}
	out := make(map[string]*common.Payload, len(fields))
	for k, v := range fields {
		out[k] = &common.Payload{Metadata: map[string][]byte{"encoding": []byte(common.EncodingJSON)}, Data: v}
	}
	return out
}
