package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/db/gen"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/visibility"
)

// registerSearchAttribute registers a search attribute of ns
// (storage.ErrSearchAttributeExists; an storage.InvalidError naming "name" when the
// namespace has api.MaxSearchAttributesPerNamespace already). The count and
// the insert run in one transaction that holds the namespace's row.
func (s *Store) registerSearchAttribute(ctx context.Context, ns, name, typ string) (api.SearchAttribute, error) {
	var out api.SearchAttribute
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		q := gen.New(tx)
		if _, err := q.LockNamespace(ctx, ns); err != nil {
			if noRows(err) {
				return storage.ErrNotFound
			}
			return fmt.Errorf("lock namespace: %w", err)
		}
		n, err := q.CountSearchAttributes(ctx, ns)
		if err != nil {
			return fmt.Errorf("count search attributes: %w", err)
		}
		if n >= api.MaxSearchAttributesPerNamespace {
			return &storage.InvalidError{Field: "name", Message: fmt.Sprintf("the namespace has %d search attributes, the most it may have", n)}
		}
		r, err := q.CreateSearchAttribute(ctx, gen.CreateSearchAttributeParams{Namespace: ns, Name: name, Type: typ})
		if noRows(err) {
			return storage.ErrSearchAttributeExists
		}
		if err != nil {
			return fmt.Errorf("create search attribute: %w", err)
		}
		out = api.SearchAttribute{Name: r.Name, Type: r.Type, CreatedAt: r.CreatedAt}
		return nil
	})
	return out, err
}

// ListSearchAttributes lists the search attributes of ns, by name.
func (s *Store) ListSearchAttributes(ctx context.Context, ns string) ([]api.SearchAttribute, error) {
	rows, err := gen.New(s.pool).ListSearchAttributes(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("list search attributes: %w", err)
	}
	out := make([]api.SearchAttribute, 0, len(rows))
	for _, r := range rows {
		out = append(out, api.SearchAttribute{Name: r.Name, Type: r.Type, CreatedAt: r.CreatedAt})
	}
	return out, nil
}

