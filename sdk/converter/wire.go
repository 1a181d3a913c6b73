package converter

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/sdk/common"
)

// EnvelopeKey is the single key of the JSON object a payload that is not
// plain JSON travels as through the REST API and is stored as:
//
//	{"_tether_payload":{"metadata":{"encoding":"YmluYXJ5L2VuY3J5cHRlZA=="},"data":"…"}}
//
// The inner object is Temporal's JSON form of one payload (metadata values
// and data in base64), the shape a codec server reads. A plain JSON value
// never has this shape unless a workflow sends an object with that key,
// which Tether reserves.
const EnvelopeKey = "_tether_payload"

// wirePayload is Temporal's protobuf-JSON form of one payload.
type wirePayload struct {
	Metadata map[string][]byte `json:"metadata,omitempty"`
	Data     []byte            `json:"data,omitempty"`
}

type envelope struct {
	Payload *wirePayload `json:"_tether_payload"`
}

// PayloadCodecError is the failure of a data converter or codec on a
// payload the SDK sends (Encode) or reads (!Encode). Operations that meet
// it fail with it and are not retried: a workflow task fails, an activity
// attempt fails.
type PayloadCodecError struct {
	// Encode is true on the way out, false on the way in.
	Encode bool
	// Field is the wire field of the payload ("input", "result", …).
	Field string
	// Err is the converter's or codec's error.
	Err error
}

// Error implements error.
func (e *PayloadCodecError) Error() string {
	dir := "decode"
	if e.Encode {
		dir = "encode"
	}
	return fmt.Sprintf("PayloadCodecError: %s %s: %v", dir, e.Field, e.Err)
}

// Unwrap returns Err.
func (e *PayloadCodecError) Unwrap() error { return e.Err }

// ToWire converts raw, the JSON of a value, to what travels through the
// REST API: dc's payload of it, as its plain JSON when the payload is
// json/plain with no other metadata, as an envelope (EnvelopeKey)
// otherwise. Empty input and null stay as they are.
func ToWire(dc DataConverter, raw json.RawMessage) (json.RawMessage, error) {
	if isEmpty(raw) {
		return raw, nil
	}
	p, err := dc.ToPayload(raw)
	if err != nil {
		return nil, err
	}
	return PayloadToWire(p)
}

// FromWire undoes ToWire: an envelope is read through dc into the JSON of
// the value; anything else is returned as it is.
func FromWire(dc DataConverter, raw json.RawMessage) (json.RawMessage, error) {
	p, ok, err := PayloadFromWire(raw)
	if !ok || err != nil {
		return raw, err
	}
	var out json.RawMessage
	if err := dc.FromPayload(p, &out); err != nil {
		return nil, err
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("payload of encoding %q decodes to no JSON value: %w", p.Metadata[MetadataEncoding], ErrUnableToDecode)
	}
	return out, nil
}

// PayloadToWire returns p as it travels: its data when p is json/plain
// (with no other metadata) and the data is JSON, an envelope otherwise.
func PayloadToWire(p *common.Payload) (json.RawMessage, error) {
	if p == nil {
		return nil, nil
	}
	if len(p.Metadata) == 1 && string(p.Metadata[MetadataEncoding]) == MetadataEncodingJSON && json.Valid(p.Data) {
		return p.Data, nil
	}
	b, err := json.Marshal(envelope{Payload: &wirePayload{Metadata: p.Metadata, Data: p.Data}})
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	return b, nil
}

// PayloadFromWire returns the payload of raw when raw is an envelope
// (ok=false for any other JSON value). A JSON value that is not an
// envelope is the json/plain payload of itself.
func PayloadFromWire(raw json.RawMessage) (p *common.Payload, ok bool, err error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"`+EnvelopeKey+`"`)) {
		return nil, false, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(t, &m) != nil || len(m) != 1 || m[EnvelopeKey] == nil {
		return nil, false, nil
	}
	var wp wirePayload
	if err := json.Unmarshal(m[EnvelopeKey], &wp); err != nil {
		return nil, true, fmt.Errorf("envelope %s: %w", EnvelopeKey, err)
	}
	return &common.Payload{Metadata: wp.Metadata, Data: wp.Data}, true, nil
}

func isEmpty(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}
