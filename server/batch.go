package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// batchRoutes adds the routes of batch jobs (docs/api.md, "Batch
// operations") to the namespace group g.
func (s *Server) batchRoutes(g *echo.Group) {
	g.POST("/batches", s.startBatch)
	getAndHead(g, "/batches", s.listBatches)
	getAndHead(g, "/batches/:batch_id", s.describeBatch)
	g.POST("/batches/:batch_id/pause", s.pauseBatch)
	g.POST("/batches/:batch_id/resume", s.resumeBatch)
	g.POST("/batches/:batch_id/cancel", s.cancelBatch)
}

// batchRouteRules are the rules of the batch routes (routeRules): a
// client key starts and steers jobs, a reader key reads them. A delete
// batch further needs an admin key, as DELETE /workflows/{id} does
// (startBatch checks it).
func batchRouteRules(rules map[ruleKey]routeRule) {
	cl := routeRule{perm: permClient, checkNamespace: true}
	vw := routeRule{perm: permView, checkNamespace: true}
	rules[ruleKey{http.MethodPost, BasePath + "/batches"}] = cl
	rules[ruleKey{http.MethodGet, BasePath + "/batches"}] = vw
	rules[ruleKey{http.MethodGet, BasePath + "/batches/:batch_id"}] = vw
	rules[ruleKey{http.MethodPost, BasePath + "/batches/:batch_id/pause"}] = cl
	rules[ruleKey{http.MethodPost, BasePath + "/batches/:batch_id/resume"}] = cl
	rules[ruleKey{http.MethodPost, BasePath + "/batches/:batch_id/cancel"}] = cl
}

// tagBatchID is the validation of a batch id in a path.
const tagBatchID = "required,name,max=150"

// startBatch godoc
//
//	@Summary		Start a batch job
//	@ID			startBatch
//	@Description	Starts a job that applies an operation to every workflow of the namespace that a list query matches (docs/api.md, "Visibility"): cancel, terminate, signal, delete (running ones only with force; a delete batch needs an admin key, as DELETE /workflows/{id}) or reset (as POST /workflows/{id}/reset with the job's reset options: first_turn, last_turn or build_id). The server runs it in the background at rate_per_second (default 50, at most 1000), one workflow per transaction, and resumes it where it was after a restart. An id in use → 409 already-exists.
//	@Tags			batches
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string				true	"Namespace"	default(default)
//	@Param			request		body		api.BatchRequest	true	"The job"
//	@Success		201			{object}	api.Batch
//	@Failure		400			{object}	api.Problem	"Invalid request (a query that does not parse names query; an unknown operation names operation)"
//	@Failure		409			{object}	api.Problem	"A batch of that id exists"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace; delete needs admin)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches [post]
func (s *Server) startBatch(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.BatchRequest
	b.body(&req)
	if !b.has("operation") && !slices.Contains(api.BatchOperations(), req.Operation) {
		b.add("operation", "must be one of %s", strings.Join(api.BatchOperations(), ", "))
	}
	if req.Operation == api.BatchOpReset {
		b.check(req.Reset != nil, "reset", "is required for a reset batch")
		if r := req.Reset; r != nil && !b.has("reset.reset_type") {
			switch r.ResetType {
			case api.ResetFirstTurn, api.ResetLastTurn, api.ResetBuildID:
				b.check(r.ResetType != api.ResetBuildID || r.BuildID != "", "reset.build_id", "is required for reset_type build_id")
				b.check(r.ResetType == api.ResetBuildID || r.BuildID == "", "reset.build_id", "is only for reset_type build_id")
			default:
				b.add("reset.reset_type", "must be one of first_turn, last_turn, build_id (event ids differ from one workflow to the next)")
			}
		}
	} else {
		b.check(req.Reset == nil, "reset", "is only for a reset batch")
	}
	if req.Operation == api.BatchOpSignal {
		b.check(req.Signal != nil, "signal", "is required for a signal batch")
	} else {
		b.check(req.Signal == nil, "signal", "is only for a signal batch")
	}
	b.check(!req.Force || req.Operation == api.BatchOpDelete, "force", "is only for a delete batch")
	if err := b.err(); err != nil {
		return err
	}
	if req.Operation == api.BatchOpDelete {
		if k := principal(c); k != nil && k.Role != api.RoleAdmin {
			return forbidden()
		}
	}
	nb := storage.NewBatch{Namespace: ns, ID: req.BatchID, Operation: req.Operation, Query: req.Query, Reason: req.Reason,
		Force: req.Force, Rate: req.RatePerSecond, Identity: callerID(c)}
	if nb.ID == "" {
		nb.ID = uuid.NewString()
	}
	if nb.Rate == 0 {
		nb.Rate = api.DefaultBatchRate
	}
	if req.Signal != nil {
		nb.SignalName, nb.SignalInput = req.Signal.Name, req.Signal.Input
	}
	nb.Reset = req.Reset
	job, err := s.store.CreateBatch(c.Request().Context(), &nb)
	if errors.Is(err, storage.ErrBatchExists) {
		return newProblem(http.StatusConflict, api.ProblemAlreadyExists, "Batch exists", "A batch of this batch_id exists in the namespace.")
	}
	if err != nil {
		return err
	}
	s.logger.Info("batch started", "namespace", ns, "batch_id", job.BatchID, "operation", job.Operation,
		"total", job.Total, "by", callerID(c))
	return c.JSON(http.StatusCreated, job)
}