// deleteSearchAttribute unregisters a search attribute (storage.ErrNotFound). The
// values workflows hold stay in their rows.
func (s *Store) deleteSearchAttribute(ctx context.Context, ns, name string) error {
	n, err := gen.New(s.pool).DeleteSearchAttribute(ctx, gen.DeleteSearchAttributeParams{Namespace: ns, Name: name})
	if err != nil {
		return fmt.Errorf("delete search attribute: %w", err)
	}
	if n == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// searchAttributeTypes maps the registered attributes of ns to their types.
func searchAttributeTypes(ctx context.Context, q *gen.Queries, ns string) (map[string]string, error) {
	rows, err := q.ListSearchAttributes(ctx, ns)
	if err != nil {
		return nil, fmt.Errorf("search attribute types: %w", err)
	}
	types := make(map[string]string, len(rows))
	for _, r := range rows {
		types[r.Name] = r.Type
	}
	return types, nil
}

// invalid turns a visibility error into the storage's storage.InvalidError.
func invalid(err error) error {
	var ve *visibility.Error
	if errors.As(err, &ve) {
		return &storage.InvalidError{Field: ve.Field, Message: ve.Message()}
	}
	return err
}

// normalizeSearchAttributes checks a workflow's attributes against the
// namespace's types; nil when there are none (and then no statement runs).
func (s *Store) normalizeSearchAttributes(ctx context.Context, q *gen.Queries, ns string, in map[string]json.RawMessage, field string, allowNull bool) ([]byte, error) {
	if len(in) == 0 {
		return nil, nil
	}
	types, err := searchAttributeTypes(ctx, q, ns)
	if err != nil {
		return nil, err
	}
	out, err := visibility.NormalizeAll(types, in, field, allowNull)
	if err != nil {
		return nil, invalid(err)
	}
	return out, nil
}

// listColumns are the columns a list reads: a summary, without payloads
// (as ListInstances).
const listColumns = `namespace, instance_id, workflow_type, task_queue, status, execution_id,
  (error - 'details' - 'stack')::jsonb, cancel_requested, cancel_reason,
  (last_task_error - 'details' - 'stack')::jsonb, created_at, updated_at, completed_at,
  cron_schedule, parent_instance_id, parent_execution_id, search_attributes, run_id, parent_run_id,
  concurrency, locked_by`

// visibilityWhere is the WHERE condition of a list or count with a query
// (and the older status and workflow_type filters), with its arguments
// ($1 is the namespace).
func (s *Store) visibilityWhere(ctx context.Context, ns string, f storage.ListFilter) (string, []any, bool, error) {
	q, err := visibility.Parse(f.Query)
	if err != nil {
		return "", nil, false, invalid(err)
	}
	types := map[string]string{}
	if q.Where != nil {
		if types, err = searchAttributeTypes(ctx, gen.New(s.pool), ns); err != nil {
			return "", nil, false, err
		}
	}
	args := []any{ns}
	cond, err := visibility.Compile(q, types, &args)
	if err != nil {
		return "", nil, false, invalid(err)
	}
	where := "namespace = $1 AND created_at IS NOT NULL AND " + cond
	if f.Status != "" {
		args = append(args, f.Status)
		where += " AND status = $" + strconv.Itoa(len(args))
	}
	if f.WorkflowType != "" {
		args = append(args, f.WorkflowType)
		where += " AND workflow_type = $" + strconv.Itoa(len(args))
	}
	return where, args, q.Asc, nil
}

// listStatement is the statement of a list with a query: the one
// statement of the store built at run time, from visibility.Compile's
// condition (values bound, names from a whitelist) and this fixed text.
func (s *Store) listStatement(ctx context.Context, ns string, f storage.ListFilter, limit int32) (string, []any, error) {
	where, args, asc, err := s.visibilityWhere(ctx, ns, f)
	if err != nil {
		return "", nil, err
	}
	cmp, dir := "<", "DESC"
	if asc {
		cmp, dir = ">", "ASC"
	}
	if f.PageToken != "" {
		tok, err := decodePageToken(f.PageToken)
		if err != nil {
			return "", nil, err
		}
		args = append(args, tok.CreatedAt, tok.ID)
		where += fmt.Sprintf(" AND (created_at, instance_id) %s ($%d::timestamptz, $%d::text)", cmp, len(args)-1, len(args))
	}
	args = append(args, limit+1)
	return fmt.Sprintf("SELECT %s FROM instances WHERE %s ORDER BY created_at %s, instance_id %s LIMIT $%d",
		listColumns, where, dir, dir, len(args)), args, nil
}

// countStatement is the statement of a count with a query.
func (s *Store) countStatement(ctx context.Context, ns string, f storage.ListFilter) (string, []any, error) {
	where, args, _, err := s.visibilityWhere(ctx, ns, f)
	return "SELECT count(*) FROM instances WHERE " + where, args, err
}

// listByQuery is ListWorkflows with a query (listStatement).
func (s *Store) listByQuery(ctx context.Context, ns string, f storage.ListFilter, limit int32) (api.ListWorkflowsResponse, error) {
	sql, args, err := s.listStatement(ctx, ns, f, limit)
	if err != nil {
		return api.ListWorkflowsResponse{}, err
	}
	var list []gen.Instance
	err = s.bounded(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (gen.Instance, error) {
			var i gen.Instance
			err := r.Scan(&i.Namespace, &i.InstanceID, &i.WorkflowType, &i.TaskQueue, &i.Status, &i.ExecutionID,
				&i.Error, &i.CancelRequested, &i.CancelReason, &i.LastTaskError, &i.CreatedAt, &i.UpdatedAt,
				&i.CompletedAt, &i.CronSchedule, &i.ParentInstanceID, &i.ParentExecutionID, &i.SearchAttributes,
				&i.RunID, &i.ParentRunID, &i.Concurrency, &i.LockedBy)
			return i, err
		})
		return err
	})
	if err != nil {
		return api.ListWorkflowsResponse{}, fmt.Errorf("list workflows: %w", err)
	}
	out := api.ListWorkflowsResponse{Workflows: make([]api.Workflow, 0, len(list))}
	if int32(len(list)) > limit {
		list = list[:limit]
		last := list[len(list)-1]
		out.NextPageToken = base64.RawURLEncoding.EncodeToString(mustJSON(pageToken{CreatedAt: last.CreatedAt, ID: last.InstanceID}))
	}
	for _, i := range list {
		out.Workflows = append(out.Workflows, toWorkflow(i))
	}
	return out, nil
}

// countWorkflows counts the instances of ns that f selects (its Query,
// Status and WorkflowType; not its page).
func (s *Store) countWorkflows(ctx context.Context, ns string, f storage.ListFilter) (int64, error) {
	sql, args, err := s.countStatement(ctx, ns, f)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.bounded(ctx, func(tx pgx.Tx) error { return tx.QueryRow(ctx, sql, args...).Scan(&n) }); err != nil {
		return 0, fmt.Errorf("count workflows: %w", err)
	}
	return n, nil
}

// bounded runs fn in a read-only transaction whose statements may take at
// most Options.ListTimeout each; a statement stopped by it is
// storage.ErrListTimeout.
func (s *Store) bounded(ctx context.Context, fn func(tx pgx.Tx) error) error {
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if s.opts.ListTimeout > 0 {
			if err := gen.New(tx).SetStatementTimeout(ctx, max(1, s.opts.ListTimeout.Milliseconds())); err != nil {
				return err
			}
		}
		return fn(tx)
	})
	var pe *pgconn.PgError
	if err != nil && ctx.Err() == nil && errors.As(err, &pe) && pe.Code == "57014" { // query_canceled
		return storage.ErrListTimeout
	}
	return err
}

func decodePageToken(s string) (pageToken, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var tok pageToken
	if err != nil || json.Unmarshal(b, &tok) != nil || tok.ID == "" {
		return pageToken{}, storage.ErrBadPageToken
	}
	return tok, nil
}
