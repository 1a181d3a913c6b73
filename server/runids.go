package server

import (
	"context"
	"strconv"

	"github.com/google/uuid"

	"github.com/tetherhq/tether/server/storage"
)

// runRef is an execution a request names: by run id (a UUID, looked up
// once the request is valid) or by execution id (0: the current one).
type runRef struct {
	run  uuid.UUID
	exec int64
}

// runRef reads the execution a request names with its execution id exec
// and its run id runID of field — a run id (a UUID) or an execution id in
// decimal, as the SDK's RunID may be either. Naming two different
// executions, or a runID of neither form, is a problem of field.
func (b *binder) runRef(field, runID string, exec int64) runRef {
	if runID == "" {
		return runRef{exec: exec}
	}
	if n, err := strconv.ParseInt(runID, 10, 64); err == nil {
		if n < 1 {
			b.add(field, "must be a run id (a UUID) or an execution id of at least 1")
			return runRef{}
		}
		if exec != 0 && exec != n {
			b.add(field, "names execution %d, and execution_id %d", n, exec)
		}
		return runRef{exec: n}
	}
	run, err := uuid.Parse(runID)
	if err != nil {
		b.add(field, "must be a run id (a UUID) or an execution id in decimal")
		return runRef{}
	}
	if exec != 0 {
		b.add(field, "names a run, and execution_id another: give one of them")
	}
	return runRef{run: run}
}

// executionOf returns the execution of instance id that ref names (0: the
// current one): a run id is looked up (ErrNotFound when no execution of
// the instance has it).
func (s *Server) executionOf(ctx context.Context, ns, id string, ref runRef) (int64, error) {
	if ref.run == uuid.Nil {
		return ref.exec, nil
	}
	return s.store.ExecutionOfRunID(ctx, &storage.ExecutionOfRunIDParams{Namespace: ns, InstanceID: id, RunID: ref.run})
}
