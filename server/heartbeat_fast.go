package server

import (
	"io"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// The worker heartbeat is the server's hottest route: every worker sends
// one a second. Its common case — a well-formed body of plain strings that
// passes validation — is decoded, checked and answered here without
// reflection; anything else falls back to the general path (binder.body,
// go-playground/validator, c.JSON), which alone decides what a bad request
// is told. The fast path only ever accepts: it says "not mine" whenever it
// is unsure, so that it cannot answer differently from the general path.
// heartbeat_fast_test.go runs both on the same inputs.

// heartbeatBufs holds the buffers a heartbeat reads its body into and
// writes its answer from (one per Server: no package state).
type heartbeatBufs struct{ pool sync.Pool }

// heartbeatBufMax is the largest buffer put back in the pool: a rare large
// body must not pin its memory for good.
const heartbeatBufMax = 64 << 10

func (p *heartbeatBufs) get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 1024)
	return &b
}

func (p *heartbeatBufs) put(b *[]byte) {
	if cap(*b) > heartbeatBufMax {
		return
	}
	*b = (*b)[:0]
	p.pool.Put(b)
}

// heartbeatFast reads the body into buf and binds a heartbeat the fast way,
// checking all that heartbeatRequest checks. It reports false when it
// cannot tell that the request is valid; the body is then left for
// heartbeatRequest to read again, as it was read (error included).
func (s *Server) heartbeatFast(c echo.Context, buf *[]byte, req *api.WorkerHeartbeatRequest) (ns string, wait time.Duration, ok bool) {
	if s.slowHeartbeats {
		return "", 0, false
	}
	r := c.Request()
	data, err := readBody((*buf)[:0], r.Body)
	*buf = data
	if err != nil {
		r.Body = &replayReader{data: data, err: err}
		return "", 0, false
	}
	// A name that validName accepts holds no '%': it is its own
	// unescaping, and passes the validator's "required,name".
	ns = c.Param("namespace")
	ok = validName(ns) && decodeHeartbeat(data, req) && heartbeatValid(req)
	if ok {
		set := s.store.Settings()
		minLease, maxLease := set.MinLease, set.MaxLease
		lease := req.LeaseDuration.D()
		ok = lease != 0 && lease >= minLease && lease <= maxLease
		if ok && req.Wait != nil {
			wait = req.Wait.D()
			ok = wait >= 0 && wait <= s.cfg.MaxWait && wait <= lease/2
		}
	}
	if !ok {
		r.Body = &replayReader{data: data}
		return "", 0, false
	}
	return ns, wait, true
}

