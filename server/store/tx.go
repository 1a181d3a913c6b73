package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/tetherhq/tether/db/gen"
)

// txn is one transaction in progress with the wake-ups it will announce on
// commit.
type txn struct {
	q    *gen.Queries
	keys []string
}

func (t *txn) wake(key string) {
	if !slices.Contains(t.keys, key) {
		t.keys = append(t.keys, key)
	}
}

// inTx runs fn in one transaction and announces the collected wake-ups in
// the same transaction (NOTIFY is delivered on commit, never on rollback).
func (s *Store) inTx(ctx context.Context, fn func(t *txn) error) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		t := &txn{q: gen.New(tx)}
		if err := fn(t); err != nil {
			return err
		}
		if len(t.keys) > 0 {
			if err := t.q.Notify(ctx, gen.NotifyParams{Channel: NotifyChannel, Keys: t.keys}); err != nil {
				return fmt.Errorf("notify: %w", err)
			}
		}
		return nil
	})
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

func parseToken(token string) (uuid.UUID, error) {
	u, err := uuid.Parse(token)
	if err != nil {
		return uuid.UUID{}, ErrLockLost
	}
	return u, nil
}

func noRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only values built by this package are marshalled here; they
		// always encode.
		panic(fmt.Sprintf("store: marshal: %v", err))
	}
	return b
}

func rawOrNil(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return json.RawMessage(b)
}

// jsonValue makes a payload safe for a jsonb column: nil stays SQL NULL.
func jsonValue(b json.RawMessage) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
