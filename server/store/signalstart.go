package store

import (
	"context"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// signalWithStart signals instanceID, starting it first when it is
// not running (unknown, or finished: then as its next execution), in one
// transaction. A started execution's first turn sees WorkflowStarted and
// the signal together, so the signal is in its channel when the workflow
// code's first line runs. A start that races another start of the same id
// signals the execution that won.
func (s *Store) signalWithStart(ctx context.Context, p *storage.StartWorkflowParams) (storage.StartWorkflowResult, error) {
	ns, instanceID, req := p.Namespace, p.Request.InstanceID, p.Request
	var resp storage.StartWorkflowResult
	err := s.inTx(ctx, func(t *txn) error {
		resp = storage.StartWorkflowResult{StartWorkflowResponse: api.StartWorkflowResponse{InstanceID: instanceID}}
		signal := eventMessage(instanceID, nil, api.Event{Kind: api.EventSignalReceived,
			SignalName: p.Signal.Name, Input: p.Signal.Input, Header: p.Signal.Header}, 0)
		// Two rounds at most: a start refused because another one committed
		// meanwhile finds the instance running at the second signal.
		if err := admitMessage(ctx, t, ns, instanceID, len(signal.Payload)); err != nil {
			return err
		}
		for range 2 {
			queue, err := t.q.EnqueueSignal(ctx, gen.EnqueueSignalParams{Payload: signal.Payload, PayloadBytes: payloadBytes(signal.Payload), Namespace: ns, InstanceID: instanceID})
			if err == nil {
				t.wakeTurns(ns, queue.TaskQueue, queue.Flow)
				i, err := t.q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID})
				if err != nil {
					return fmt.Errorf("signal with start: %w", err)
				}
				resp.ExecutionID, resp.RunID, resp.Status = i.ExecutionID, i.RunID.String(), i.Status
				return nil
			}
			if !noRows(err) {
				return fmt.Errorf("signal with start: signal: %w", err)
			}
			attrs, err := s.normalizeSearchAttributes(ctx, t.q, ns, req.SearchAttributes, "search_attributes", false)
			if err != nil {
				return err
			}
			start := newStartRow(instanceID, req.WorkflowType, req.TaskQueue, req.Input, ms(req.ExecutionTimeout.D()), attrs, req.Memo, req.Header)
			start.withPriority(req.Priority)
			started, err := startInstances(ctx, t, ns, []startRow{start})
			if err != nil {
				return fmt.Errorf("signal with start: %w", err)
			}
			row, ok := started[instanceID]
			if !ok {
				continue // started meanwhile: signal it
			}
			// The signal follows the start message: the first turn takes both.
			if err := enqueueTo(ctx, t, ns, instanceID, req.TaskQueue, priorityJSON(req.Priority), []outMessage{signal}); err != nil {
				return fmt.Errorf("signal with start: %w", err)
			}
			if req.Concurrency != nil {
				if err := s.admitConcurrency(ctx, t, ns, instanceID, req.Concurrency); err != nil {
					return err
				}
			}
			resp.ExecutionID, resp.RunID, resp.Status, resp.Started = row.ExecutionID, row.RunID.String(), row.Status, true
			t.observe(observation{kind: observeStarted, ns: ns, typ: req.WorkflowType})
			return nil
		}
		if exists, err := t.q.NamespaceExists(ctx, ns); err == nil && !exists {
			return fmt.Errorf("namespace %s: %w", ns, storage.ErrNotFound)
		}
		return fmt.Errorf("signal with start %s: the instance neither runs nor starts", instanceID)
	})
	return resp, err
}
