// Package common holds the message types of Temporal's API that workflow
// and client code names (Temporal's go.temporal.io/api/common/v1): the same
// type and field names and the same nil-safe getters as the protobuf
// types, as plain Go structs. Tether's payloads are JSON: a Payload's Data
// is the JSON encoding of a value and its Metadata["encoding"] is
// "json/plain" — unless a codec of package converter made it something
// else (encrypted, compressed), which then travels in an envelope (see
// converter.EnvelopeKey).
package common

import (
	"encoding/json"
	"fmt"
)

// EncodingJSON is the Metadata["encoding"] of a Tether payload.
const EncodingJSON = "json/plain"

// Payload is one encoded value.
type Payload struct {
	// Metadata describes Data (its "encoding", …).
	Metadata map[string][]byte
	// Data is the encoded value.
	Data []byte
}

// GetMetadata returns p.Metadata (nil for a nil p).
func (p *Payload) GetMetadata() map[string][]byte {
	if p == nil {
		return nil
	}
	return p.Metadata
}

// GetData returns p.Data (nil for a nil p).
func (p *Payload) GetData() []byte {
	if p == nil {
		return nil
	}
	return p.Data
}

// payloadJSON is the serialized form of a Payload: Temporal's JSON form
// (metadata values and data in base64).
type payloadJSON struct {
	Metadata map[string][]byte `json:"metadata,omitempty"`
	Data     []byte            `json:"data,omitempty"`
}

// Marshal serializes p (what a codec that wraps a whole payload, such as
// an encrypting one, encodes; Temporal's protobuf Marshal). The form is
// JSON with base64 values; Unmarshal reads it back.
func (p *Payload) Marshal() ([]byte, error) {
	b, err := json.Marshal(payloadJSON{Metadata: p.GetMetadata(), Data: p.GetData()})
	if err != nil {
		return nil, fmt.Errorf("marshal payload: %w", err)
	}
	return b, nil
}

// Unmarshal reads what Marshal wrote into p.
func (p *Payload) Unmarshal(b []byte) error {
	var pj payloadJSON
	if err := json.Unmarshal(b, &pj); err != nil {
		return fmt.Errorf("unmarshal payload: %w", err)
	}
	p.Metadata, p.Data = pj.Metadata, pj.Data
	return nil
}

// Payloads is a list of encoded values (the arguments of a call).
type Payloads struct {
	// Payloads are the values in order.
	Payloads []*Payload
}

// GetPayloads returns p.Payloads (nil for a nil p).
func (p *Payloads) GetPayloads() []*Payload {
	if p == nil {
		return nil
	}
	return p.Payloads
}

// WorkflowExecution names one execution of a workflow.
type WorkflowExecution struct {
	// WorkflowId is the workflow (instance) id.
	WorkflowId string
	// RunId is the execution's run id ("" for the current one).
	RunId string
}

// GetWorkflowId returns e.WorkflowId ("" for a nil e).
func (e *WorkflowExecution) GetWorkflowId() string {
	if e == nil {
		return ""
	}
	return e.WorkflowId
}

// GetRunId returns e.RunId ("" for a nil e).
func (e *WorkflowExecution) GetRunId() string {
	if e == nil {
		return ""
	}
	return e.RunId
}

// WorkflowType names a workflow type.
type WorkflowType struct {
	// Name is the registered name.
	Name string
}

// GetName returns t.Name ("" for a nil t).
func (t *WorkflowType) GetName() string {
	if t == nil {
		return ""
	}
	return t.Name
}

// ActivityType names an activity type.
type ActivityType struct {
	// Name is the registered name.
	Name string
}

// GetName returns t.Name ("" for a nil t).
func (t *ActivityType) GetName() string {
	if t == nil {
		return ""
	}
	return t.Name
}

// Memo is a workflow's memo: encoded values by name.
type Memo struct {
	// Fields are the values by name.
	Fields map[string]*Payload
}

// GetFields returns m.Fields (nil for a nil m).
func (m *Memo) GetFields() map[string]*Payload {
	if m == nil {
		return nil
	}
	return m.Fields
}

// SearchAttributes are a workflow's search attributes: encoded values by
// name.
type SearchAttributes struct {
	// IndexedFields are the values by name.
	IndexedFields map[string]*Payload
}

// GetIndexedFields returns s.IndexedFields (nil for a nil s).
func (s *SearchAttributes) GetIndexedFields() map[string]*Payload {
	if s == nil {
		return nil
	}
	return s.IndexedFields
}

// Header is the header of a call: payloads by key (Temporal's
// commonpb.Header), as interceptors and context propagators read and
// write it.
type Header struct {
	// Fields are the header's payloads by key.
	Fields map[string]*Payload
}

// GetFields returns h.Fields (nil for a nil h).
func (h *Header) GetFields() map[string]*Payload {
	if h == nil {
		return nil
	}
	return h.Fields
}
