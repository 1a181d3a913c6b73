package server

import (
	"errors"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/engine"
	"github.com/tetherhq/tether/server/storage"
)

// scheduleRoutes adds the routes of schedules (docs/api.md, "Schedules")
// to the namespace group g.
func (s *Server) scheduleRoutes(g *echo.Group) {
	g.POST("/schedules", s.createSchedule)
	getAndHead(g, "/schedules", s.listSchedules)
	getAndHead(g, "/schedules/:schedule_id", s.describeSchedule)
	g.PUT("/schedules/:schedule_id", s.updateSchedule)
	g.DELETE("/schedules/:schedule_id", s.deleteSchedule)
	g.POST("/schedules/:schedule_id/pause", s.pauseSchedule)
	g.POST("/schedules/:schedule_id/unpause", s.unpauseSchedule)
	g.POST("/schedules/:schedule_id/trigger", s.triggerSchedule)
	g.POST("/schedules/:schedule_id/backfill", s.backfillSchedule)
}

// tagScheduleID is the validation of a schedule id: a name short enough
// that "<id>-<slot time>" is still an instance id.
const tagScheduleID = "required,name,max=150"

// checkScheduleRequest checks a schedule's spec (a 400 naming the field:
// a bad cron expression, time zone, interval or jitter) beyond its tags.
func (b *binder) checkScheduleRequest(req *api.ScheduleRequest) {
	if _, err := engine.ParseSpec(req.Spec); err != nil {
		var se *engine.SpecError
		if errors.As(err, &se) {
			b.add("spec."+se.Field, "%s", se.Message)
		} else {
			b.add("spec", "%v", err)
		}
	}
	if d := req.CatchupWindow.D(); d != 0 && (d < time.Second || d > 365*24*time.Hour) {
		b.add("catchup_window", "must be between 1s and 8760h")
	}
}

// createSchedule godoc
//
//	@Summary		Create a schedule
//	@ID			createSchedule
//	@Description	A schedule starts a workflow at each slot of its spec (cron expressions in a time zone, intervals with an offset, jitter). Each slot's workflow id is the action's workflow_id_prefix (default the schedule id), "-" and the slot's time in RFC 3339 UTC; the scheduler fires each slot once across replicas. Overlap policy skip (default), buffer_one, cancel_other, terminate_other or allow_all; catch-up window default 1m. An id in use → 409 already-exists.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string				true	"Namespace"	default(default)
//	@Param			request		body		api.ScheduleRequest	true	"The schedule (schedule_id required)"
//	@Success		201			{object}	api.Schedule
//	@Failure		400			{object}	api.Problem	"Invalid request (a bad cron expression, time zone, interval, overlap policy)"
//	@Failure		409			{object}	api.Problem	"A schedule of that id exists"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules [post]
func (s *Server) createSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.ScheduleRequest
	b.body(&req)
	if !b.has("schedule_id") {
		b.value("schedule_id", req.ScheduleID, tagScheduleID)
	}
	b.checkScheduleRequest(&req)
	if err := b.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.store.CreateSchedule(ctx, &storage.CreateScheduleParams{Namespace: ns, Request: req}); err != nil {
		if errors.Is(err, storage.ErrScheduleExists) {
			return newProblem(http.StatusConflict, api.ProblemAlreadyExists, "Schedule exists", "A schedule of this schedule_id exists in the namespace.")
		}
		return err
	}
	sc, err := s.store.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: req.ScheduleID})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, sc)
}

// listSchedules godoc
//
//	@Summary		List schedules
//	@ID			listSchedules
//	@Description	A namespace's schedules by id, a page at a time: pass next_page_token back as page_token.
//	@Tags			schedules
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"								default(default)
//	@Param			page_size	query		int		false	"Page size (default 100, at most 1000)"	minimum(1)	maximum(1000)
//	@Param			page_token	query		string	false	"next_page_token of the previous page"
//	@Success		200			{object}	api.ListSchedulesResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules [get]
func (s *Server) listSchedules(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	f := storage.ScheduleFilter{
		Namespace: ns,
		Limit:     int32(b.queryInt("page_size", defaultListPageSize, 1, maxListLimit)),
		PageToken: b.query("page_token", tagPageToken),
	}
	if err := b.err(); err != nil {
		return err
	}
	resp, err := s.store.ListSchedules(c.Request().Context(), &f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, resp)
}

// describeSchedule godoc
//
//	@Summary		Describe a schedule
//	@ID			describeSchedule
//	@Description	The schedule's spec, action and policies, and its info: the next (at most 10) slots, the newest (at most 10) actions with their workflows' status, the running workflows (at most 100), the counters.
//	@Tags			schedules
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			schedule_id	path		string	true	"Schedule id"
//	@Success		200			{object}	api.Schedule
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id} [get]
func (s *Server) describeSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	if err := b.err(); err != nil {
		return err
	}
	sc, err := s.store.DescribeSchedule(c.Request().Context(), &storage.ScheduleRef{Namespace: ns, ID: id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sc)
}

// updateSchedule godoc
//
//	@Summary		Update a schedule
//	@ID			updateSchedule
//	@Description	Replaces the spec, action and policies (and paused, note, remaining_actions); the id, counters and recent actions stay. The next slot is computed from now; a buffered slot is dropped. schedule_id in the body, when given, must be the path's.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string				true	"Namespace"	default(default)
//	@Param			schedule_id	path		string				true	"Schedule id"
//	@Param			request		body		api.ScheduleRequest	true	"The new schedule"
//	@Success		200			{object}	api.Schedule
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		413			{object}	api.Problem	"Body, or one payload, too large"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id} [put]
func (s *Server) updateSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	var req api.ScheduleRequest
	b.body(&req)
	b.check(req.ScheduleID == "" || req.ScheduleID == id, "schedule_id", "must be the path's schedule id, or absent")
	b.checkScheduleRequest(&req)
	if err := b.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.store.UpdateSchedule(ctx, &storage.UpdateScheduleParams{Namespace: ns, ID: id, Request: &req}); err != nil {
		return err
	}
	sc, err := s.store.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sc)
}

