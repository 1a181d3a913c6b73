// Package payloadwire applies a data converter to the payloads of the REST
// API's JSON bodies: on the way out each payload field's plain JSON becomes
// what converter.ToWire makes of it, on the way in each envelope becomes
// the plain JSON again (converter.FromWire). The SDK's HTTP core calls it
// for every request and answer when its client has a converter other than
// the default, so every payload the SDK sends or reads goes through it in
// one place; with the default converter it is never called.
package payloadwire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/sdk/converter"
)

// payloadFields are the JSON names of the API's payload fields (the
// json.RawMessage fields of package api that carry values of workflow
// code): their values go through the converter and are not walked into.
var payloadFields = map[string]bool{
	"input": true, "result": true, "details": true, "signal_input": true,
	"last_completion_result": true, "marker_details": true, "heartbeat_details": true,
}

const memoField = "memo"

// opaque are fields whose values are user data that is not a payload
// (search attributes stay plain: the server indexes them; a header's
// payloads are the interceptors', whose keys may be any name).
var opaque = map[string]bool{"search_attributes": true, "header": true}

// Encode returns body with each payload converted by dc for the wire. It
// stops at the first failure, a *converter.PayloadCodecError.
func Encode(dc converter.DataConverter, body []byte) ([]byte, error) {
	var first error
	out, err := walk(body, func(field string, v json.RawMessage) json.RawMessage {
		if first != nil {
			return v
		}
		w, err := converter.ToWire(dc, v)
		if err != nil {
			first = &converter.PayloadCodecError{Encode: true, Field: field, Err: err}
			return v
		}
		return w
	})
	if first != nil {
		return nil, first
	}
	return out, err
}

// Decode returns body with each envelope decoded by dc. A payload that
// fails stays an envelope; the first failure is returned (a
// *converter.PayloadCodecError) with the body, so that the caller can read
// the rest (a task's token) and report the failure.
func Decode(dc converter.DataConverter, body []byte) ([]byte, error) {
	var first error
	out, err := walk(body, func(field string, v json.RawMessage) json.RawMessage {
		w, err := converter.FromWire(dc, v)
		if err != nil {
			if first == nil {
				first = &converter.PayloadCodecError{Field: field, Err: err}
			}
			return v
		}
		return w
	})
	if err != nil {
		return body, err
	}
	return out, first
}

// walk returns doc with each payload field's value replaced by f's. A
// document without objects is returned as it is.
func walk(doc []byte, f func(field string, v json.RawMessage) json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(doc)
	if len(t) == 0 {
		return doc, nil
	}
	switch t[0] {
	case '{':
		var m map[string]json.RawMessage
		if err := json.Unmarshal(t, &m); err != nil {
			return nil, fmt.Errorf("payloads: read object: %w", err)
		}
		for k, v := range m {
			switch {
			case payloadFields[k]:
				m[k] = f(k, v)
			case k == memoField:
				mv, err := memo(v, f)
				if err != nil {
					return nil, err
				}
				m[k] = mv
			case opaque[k]:
			default:
				w, err := walk(v, f)
				if err != nil {
					return nil, err
				}
				m[k] = w
			}
		}
		return json.Marshal(m)
	case '[':
		var a []json.RawMessage
		if err := json.Unmarshal(t, &a); err != nil {
			return nil, fmt.Errorf("payloads: read array: %w", err)
		}
		for i, v := range a {
			w, err := walk(v, f)
			if err != nil {
				return nil, err
			}
			a[i] = w
		}
		return json.Marshal(a)
	}
	return doc, nil
}

// memo converts each field of a memo object (a memo is an object of
// payloads by name, and stays an object on the wire).
func memo(v json.RawMessage, f func(string, json.RawMessage) json.RawMessage) (json.RawMessage, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || t[0] != '{' {
		return v, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return nil, fmt.Errorf("payloads: read memo: %w", err)
	}
	for k, fv := range m {
		m[k] = f("memo."+k, fv)
	}
	return json.Marshal(m)
}
