package edge

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"

	"github.com/labstack/echo/v4"
)

// RequestIDs hands out the X-Request-ID of requests that came without one:
// a random prefix drawn once per server and a counter, unique across
// replicas and restarts without drawing randomness per request.
type RequestIDs struct {
	prefix string
	n      atomic.Uint64
}

// NewRequestIDs returns a generator of request ids with a prefix of its
// own.
func NewRequestIDs() *RequestIDs {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return &RequestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

// Next returns a new request id.
func (r *RequestIDs) Next() string {
	return r.prefix + strconv.FormatUint(r.n.Add(1), 36)
}

// RequestID returns the request's id, set by the RequestID middleware.
func RequestID(c echo.Context) string {
	return c.Response().Header().Get(echo.HeaderXRequestID)
}
