package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/tetherhq/tether/openapi"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/ui"
)

// BasePath is the prefix of every route of the REST contract.
const BasePath = "/v1/namespaces/:namespace"

// Route templates of the long polls (their empty answers are logged at
// debug level).
const (
	routeWorkflowPoll   = BasePath + "/workflow-tasks/poll"
	routeActivityPoll   = BasePath + "/activity-tasks/poll"
	routeWorkflowResult = BasePath + "/workflows/:instance_id/result"
	routeWorkerBeat     = BasePath + "/workers/heartbeat"
	routeQueryPoll      = BasePath + "/query-tasks/poll"
	// routeWorkflowQuery waits for a worker's answer (its wait) as a
	// long poll does; its empty end is a 504, not quiet.
	routeWorkflowQuery = BasePath + "/workflows/:instance_id/queries/:name"
)

func (s *Server) newEcho() *echo.Echo {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = s.handleError

	e.Use(middleware.RequestIDWithConfig(middleware.RequestIDConfig{
		Generator: s.reqIDs.Next,
		RequestIDHandler: func(c echo.Context, id string) {
			if len(id) > 128 { // an id the client sent
				c.Response().Header().Set(echo.HeaderXRequestID, id[:128])
			}
		},
	}))
	if s.tracing.On() {
		e.Use(s.tracing.Middleware)
	}
	e.Use(s.observe)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableErrorHandler: true,
		StackSize:           16 << 10,
		DisableStackAll:     true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.logger.Error("server: panic in handler",
				"method", c.Request().Method, "path", c.Request().URL.Path,
				"request_id", requestID(c), "panic", err, "stack", string(stack))
			return &panicError{err: err}
		},
	}))
	e.Use(edge.CheckHost(s.cfg.AllowedHosts))
	e.Use(edge.LimitBody(s.cfg.BodyLimit))
	e.Use(edge.BoundRequest(s.cfg.Timeouts, s.longPollWait))
	e.Use(s.auth.Middleware)
	e.Use(edge.GuardRequest(uiPath))

	// Outside the base.
	getAndHead(e, "/healthz", s.healthz)
	getAndHead(e, "/readyz", s.readyz)
	getAndHead(e, "/metrics", echo.WrapHandler(s.metrics.Handler()))
	getAndHead(e, "/openapi.json", s.openapiJSON)
	getAndHead(e, "/openapi.yaml", s.openapiYAML)
	redirectDocs := func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/docs/index.html")
	}
	getAndHead(e, "/docs", redirectDocs)
	getAndHead(e, "/docs/", redirectDocs)
	getAndHead(e, "/docs/doc.json", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/openapi.json")
	})
	getAndHead(e, "/docs/doc.yaml", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/openapi.yaml")
	})
	getAndHead(e, "/docs/*", swaggerUI())
	// The web UI, over this server's own public API (package ui). It
	// authenticates nobody itself: its API calls carry the browser's
	// credentials and pass the authorizer like any other request.
	uiHandler := echo.WrapHandler(ui.New(ui.Config{Client: ui.InProcess(e), Logger: s.logger, CodecEndpoint: s.cfg.UICodecEndpoint}))
	getAndHead(e, uiPath, uiHandler)
	e.POST(uiPath, uiHandler)

	s.namespaceRoutes(e)
	s.nexusRoutes(e)
	g := e.Group(BasePath)
	// Workflows.
	g.POST("/workflows", s.startWorkflow)
	getAndHead(g, "/workflows", s.listWorkflows)
	getAndHead(g, "/workflows/count", s.countWorkflows)
	getAndHead(g, "/workflows/:instance_id", s.describeWorkflow)
	g.DELETE("/workflows/:instance_id", s.deleteWorkflow)
	getAndHead(g, "/workflows/:instance_id/history", s.workflowHistory)
	getAndHead(g, "/workflows/:instance_id/result", s.workflowResult)
	g.POST("/workflows/:instance_id/cancel", s.cancelWorkflow)
	g.POST("/workflows/:instance_id/terminate", s.terminateWorkflow)
	g.POST("/workflows/:instance_id/reset", s.resetWorkflow)
	g.POST("/workflows/:instance_id/signal-with-start", s.signalWithStart)
	g.POST("/workflows/:instance_id/activities/:activity_id/complete", s.completeActivityByID)
	g.POST("/workflows/:instance_id/activities/:activity_id/fail", s.failActivityByID)
	g.POST("/workflows/:instance_id/activities/:activity_id/heartbeat", s.heartbeatActivityByID)
	g.POST("/workflows/:instance_id/signals/:name", s.signalWorkflow)
	g.POST("/workflows/:instance_id/queries/:name", s.queryWorkflow)
	g.POST("/workflows/:instance_id/updates/:name", s.updateWorkflow)
	getAndHead(g, "/workflows/:instance_id/update-outcomes/:update_id", s.getWorkflowUpdate)
	// Search attributes.
	g.POST("/search-attributes", s.registerSearchAttribute)
	getAndHead(g, "/search-attributes", s.listSearchAttributes)
	g.DELETE("/search-attributes/:name", s.deleteSearchAttribute)
	// Query tasks.
	g.POST("/query-tasks/poll", s.pollQueryTask)
	g.POST("/query-tasks/:query_id/answer", s.answerQueryTask)
	// Workflow tasks.
	g.POST("/workflow-tasks/poll", s.pollWorkflowTask)
	g.POST("/workflow-tasks/:token/complete", s.completeWorkflowTask)
	g.POST("/workflow-tasks/:token/fail", s.failWorkflowTask)
	// Activity tasks.
	g.POST("/activity-tasks/poll", s.pollActivityTask)
	g.POST("/activity-tasks/:token/heartbeat", s.heartbeatActivityTask)
	g.POST("/activity-tasks/:token/complete", s.completeActivityTask)
	g.POST("/activity-tasks/:token/fail", s.failActivityTask)
	g.POST("/activity-tasks/:token/abandon", s.abandonActivityTask)
	g.POST("/activity-tasks/:token/pending", s.pendingActivityTask)
	// Workers and task queues.
	g.POST("/workers/heartbeat", s.workerHeartbeat)
	getAndHead(g, "/workers", s.listWorkers)
	getAndHead(g, "/workers/:worker_id", s.getWorker)
	getAndHead(g, "/task-queues/:name", s.describeTaskQueue)
	g.PUT("/task-queues/:name/limits", s.setTaskQueueLimits)
	s.scheduleRoutes(g)
	s.batchRoutes(g)
	return e
}

