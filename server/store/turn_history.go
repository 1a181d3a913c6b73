package store

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
)

// defaultTurnHistoryEvents is Options.TurnHistoryEvents's default: the
// server's default history page size.
const defaultTurnHistoryEvents = 1000

// turnHistoryEvents is the most history events one turn's answer carries.
func (o Options) turnHistoryEvents() int32 {
	if o.TurnHistoryEvents <= 0 {
		return defaultTurnHistoryEvents
	}
	return int32(min(o.TurnHistoryEvents, 1<<30))
}

// turnHistory reads the head of an execution's history for a turn: at most
// Options.TurnHistoryEvents events, and, when more follow, the page token
// (as HistoryPage issues) of the rest, which the worker reads with GET
// /workflows/{id}/history a page at a time.
func (s *Store) turnHistory(ctx context.Context, q *gen.Queries, ns, id string, exec int64) ([]api.Event, string, error) {
	limit := s.opts.turnHistoryEvents()
	rows, err := q.GetHistoryPage(ctx, gen.GetHistoryPageParams{Namespace: ns, InstanceID: id,
		ExecutionID: exec, AfterEventID: 0, PageSize: limit + 1})
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	evs := make([]api.Event, 0, min(len(rows), int(limit)))
	next := ""
	for i, r := range rows {
		if i == int(limit) {
			next = base64.RawURLEncoding.EncodeToString(mustJSON(historyToken{ExecutionID: exec, After: evs[len(evs)-1].EventID}))
			break
		}
		ev, err := toEvent(gen.GetHistoryRow(r))
		if err != nil {
			return nil, "", err
		}
		evs = append(evs, ev)
	}
	return evs, next, nil
}