// readBody appends what r yields to b until EOF, as io.ReadAll does: the
// data read and the first error other than io.EOF.
func readBody(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// replayReader yields data and then err (nil: io.EOF): a body already read,
// handed to the general path as it was read.
type replayReader struct {
	data []byte
	err  error
}

func (r *replayReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

func (r *replayReader) Close() error { return nil }

// decodeHeartbeat decodes a heartbeat body into req (zero on entry) and
// reports whether it could. It handles a subset of JSON on which it
// agrees with encoding/json's Decoder (DisallowUnknownFields, one value,
// nothing after it), as binder.body runs it:
//
//   - one object, each member at most once, named exactly by its field's
//     JSON name (no case folding, no escapes);
//   - strings without escapes or control characters, in valid UTF-8, so
//     that their bytes are their value;
//   - durations as such strings, booleans as true or false, string lists
//     as arrays of such strings, metadata as an object of them;
//   - no null, no numbers.
//
// Anything else — including every malformed body — returns false, and the
// caller decodes the body with binder.body instead. On false, req may hold
// part of the body: the caller must zero it.
func decodeHeartbeat(data []byte, req *api.WorkerHeartbeatRequest) bool {
	p := jsonSubset{data: data}
	p.space()
	var seen uint16 // members already decoded, by their bit
	members := p.seq('{', '}', func() bool {
		key, ok := p.key()
		if !ok {
			return false
		}
		var bit uint16
		switch string(key) {
		case "worker_id":
			bit, ok = 1<<0, p.strInto(&req.WorkerID)
		case "identity":
			bit, ok = 1<<1, p.strInto(&req.Identity)
		case "host":
			bit, ok = 1<<2, p.strInto(&req.Host)
		case "task_queues":
			bit, ok = 1<<3, p.strList(&req.TaskQueues)
		case "host_task_queue":
			bit, ok = 1<<4, p.strInto(&req.HostTaskQueue)
		case "build_id":
			bit, ok = 1<<5, p.strInto(&req.BuildID)
		case "metadata":
			bit, ok = 1<<6, p.strMap(&req.Metadata)
		case "lease_duration":
			bit, ok = 1<<7, p.duration((*time.Duration)(&req.LeaseDuration))
		case "bound_activities":
			bit, ok = 1<<8, p.strList(&req.BoundActivities)
		case "unbound_activities":
			bit, ok = 1<<9, p.strList(&req.UnboundActivities)
		case "wait":
			var d time.Duration
			bit, ok = 1<<10, p.duration(&d)
			req.Wait = (*api.Duration)(&d)
		case "known_cancels":
			bit, ok = 1<<11, p.strList(&req.KnownCancels)
		case "shutdown":
			bit, ok = 1<<12, p.boolean(&req.Shutdown)
		default:
			return false // unknown, or a name encoding/json would fold
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	p.space()
	return members && p.i == len(data)
}

// jsonSubset reads the JSON subset decodeHeartbeat accepts. Each method
// reports false on anything outside it.
type jsonSubset struct {
	data []byte
	i    int
}

// space skips JSON whitespace.
func (p *jsonSubset) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c if it comes next.
func (p *jsonSubset) byte(c byte) bool {
	if p.i < len(p.data) && p.data[p.i] == c {
		p.i++
		return true
	}
	return false
}

// str reads a string without escapes or control characters, in valid
// UTF-8 — one whose value is its bytes — and returns those bytes.
func (p *jsonSubset) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.data); p.i++ {
		switch c := p.data[p.i]; {
		case c == '"':
			s := p.data[start:p.i]
			p.i++
			return s, ascii || utf8.Valid(s)
		case c == '\\' || c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// seq reads an array or object: open, items separated by commas, end,
// with whitespace between; item reads one item at its first byte.
func (p *jsonSubset) seq(open, end byte, item func() bool) bool {
	if !p.byte(open) {
		return false
	}
	p.space()
	if p.byte(end) {
		return true
	}
	for {
		if !item() {
			return false
		}
		p.space()
		if p.byte(end) {
			return true
		}
		if !p.byte(',') {
			return false
		}
		p.space()
	}
}

// key reads an object member's name and the colon after it.
func (p *jsonSubset) key() ([]byte, bool) {
	k, ok := p.str()
	if !ok {
		return nil, false
	}
	p.space()
	if !p.byte(':') {
		return nil, false
	}
	p.space()
	return k, true
}

func (p *jsonSubset) strInto(dst *string) bool {
	s, ok := p.str()
	*dst = string(s)
	return ok
}

// strList reads an array of strings; [] is an empty list, not nil, as
// encoding/json makes it.
func (p *jsonSubset) strList(dst *[]string) bool {
	list := []string{}
	if !p.seq('[', ']', func() bool {
		s, ok := p.str()
		list = append(list, string(s))
		return ok
	}) {
		return false
	}
	*dst = list
	return true
}

// strMap reads an object of strings; {} is an empty map, not nil. A key
// given twice keeps its last value, as with encoding/json.
func (p *jsonSubset) strMap(dst *map[string]string) bool {
	m := map[string]string{}
	if !p.seq('{', '}', func() bool {
		k, ok := p.key()
		if !ok {
			return false
		}
		v, ok := p.str()
		m[string(k)] = string(v)
		return ok
	}) {
		return false
	}
	*dst = m
	return true
}

// duration reads a Go duration string, as api.Duration's UnmarshalJSON
// does with a string.
func (p *jsonSubset) duration(dst *time.Duration) bool {
	s, ok := p.str()
	if !ok {
		return false
	}
	d, err := time.ParseDuration(string(s))
	*dst = d
	return err == nil
}

func (p *jsonSubset) boolean(dst *bool) bool {
	rest := p.data[p.i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		p.i += 4
		*dst = true
		return true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		p.i += 5
		*dst = false
		return true
	}
	return false
}

// Limits of the validate tags of api.WorkerHeartbeatRequest, checked by
// heartbeatValid (TestHeartbeatValidTags keeps them in step with the tags).
const (
	hbMaxText       = 256   // identity, host, build_id: max=256 (runes)
	hbMaxQueues     = 16    // task_queues: max=16,dive,name
	hbMaxMetadata   = 64    // metadata: max=64
	hbMaxActivities = 10000 // bound_activities, unbound_activities, known_cancels: max=10000
)

// heartbeatValid reports whether go-playground/validator finds nothing
// wrong with r: it checks the same tags by hand. When it says false, the
// caller runs the validator, which names the problems.
func heartbeatValid(r *api.WorkerHeartbeatRequest) bool {
	if !validName(r.WorkerID) || // required,name
		!textWithin(r.Identity) || !textWithin(r.Host) || !textWithin(r.BuildID) ||
		len(r.TaskQueues) > hbMaxQueues ||
		r.HostTaskQueue != "" && !validName(r.HostTaskQueue) || // omitempty,name
		len(r.Metadata) > hbMaxMetadata ||
		len(r.BoundActivities) > hbMaxActivities ||
		len(r.UnboundActivities) > hbMaxActivities ||
		len(r.KnownCancels) > hbMaxActivities {
		return false
	}
	for _, q := range r.TaskQueues {
		if !validName(q) {
			return false
		}
	}
	return true
}

// textWithin is the validator's max=256 on a string: at most that many
// runes (a string of at most 256 bytes has no more).
func textWithin(s string) bool {
	return len(s) <= hbMaxText || utf8.RuneCountInString(s) <= hbMaxText
}

// writeHeartbeatAnswer answers a heartbeat with the worker's state. The
// common answer (no cancellation, nothing lost) is encoded by hand into
// buf, byte for byte what c.JSON sends; any other, and any answer c.JSON
// would indent (?pretty, Echo's debug mode) or another serializer would
// encode, is left to c.JSON.
func (s *Server) writeHeartbeatAnswer(c echo.Context, buf *[]byte, ns, workerID string, r storage.HeartbeatResult) error {
	resp := heartbeatAnswer(r)
	if !s.answersByHand(c) {
		return c.JSON(http.StatusOK, resp)
	}
	body, ok := appendHeartbeatAnswer((*buf)[:0], &resp)
	*buf = body
	if !ok {
		return c.JSON(http.StatusOK, resp)
	}
	w := c.Response()
	if h := w.Header(); h.Get(echo.HeaderContentType) == "" { // as c.JSON
		h.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	}
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// answersByHand reports whether c.JSON would send its answer unindented
// with Echo's own serializer (encoding/json's Encoder), as
// appendHeartbeatAnswer writes it.
func (s *Server) answersByHand(c echo.Context) bool {
	e := c.Echo()
	_, std := e.JSONSerializer.(*echo.DefaultJSONSerializer)
	return std && !e.Debug && !s.slowHeartbeats && c.Request().URL.RawQuery == ""
}

// appendHeartbeatAnswer appends r as encoding/json's Encoder writes it (then
// a newline), when r is the common answer: a state of plain characters, no
// cancellation (an empty list), nothing lost, and a time that encodes. It
// reports false for any other answer.
func appendHeartbeatAnswer(b []byte, r *api.WorkerHeartbeatResponse) ([]byte, bool) {
	if r.Cancels == nil || len(r.Cancels) > 0 || len(r.Lost) > 0 {
		return b, false
	}
	for i := 0; i < len(r.State); i++ {
		// Letters, digits and _ - . only: no character that encoding/json
		// would escape.
		switch c := r.State[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-', c == '.':
		default:
			return b, false
		}
	}
	b = append(b, `{"state":"`...)
	b = append(b, r.State...)
	b = append(b, `","lease_expires_at":"`...)
	// What time.Time's MarshalJSON writes between its quotes, and fails on.
	b, err := r.LeaseExpiresAt.AppendText(b)
	if err != nil {
		return b, false
	}
	return append(b, `","cancels":[]}`+"\n"...), true
}
