package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
)

// historyToken is the opaque position of a history page: the execution
// and the last event id already returned.
type historyToken struct {
	ExecutionID int64 `json:"e"`
	After       int64 `json:"a"`
}

// historyPage returns up to pageSize events of an execution (executionID
// 0 = the current one), from the start or from pageToken, a
// next_page_token of an earlier page. NextPageToken is set when more
// events may follow. A page token of another execution, or one this
// server did not issue, is storage.ErrBadPageToken.
func (s *Store) historyPage(ctx context.Context, ns, instanceID string, executionID int64, pageToken string, pageSize int32) (api.HistoryResponse, error) {
	var tok historyToken
	if pageToken != "" {
		b, err := base64.RawURLEncoding.DecodeString(pageToken)
		if err != nil || json.Unmarshal(b, &tok) != nil || tok.ExecutionID <= 0 || tok.After < 0 ||
			executionID != 0 && executionID != tok.ExecutionID {
			return api.HistoryResponse{}, storage.ErrBadPageToken
		}
		executionID = tok.ExecutionID
	}
	q := gen.New(s.pool)
	i, err := q.GetInstance(ctx, gen.GetInstanceParams{Namespace: ns, InstanceID: instanceID})
	if noRows(err) {
		return api.HistoryResponse{}, storage.ErrNotFound
	}
	if err != nil {
		return api.HistoryResponse{}, fmt.Errorf("history: %w", err)
	}
	if executionID == 0 {
		executionID = i.ExecutionID
	}
	if executionID < 0 || executionID > i.ExecutionID {
		return api.HistoryResponse{}, fmt.Errorf("execution %d: %w", executionID, storage.ErrNotFound)
	}
	rows, err := q.GetHistoryPage(ctx, gen.GetHistoryPageParams{Namespace: ns, InstanceID: instanceID,
		ExecutionID: executionID, AfterEventID: tok.After, PageSize: pageSize + 1})
	if err != nil {
		return api.HistoryResponse{}, fmt.Errorf("history: %w", err)
	}
	out := api.HistoryResponse{ExecutionID: executionID, Events: make([]api.Event, 0, min(len(rows), int(pageSize)))}
	for n, r := range rows {
		if n == int(pageSize) {
			last := out.Events[len(out.Events)-1].EventID
			out.NextPageToken = base64.RawURLEncoding.EncodeToString(mustJSON(historyToken{ExecutionID: executionID, After: last}))
			break
		}
		ev, err := toEvent(gen.GetHistoryRow(r))
		if err != nil {
			return api.HistoryResponse{}, err
		}
		out.Events = append(out.Events, ev)
	}
	switch {
	case executionID == i.ExecutionID:
		out.RunID = i.RunID.String()
	case len(out.Events) > 0 && out.Events[0].Kind == api.EventWorkflowStarted:
		out.RunID = out.Events[0].RunID
	default:
		run, err := q.RunIDOfExecution(ctx, gen.RunIDOfExecutionParams{Namespace: ns, InstanceID: instanceID, ExecutionID: executionID})
		if err != nil && !noRows(err) {
			return api.HistoryResponse{}, fmt.Errorf("history: %w", err)
		}
		out.RunID = run
	}
	return out, nil
}

// ExecutionOfRunID returns the execution of instanceID whose run id is
// runID: the current one, or a past one whose WorkflowStarted event
// recorded it. storage.ErrNotFound when none has.
func (s *Store) ExecutionOfRunID(ctx context.Context, p *storage.ExecutionOfRunIDParams) (int64, error) {
	ns, instanceID, runID := p.Namespace, p.InstanceID, p.RunID
	exec, err := gen.New(s.pool).ExecutionOfRunID(ctx, gen.ExecutionOfRunIDParams{Namespace: ns, InstanceID: instanceID, RunID: runID})
	if noRows(err) {
		return 0, fmt.Errorf("run %s of %s: %w", runID, instanceID, storage.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("execution of run id: %w", err)
	}
	return exec, nil
}
