package storage_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/server/storage"
)

// Goal: a turn token carries its instance id and lock, any instance id
// survives the round trip (path-safe), and what is not a turn token is
// refused.
func TestTurnToken_RoundTripAndRefusals(t *testing.T) {
	lock := uuid.New()
	for _, id := range []string{"a", "order-42", "x/y:z@h+=._-", strings.Repeat("é", 100)} {
		tok := storage.TurnToken{InstanceID: id, Lock: lock}.String()
		if strings.ContainsAny(tok, "/+=%?#") {
			t.Fatalf("token %q of %q is not path-safe", tok, id)
		}
		got, ok := storage.ParseTurnToken(tok)
		if !ok || got.InstanceID != id || got.Lock != lock {
			t.Fatalf("ParseTurnToken(%q) = %+v, %v; want %q, %s", tok, got, ok, id, lock)
		}
	}
	for _, bad := range []string{"", lock.String(), lock.String() + ".", "." + "YQ", lock.String() + ".a+b",
		lock.String()[:35] + ".YQ", "not-a-uuid-not-a-uuid-not-a-uuid-123.YQ", lock.String() + "YQ"} {
		if got, ok := storage.ParseTurnToken(bad); ok {
			t.Fatalf("ParseTurnToken(%q) accepted it (%+v)", bad, got)
		}
	}
}

// Goal: an attempt token is a UUID in its 36-character form, either case,
// and round-trips; other spellings uuid.Parse would take are refused.
func TestAttemptToken_RoundTripAndRefusals(t *testing.T) {
	u := uuid.New()
	for _, s := range []string{u.String(), strings.ToUpper(u.String())} {
		got, ok := storage.ParseAttemptToken(s)
		if !ok || uuid.UUID(got) != u || got.String() != u.String() {
			t.Fatalf("ParseAttemptToken(%q) = %s, %v; want %s", s, got, ok, u)
		}
	}
	for _, bad := range []string{"", "not-a-token", strings.ReplaceAll(u.String(), "-", ""), "{" + u.String() + "}",
		"urn:uuid:" + u.String(), u.String()[:35] + "g"} {
		if got, ok := storage.ParseAttemptToken(bad); ok {
			t.Fatalf("ParseAttemptToken(%q) accepted it (%s)", bad, got)
		}
	}
}