// quietRoute reports whether a request on route with status is logged at
// debug level: empty long polls, clients gone, and the system routes.
func quietRoute(route string, status int) bool {
	if status == statusClientClosedRequest {
		return true
	}
	switch route {
	case routeWorkflowPoll, routeActivityPoll, routeQueryPoll, routeWorkflowResult, routeWorkerBeat:
		return status == http.StatusNoContent || status == http.StatusOK && route == routeWorkerBeat
	case "/healthz", "/readyz", "/metrics", "/openapi.json", "/openapi.yaml", "/docs", "/docs/", "/docs/doc.json", "/docs/doc.yaml", "/docs/*":
		return status < 400
	}
	return false
}

// observe logs each request and records its metrics. It answers the
// handler's error itself, so that the status it records is the one sent.
func (s *Server) observe(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		path := c.Request().URL.Path
		err := next(c)
		if err != nil {
			if !c.Response().Committed && edge.BodyUnread(c.Request()) {
				// Refused before its body was read (no valid key, a
				// bound): close the connection after the answer, rather
				// than wait for a body the client may withhold (net/http
				// reads what remains before reusing a connection).
				c.Response().Header().Set(echo.HeaderConnection, "close")
			}
			c.Error(err)
		}
		latency := time.Since(start)
		req := c.Request()
		status := c.Response().Status
		route := c.Path()
		if unmatched, _ := c.Get(unmatchedKey).(bool); unmatched || route == "" {
			route = "unmatched"
		}
		s.metrics.Route(req.Method, route, status).Record(latency)

		level := slog.LevelInfo
		switch {
		case quietRoute(route, status):
			level = slog.LevelDebug
		case status >= 500:
			level = slog.LevelError
		}
		if s.logger.Enabled(req.Context(), level) {
			s.logger.LogAttrs(req.Context(), level, "http request",
				slog.String("method", req.Method),
				slog.String("path", path),
				slog.String("route", route),
				slog.Int("status", status),
				slog.Duration("latency", latency),
				slog.String("request_id", requestID(c)),
				slog.String("remote", c.RealIP()),
			)
		}
		if changesState(req.Method) {
			s.audit(c, route, status)
		}
		return nil
	}
}