// deleteSchedule godoc
//
//	@Summary		Delete a schedule
//	@ID			deleteSchedule
//	@Description	Deletes the schedule and its recorded actions; the workflows it started stay.
//	@Tags			schedules
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"	default(default)
//	@Param			schedule_id	path	string	true	"Schedule id"
//	@Success		204
//	@Failure		400	{object}	api.Problem	"Invalid request"
//	@Failure		404	{object}	api.Problem	"Unknown schedule"
//	@Failure		401	{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403	{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id} [delete]
func (s *Server) deleteSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.store.DeleteSchedule(c.Request().Context(), &storage.ScheduleRef{Namespace: ns, ID: id}); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// pauseSchedule godoc
//
//	@Summary		Pause a schedule
//	@ID			pauseSchedule
//	@Description	A paused schedule fires no slot (a trigger or a backfill still does). The note says why.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string					true	"Namespace"	default(default)
//	@Param			schedule_id	path		string					true	"Schedule id"
//	@Param			request		body		api.SchedulePauseRequest	false	"Why"
//	@Success		200			{object}	api.Schedule
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id}/pause [post]
func (s *Server) pauseSchedule(c echo.Context) error { return s.setPaused(c, true) }

// unpauseSchedule godoc
//
//	@Summary		Unpause a schedule
//	@ID			unpauseSchedule
//	@Description	The schedule fires again from its next slot after now: the slots of the pause do not fire.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string					true	"Namespace"	default(default)
//	@Param			schedule_id	path		string					true	"Schedule id"
//	@Param			request		body		api.SchedulePauseRequest	false	"Why"
//	@Success		200			{object}	api.Schedule
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id}/unpause [post]
func (s *Server) unpauseSchedule(c echo.Context) error { return s.setPaused(c, false) }

func (s *Server) setPaused(c echo.Context, paused bool) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	var req api.SchedulePauseRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	ctx := c.Request().Context()
	if err := s.store.UpdateSchedule(ctx, &storage.UpdateScheduleParams{Namespace: ns, ID: id, Pause: &storage.SchedulePause{Paused: paused, Note: req.Note}}); err != nil {
		return err
	}
	sc, err := s.store.DescribeSchedule(ctx, &storage.ScheduleRef{Namespace: ns, ID: id})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, sc)
}

// triggerSchedule godoc
//
//	@Summary		Trigger a schedule now
//	@ID			triggerSchedule
//	@Description	Fires the action now (its slot: now, to the millisecond), with the schedule's overlap policy unless the request overrides it; also when paused. outcome: started, skipped or buffered.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			schedule_id	path		string						true	"Schedule id"
//	@Param			request		body		api.ScheduleTriggerRequest	false	"Overlap policy override"
//	@Success		200			{object}	api.ScheduleTriggerResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		429			{object}	api.Problem	"The key starts workflows too often (Retry-After)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id}/trigger [post]
func (s *Server) triggerSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	var req api.ScheduleTriggerRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	if err := s.startsReady(c, ns); err != nil {
		return err
	}
	r, err := s.store.TriggerSchedule(c.Request().Context(), &storage.TriggerScheduleParams{Namespace: ns, ID: id, Overlap: req.OverlapPolicy})
	if err != nil {
		return err
	}
	resp := r.Trigger
	if resp.Outcome == api.TriggerStarted {
		s.chargeStarts(c, ns, 1)
	}
	return c.JSON(http.StatusOK, resp)
}

// backfillSchedule godoc
//
//	@Summary		Backfill a schedule
//	@ID			backfillSchedule
//	@Description	Fires every slot of the spec in [start_at, end_at] (at most 1000), oldest first, with the overlap policy given (default the schedule's), in one transaction. A slot that fired already is skipped. end_at before start_at → 400 naming end_at.
//	@Tags			schedules
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string							true	"Namespace"	default(default)
//	@Param			schedule_id	path		string							true	"Schedule id"
//	@Param			request		body		api.ScheduleBackfillRequest	true	"The range"
//	@Success		200			{object}	api.ScheduleBackfillResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		404			{object}	api.Problem	"Unknown schedule"
//	@Failure		415			{object}	api.Problem	"Not declared Content-Type: application/json, or encoded"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		429			{object}	api.Problem	"The key starts workflows too often (Retry-After)"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/schedules/{schedule_id}/backfill [post]
func (s *Server) backfillSchedule(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("schedule_id", tagScheduleID)
	var req api.ScheduleBackfillRequest
	b.body(&req)
	if !b.has("end_at") && !b.has("start_at") {
		b.check(!req.EndAt.Before(req.StartAt), "end_at", "must not be before start_at")
	}
	if err := b.err(); err != nil {
		return err
	}
	if err := s.startsReady(c, ns); err != nil {
		return err
	}
	r, err := s.store.TriggerSchedule(c.Request().Context(), &storage.TriggerScheduleParams{Namespace: ns, ID: id, Backfill: &req})
	if err != nil {
		return err
	}
	resp := r.Backfill
	s.chargeStarts(c, ns, len(resp.Started))
	return c.JSON(http.StatusOK, resp)
}
