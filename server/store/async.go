package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// markActivityPending records that the attempt's activity returned
// ErrResultPending: it stays held under its lock token, which completes,
// fails or heartbeats it later from any process, but leaves its worker (no
// renewal needed, no loss with the worker); its timeouts and cancel flag
// still apply, and its lock lasts until a minute past its StartToClose or
// ScheduleToClose deadline (for ever without either). storage.ErrLockLost when
// the token holds nothing.
func (s *Store) markActivityPending(ctx context.Context, ns string, token storage.AttemptToken) error {
	tok := uuid.UUID(token)
	_, err := gen.New(s.pool).MarkAttemptPending(ctx, gen.MarkAttemptPendingParams{LockToken: &tok, Namespace: ns})
	if noRows(err) {
		return storage.ErrLockLost
	}
	if err != nil {
		return fmt.Errorf("mark activity pending: %w", err)
	}
	return nil
}

// ActivityToken returns the lock token of the held attempt of an activity,
// by workflow id, execution (0: the current one) and activity id, so that
// it can be completed, failed or heartbeated by id. storage.ErrNotFound when no
// attempt of it is held (unknown, finished, or waiting for a worker).
func (s *Store) ActivityToken(ctx context.Context, p *storage.ActivityTokenParams) (storage.AttemptToken, error) {
	ns, instanceID, executionID, activityID := p.Namespace, p.InstanceID, p.ExecutionID, p.ActivityID
	tok, err := gen.New(s.pool).HeldAttemptToken(ctx, gen.HeldAttemptTokenParams{Namespace: ns, InstanceID: instanceID,
		ActivityID: activityID, ExecutionID: executionID})
	if noRows(err) {
		return storage.AttemptToken{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.AttemptToken{}, fmt.Errorf("activity token: %w", err)
	}
	return storage.AttemptToken(tok), nil
}
