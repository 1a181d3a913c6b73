package store

import (
	"context"
	"fmt"

	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// admitMessage checks, in t, that one more message of size bytes (a
// signal or an update) keeps the instance within its pending-message
// bounds (Options.PendingMessages, PendingMessageBytes), and holds the
// instance's message lock until t ends so that concurrent requests
// cannot both pass the last free place. Past a bound: *storage.LimitError.
// An unknown or finished instance passes (the enqueue refuses it).
func admitMessage(ctx context.Context, t *txn, ns, instanceID string, bytes int) error {
	maxN, maxB := t.opts.PendingMessages, t.opts.PendingMessageBytes
	if maxN < 0 && maxB < 0 {
		return nil
	}
	if err := t.w.LockInstanceMessages(ctx, gen.LockInstanceMessagesParams{Namespace: ns, InstanceID: instanceID}); err != nil {
		return fmt.Errorf("lock messages: %w", err)
	}
	load, err := t.q.PendingMessageLoad(ctx, gen.PendingMessageLoadParams{Namespace: ns, InstanceID: instanceID})
	if err != nil {
		return fmt.Errorf("pending messages: %w", err)
	}
	if maxN >= 0 && load.Messages+1 > int64(maxN) {
		return &storage.LimitError{Limit: storage.LimitPendingMessages, Max: int64(maxN), Message: fmt.Sprintf(
			"workflow %s has %d signals and updates waiting for its worker; no more until its turns take them", instanceID, load.Messages)}
	}
	if maxB >= 0 && load.Bytes+int64(bytes) > maxB {
		return &storage.LimitError{Limit: storage.LimitPendingMessageBytes, Max: maxB, Message: fmt.Sprintf(
			"workflow %s has %d bytes of signals and updates waiting for its worker; %d more would pass the bound", instanceID, load.Bytes, bytes)}
	}
	return nil
}

// payloadBytes is a message's size as recorded in payload_bytes, capped
// to what the column holds.
func payloadBytes(p []byte) int32 {
	return int32(min(len(p), 1<<31-1))
}
