package testsuite

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Goal: a throttle sends the first heartbeat at once, the last of those
// recorded within an interval at its end, and nothing after stop.
func TestHeartbeatThrottle(t *testing.T) {
	var mu sync.Mutex
	var sent []string
	th := newThrottle(50*time.Millisecond, func(raw json.RawMessage) {
		mu.Lock()
		sent = append(sent, string(raw))
		mu.Unlock()
	})
	got := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sent...)
	}
	th.record(json.RawMessage(`1`))
	th.record(json.RawMessage(`2`))
	th.record(json.RawMessage(`3`))
	require.Equal(t, []string{"1"}, got())
	require.Eventually(t, func() bool { return len(got()) == 2 }, 5*time.Second, 5*time.Millisecond)
	require.Equal(t, []string{"1", "3"}, got())
	th.record(json.RawMessage(`4`))
	th.stop()
	th.record(json.RawMessage(`5`))
	require.Equal(t, []string{"1", "3"}, got(), "kept and later heartbeats are dropped after stop")

	require.Equal(t, 30*time.Second, heartbeatThrottle(0))
	require.Equal(t, 8*time.Second, heartbeatThrottle(10*time.Second))
	require.Equal(t, 60*time.Second, heartbeatThrottle(10*time.Minute))
}
