package store

import (
	"encoding/base64"
	"strings"

	"github.com/google/uuid"
)

// A turn's token, as workers and the API see it, is the instance lock's
// UUID, a dot, and the instance id in unpadded base64url:
// "<uuid>.<instance id>". The ack finds the instance by primary key and
// checks the lock there, so the lock column needs no index, and locking
// and unlocking an instance are HOT updates (migration 00006). Like
// Temporal's task tokens it is opaque to clients.

// TurnToken is the token of instanceID's turn locked with lock.
func TurnToken(instanceID string, lock uuid.UUID) string {
	return lock.String() + "." + base64.RawURLEncoding.EncodeToString([]byte(instanceID))
}

// ParseTurnToken splits a turn token into its instance id and lock; ok is
// false when token is not one.
func ParseTurnToken(token string) (instanceID string, lock uuid.UUID, ok bool) {
	u, enc, found := strings.Cut(token, ".")
	if !found || len(u) != 36 || enc == "" {
		return "", uuid.UUID{}, false
	}
	lock, err := uuid.Parse(u)
	if err != nil {
		return "", uuid.UUID{}, false
	}
	id, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(id) == 0 {
		return "", uuid.UUID{}, false
	}
	return string(id), lock, true
}
