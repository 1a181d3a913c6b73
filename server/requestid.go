package server

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
)

// requestIDs hands out the X-Request-ID of requests that came without one:
// a random prefix drawn once per server and a counter, unique across
// replicas and restarts without drawing randomness per request.
type requestIDs struct {
	prefix string
	n      atomic.Uint64
}

func newRequestIDs() *requestIDs {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return &requestIDs{prefix: hex.EncodeToString(b[:]) + "-"}
}

func (r *requestIDs) next() string {
	return r.prefix + strconv.FormatUint(r.n.Add(1), 36)
}
