package store_test

import (
	"testing"

	"github.com/tetherhq/tether/server/store"
)

// Goal: notification payloads carry their item count and parse back; bad
// ones are refused.
func TestNotificationPayload(t *testing.T) {
	key := store.ActivityQueueKey("default", "files@host-1")
	for _, n := range []int{0, 1, 2, 1000} {
		p := store.NotificationPayload(key, n)
		k, items, err := store.ParseNotification(p)
		want := max(n, 1)
		if err != nil || k != key || items != want {
			t.Fatalf("ParseNotification(%q) = %q, %d, %v; want %q, %d", p, k, items, err, key, want)
		}
	}
	if p := store.NotificationPayload(key, 1); p != key {
		t.Fatalf("one item: payload %q, want the bare key", p)
	}
	for _, bad := range []string{"", "x", key + "#", key + "#0", key + "#-2", key + "#two", "w|only-two"} {
		if _, _, err := store.ParseNotification(bad); err == nil {
			t.Errorf("ParseNotification(%q) accepted", bad)
		}
	}
}