// changesState reports whether a request of that method may change state
// (every route but GET and HEAD; a query's POST included).
func changesState(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// audit logs a state-changing request as an "audit" record: who made it
// (the API key's id and role, never its secret; "none" when the server
// runs without keys, "unauthenticated" when it was refused one), what it
// was, and how it was answered. The worker protocol (polls, reports,
// heartbeats: a worker key's routes) is logged at Debug, everything else
// at Info, so that operators can keep the trail with `msg=audit`.
func (s *Server) audit(c echo.Context, route string, status int) {
	req := c.Request()
	level := slog.LevelInfo
	if rule, ok := s.rules[ruleKey{req.Method, route}]; ok && rule.perm == permWorker {
		level = slog.LevelDebug
	}
	if !s.logger.Enabled(req.Context(), level) {
		return
	}
	keyID, role := "none", ""
	if k := principal(c); k != nil {
		keyID, role = k.ID, k.Role
	} else if s.cfg.Auth.Required {
		keyID = "unauthenticated"
	}
	s.logger.LogAttrs(req.Context(), level, "audit",
		slog.String("key_id", keyID),
		slog.String("role", role),
		slog.String("namespace", routeNamespace(c)),
		slog.String("method", req.Method),
		slog.String("route", route),
		slog.String("path", req.URL.Path),
		slog.Int("status", status),
		slog.String("request_id", requestID(c)),
		slog.String("remote", c.RealIP()),
	)
}

// unmatchedKey is set in the echo context when no route matched the path.
const unmatchedKey = "tether.unmatched"

// Health is the body of /healthz and /readyz.
type Health struct {
	// Status is "ok" (healthz) or "ready" (readyz).
	Status string `json:"status"`
	// Listener is the state of the long-poll LISTEN connection (readyz):
	// "connected", "disconnected" (long polls still work, on timers), or
	// "none".
	Listener string `json:"listener,omitempty"`
}

// healthz godoc
//
//	@Summary	Liveness: the process is up
//	@ID		healthz
//	@Tags		system
//	@Produce	json
//	@Success	200	{object}	Health
//	@Router		/healthz [get]
func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, Health{Status: "ok"})
}

// readyz godoc
//
//	@Summary		Readiness: the database answers
//	@ID			readyz
//	@Description	Pings PostgreSQL; 503 when it does not answer in time.
//	@Tags			system
//	@Produce		json,application/problem+json
//	@Success		200	{object}	Health
//	@Failure		503	{object}	api.Problem
//	@Router			/readyz [get]
func (s *Server) readyz(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), s.cfg.ReadyTimeout)
	defer cancel()
	if s.store == nil {
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Not ready", "No database.")
	}
	if err := s.store.Ping(ctx); errors.Is(err, storage.ErrNoDatabase) {
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Not ready", "No database.")
	} else if err != nil {
		s.logger.Warn("server: readiness ping failed", "err", err)
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Not ready",
			"The database does not answer.")
	}
	if s.shuttingDown() {
		return newProblem(http.StatusServiceUnavailable, ProblemUnavailable, "Not ready", "The server is shutting down.")
	}
	h := Health{Status: "ready", Listener: "none"}
	if s.hub != nil {
		h.Listener = "disconnected"
		if s.hub.Connected() {
			h.Listener = "connected"
		}
	}
	return c.JSON(http.StatusOK, h)
}

// openapiJSON godoc
//
//	@Summary	This API's OpenAPI 3 document (also as YAML at /openapi.yaml)
//	@ID		openapiJSON
//	@Tags		system
//	@Produce	json
//	@Success	200	{object}	object
//	@Router		/openapi.json [get]
func (s *Server) openapiJSON(c echo.Context) error {
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, openapi.JSON())
}

func (s *Server) openapiYAML(c echo.Context) error {
	return c.Blob(http.StatusOK, "application/yaml", openapi.YAML())
}

// getAndHead adds a GET route and its HEAD twin: HEAD answers wherever GET does
// (net/http drops the body).
func getAndHead(r interface {
	GET(string, echo.HandlerFunc, ...echo.MiddlewareFunc) *echo.Route
	HEAD(string, echo.HandlerFunc, ...echo.MiddlewareFunc) *echo.Route
}, path string, h echo.HandlerFunc) {
	r.GET(path, h)
	r.HEAD(path, h)
}

// uiPath is the route of the web UI's pages and forms. Its requests are
// HTML pages and HTML forms, not the JSON API: they pass the authorizer as
// public and edge.GuardRequest lets their form bodies through (the UI checks
// its own CSRF token; its API calls are checked like any other request).
const uiPath = ui.Prefix + "*"
