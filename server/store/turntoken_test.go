package store_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/server/store"
)

// Goal: a turn token carries its instance id and lock, any instance id
// survives the round trip (path-safe), and what is not a turn token is
// refused.
func TestTurnToken_RoundTripAndRefusals(t *testing.T) {
	lock := uuid.New()
	for _, id := range []string{"a", "order-42", "x/y:z@h+=._-", strings.Repeat("é", 100)} {
		tok := store.TurnToken(id, lock)
		if strings.ContainsAny(tok, "/+=%?#") {
			t.Fatalf("token %q of %q is not path-safe", tok, id)
		}
		gotID, gotLock, ok := store.ParseTurnToken(tok)
		if !ok || gotID != id || gotLock != lock {
			t.Fatalf("ParseTurnToken(%q) = %q, %s, %v; want %q, %s", tok, gotID, gotLock, ok, id, lock)
		}
	}
	for _, bad := range []string{"", lock.String(), lock.String() + ".", "." + "YQ", lock.String() + ".a+b",
		lock.String()[:35] + ".YQ", "not-a-uuid-not-a-uuid-not-a-uuid-123.YQ", lock.String() + "YQ"} {
		if id, _, ok := store.ParseTurnToken(bad); ok {
			t.Fatalf("ParseTurnToken(%q) accepted it (instance %q)", bad, id)
		}
	}
}
