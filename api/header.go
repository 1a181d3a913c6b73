package api

import "encoding/json"

// Header is the header of a call: payloads by key (each the JSON form of
// the SDK's common.Payload, {"metadata": {…}, "data": "…"}, or any JSON
// value), written and read by the SDK's interceptors and context
// propagators. The server stores it with the input it came with and hands
// it on unread.
type Header map[string]json.RawMessage

// Bounds of a Header (docs/security.md).
const (
	// MaxHeaderFields is the most keys a header may have.
	MaxHeaderFields = 64
	// MaxHeaderBytes bounds a header's keys and values together.
	MaxHeaderBytes = 16 << 10
)

// HeaderProblem returns why h is out of bounds, or "" when it is not.
func HeaderProblem(h Header) string {
	if len(h) > MaxHeaderFields {
		return "at most 64 keys"
	}
	n := 0
	for k, v := range h {
		if k == "" {
			return "keys must not be empty"
		}
		n += len(k) + len(v)
	}
	if n > MaxHeaderBytes {
		return "at most 16 KiB of keys and values"
	}
	return ""
}
