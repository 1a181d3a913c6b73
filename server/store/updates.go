package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// UpdateKey names the wake-up of the requests waiting on an update.
func UpdateKey(namespace, instanceID, updateID string) string {
	return "u|" + namespace + "|" + instanceID + "|" + updateID
}

// RequestUpdate admits an update to a running instance: a new update id
// is recorded and the update enqueued as a WorkflowUpdateAccepted message,
// in one transaction; a known one is left alone (the caller waits on it
// with GetUpdate). storage.ErrNotFound: no such instance; storage.ErrNotRunning: the
// instance has finished (for a new id).
func (s *Store) RequestUpdate(ctx context.Context, p *storage.RequestUpdateParams) error {
	ns, instanceID, updateID, name, input, header := p.Namespace, p.InstanceID, p.UpdateID, p.Name, p.Input, p.Header
	return s.inTx(ctx, func(t *txn) error {
		_, err := t.q.InsertUpdate(ctx, gen.InsertUpdateParams{Namespace: ns, InstanceID: instanceID, UpdateID: updateID, UpdateName: name})
		if noRows(err) {
			return nil // known: the same update
		}
		if err != nil {
			return fmt.Errorf("request update: %w", err)
		}
		msg := eventMessage(instanceID, nil, api.Event{Kind: api.EventWorkflowUpdateAccepted, UpdateID: updateID, UpdateName: name, Input: input, Header: header}, 0)
		if err := admitMessage(ctx, t, ns, instanceID, len(msg.Payload)); err != nil {
			return err
		}
		queue, err := t.q.EnqueueUpdate(ctx, gen.EnqueueUpdateParams{Payload: msg.Payload, PayloadBytes: payloadBytes(msg.Payload), Namespace: ns, InstanceID: instanceID})
		if err == nil {
			t.wakeTurns(ns, queue.TaskQueue, queue.Flow)
			return nil
		}
		if !noRows(err) {
			return fmt.Errorf("enqueue update: %w", err)
		}
		if _, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID}); noRows(err) {
			return storage.ErrNotFound
		} else if err != nil {
			return fmt.Errorf("request update: %w", err)
		}
		return storage.ErrNotRunning
	})
}

// GetUpdate reads an update's stage. storage.ErrNotFound: no such update.
func (s *Store) GetUpdate(ctx context.Context, p *storage.GetUpdateParams) (storage.UpdateState, error) {
	ns, instanceID, updateID := p.Namespace, p.InstanceID, p.UpdateID
	r, err := gen.New(s.pool).GetUpdate(ctx, gen.GetUpdateParams{Namespace: ns, InstanceID: instanceID, UpdateID: updateID})
	if noRows(err) {
		return storage.UpdateState{}, storage.ErrNotFound
	}
	if err != nil {
		return storage.UpdateState{}, fmt.Errorf("get update: %w", err)
	}
	st := storage.UpdateState{Stage: r.Stage, Result: r.Result, InstanceStatus: r.Status}
	if len(r.Error) > 0 {
		st.Error = new(api.Error)
		if err := json.Unmarshal(r.Error, st.Error); err != nil {
			return storage.UpdateState{}, fmt.Errorf("get update: %w", err)
		}
	}
	return st, nil
}

// updateStageRow is one row of SetUpdateStages' outcomes.
type updateStageRow struct {
	InstanceID string          `json:"instance_id"`
	UpdateID   string          `json:"update_id"`
	Stage      string          `json:"stage"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *api.Error      `json:"error,omitempty"`
}

// writeUpdateStages records the stages a turn's updates reached and wakes
// their waiting requests at commit.
func writeUpdateStages(ctx context.Context, t *txn, ns, instanceID string, ups []engine.UpdateOutcome) error {
	if len(ups) == 0 {
		return errors.New("write update stages: none")
	}
	rows := make([]updateStageRow, 0, len(ups))
	for _, u := range ups {
		rows = append(rows, updateStageRow{InstanceID: instanceID, UpdateID: u.UpdateID, Stage: u.Stage, Result: u.Result, Error: u.Error})
		t.wake(UpdateKey(ns, instanceID, u.UpdateID))
	}
	if err := t.w.SetUpdateStages(ctx, gen.SetUpdateStagesParams{Namespace: ns, Outcomes: mustJSON(rows)}); err != nil {
		return fmt.Errorf("write update stages: %w", err)
	}
	return nil
}
