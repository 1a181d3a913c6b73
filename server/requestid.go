package server

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync"
	"sync/atomic"
)

// requestIDs hands out the X-Request-ID of requests that came without one:
// a random prefix drawn once per server and a counter, unique across
// replicas and restarts without drawing randomness per request.
type requestIDs struct {
	once   sync.Once
	prefix string
	n      atomic.Uint64
}

func (r *requestIDs) next() string {
	r.once.Do(func() {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		r.prefix = hex.EncodeToString(b[:]) + "-"
	})
	return r.prefix + strconv.FormatUint(r.n.Add(1), 36)
}