// listBatches godoc
//
//	@Summary		List batch jobs
//	@ID			listBatches
//	@Description	A namespace's batch jobs, newest first, a page at a time (pass next_page_token back as page_token); without their failures.
//	@Tags			batches
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"								default(default)
//	@Param			page_size	query		int		false	"Page size (default 100, at most 1000)"	minimum(1)	maximum(1000)
//	@Param			page_token	query		string	false	"next_page_token of the previous page"
//	@Success		200			{object}	api.ListBatchesResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches [get]
func (s *Server) listBatches(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	f := storage.BatchFilter{
		Namespace: ns,
		Limit:     int32(b.queryInt("page_size", defaultListPageSize, 1, maxListLimit)),
		PageToken: b.query("page_token", tagPageToken),
	}
	if err := b.err(); err != nil {
		return err
	}
	resp, err := s.store.ListBatches(c.Request().Context(), &f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resp)
}

// describeBatch godoc
//
//	@Summary		Describe a batch job
//	@ID			describeBatch
//	@Description	The job and its progress: state, total matched when it started, done, failed, the first (at most 100) failures with their reasons, start and finish times.
//	@Tags			batches
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			batch_id	path		string	true	"Batch id"
//	@Success		200			{object}	api.Batch
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown batch"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches/{batch_id} [get]
func (s *Server) describeBatch(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("batch_id", tagBatchID)
	if err := b.err(); err != nil {
		return err
	}
	job, err := s.batchByID(c.Request().Context(), ns, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, job)
}

// pauseBatch godoc
//
//	@Summary		Pause a batch job
//	@ID			pauseBatch
//	@Description	Stops a running job after the workflow in hand; resume continues where it stopped. A paused job is left alone; a finished one (completed, canceled, failed) → 409 not-running.
//	@Tags			batches
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			batch_id	path		string	true	"Batch id"
//	@Success		200			{object}	api.Batch
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown batch"
//	@Failure		409			{object}	api.Problem	"The batch has finished"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches/{batch_id}/pause [post]
func (s *Server) pauseBatch(c echo.Context) error { return s.changeBatch(c, api.BatchPaused) }

// resumeBatch godoc
//
//	@Summary		Resume a paused batch job
//	@ID			resumeBatch
//	@Description	A paused job runs again from where it stopped (on any replica). A running job is left alone; a finished one → 409 not-running.
//	@Tags			batches
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			batch_id	path		string	true	"Batch id"
//	@Success		200			{object}	api.Batch
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown batch"
//	@Failure		409			{object}	api.Problem	"The batch has finished"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches/{batch_id}/resume [post]
func (s *Server) resumeBatch(c echo.Context) error { return s.changeBatch(c, api.BatchRunning) }

// cancelBatch godoc
//
//	@Summary		Cancel a batch job
//	@ID			cancelBatch
//	@Description	Stops a running or paused job for good after the workflow in hand (the workflows it handled stay as they are). A canceled job is left alone; a completed or failed one → 409 not-running.
//	@Tags			batches
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			batch_id	path		string	true	"Batch id"
//	@Success		200			{object}	api.Batch
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown batch"
//	@Failure		409			{object}	api.Problem	"The batch has finished"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/batches/{batch_id}/cancel [post]
func (s *Server) cancelBatch(c echo.Context) error { return s.changeBatch(c, api.BatchCanceled) }

// changeBatch moves a job to state to (pause, resume, cancel).
func (s *Server) changeBatch(c echo.Context, to string) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("batch_id", tagBatchID)
	if err := b.err(); err != nil {
		return err
	}
	job, err := s.store.ChangeBatchState(c.Request().Context(), &storage.ChangeBatchStateParams{Namespace: ns, ID: id, To: to})
	if errors.Is(err, storage.ErrBatchFinished) {
		return newProblem(http.StatusConflict, api.ProblemNotRunning, "Batch finished",
			"The batch has finished ("+s.batchStateOf(c, ns, id)+"); only a running or paused batch changes state.")
	}
	if err != nil {
		return err
	}
	s.logger.Info("batch state changed", "namespace", ns, "batch_id", id, "state", job.State, "by", callerID(c))
	return c.JSON(http.StatusOK, job)
}

// batchByID is job id of ns with its failures (storage.ErrNotFound).
func (s *Server) batchByID(ctx context.Context, ns, id string) (api.Batch, error) {
	list, err := s.store.ListBatches(ctx, &storage.BatchFilter{Namespace: ns, ID: id})
	if err != nil {
		return api.Batch{}, err
	}
	return list.Batches[0], nil
}

// batchStateOf is a job's state, for a message ("" when unknown).
func (s *Server) batchStateOf(c echo.Context, ns, id string) string {
	job, err := s.batchByID(c.Request().Context(), ns, id)
	if err != nil {
		return "unknown"
	}
	return job.State
}
