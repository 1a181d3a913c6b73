package storage

import (
	"encoding/base64"
	"strings"

	"github.com/google/uuid"
)

// TurnToken is a workflow turn's lock token, parsed: the instance the turn
// locks and the lock's UUID. On the wire (String) it is the lock, a dot,
// and the instance id in unpadded base64url: "<uuid>.<instance id>". The
// PostgreSQL provider finds the instance by primary key and checks the
// lock there, so the lock column needs no index, and locking and unlocking
// an instance are HOT updates (migration 00006). Like Temporal's task
// tokens it is opaque to clients. It is parsed once, at the edge (the
// handlers' binder), and crosses the seam in this form.
type TurnToken struct {
	// InstanceID is the workflow instance the turn locks.
	InstanceID string
	// Lock is the instance's lock token.
	Lock uuid.UUID
}

// String is the token's wire form.
func (t TurnToken) String() string {
	return t.Lock.String() + "." + base64.RawURLEncoding.EncodeToString([]byte(t.InstanceID))
}

// ParseTurnToken parses a turn token's wire form; ok is false when s is
// not one.
func ParseTurnToken(s string) (_ TurnToken, ok bool) {
	u, enc, found := strings.Cut(s, ".")
	if !found || len(u) != 36 || enc == "" {
		return TurnToken{}, false
	}
	lock, err := uuid.Parse(u)
	if err != nil {
		return TurnToken{}, false
	}
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(id) == 0 {
		return TurnToken{}, false
	}
	return TurnToken{InstanceID: string(id), Lock: lock}, true
}

// AttemptToken is an activity attempt's lock token, parsed: a UUID whose
// wire form (String) is the canonical 36-character one. Like TurnToken it
// is parsed once, at the edge, and crosses the seam in this form.
type AttemptToken uuid.UUID

// String is the token's wire form.
func (t AttemptToken) String() string { return uuid.UUID(t).String() }

// ParseAttemptToken parses an attempt token's wire form, a UUID of 36
// characters (hex digits of either case and four dashes); ok is false when
// s is not one.
func ParseAttemptToken(s string) (_ AttemptToken, ok bool) {
	if len(s) != 36 {
		return AttemptToken{}, false
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return AttemptToken{}, false
	}
	return AttemptToken(u), true
}
