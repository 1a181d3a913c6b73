package server

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/auth"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Problem types of authentication and authorization.
const (
	ProblemUnauthorized    = auth.ProblemUnauthorized
	ProblemForbidden       = edge.ProblemForbidden
	ProblemNamespaceExists = problemBase + "namespace-exists"
	ProblemNamespaceInUse  = problemBase + "namespace-not-empty"
)

// AuthConfig is the authentication and authorization of a Server
// (auth.Config).
type AuthConfig = auth.Config

// perm is what a route requires of the caller's key (auth.Perm).
type perm = auth.Perm

// What a route requires of the caller's key (auth.Perm's values).
const (
	permPublic      = auth.PermPublic
	permWorker      = auth.PermWorker
	permClient      = auth.PermClient
	permRead        = auth.PermRead
	permView        = auth.PermView
	permAnyKey      = auth.PermAnyKey
	permAdmin       = auth.PermAdmin
	permGlobalAdmin = auth.PermGlobalAdmin
	permMetrics     = auth.PermMetrics
)

// routeRule is what one route requires; namespaced routes check that their
// namespace exists.
type routeRule struct {
	perm perm
	// checkNamespace: the route is under BasePath, and a request under an
	// unknown namespace is 404.
	checkNamespace bool
}

// ruleKey is a route: method and path template (a struct, not a joined
// string, which would be built on every request).
type ruleKey struct{ method, path string }

// routeRules maps each route to its rule. A route missing here
// needs a valid key and nothing more (it can only answer 404 or 405).
// TestAuth_EveryRouteHasARule keeps it in step with the router.
func routeRules() map[ruleKey]routeRule {
	w := routeRule{perm: permWorker, checkNamespace: true}
	cl := routeRule{perm: permClient, checkNamespace: true}
	rd := routeRule{perm: permRead, checkNamespace: true}
	vw := routeRule{perm: permView, checkNamespace: true}
	anyKey := routeRule{perm: permAnyKey, checkNamespace: true}
	ad := routeRule{perm: permAdmin, checkNamespace: true}
	pub := routeRule{perm: permPublic}
	rules := map[ruleKey]routeRule{
		{"GET", "/healthz"}:       pub,
		{"GET", "/readyz"}:        pub,
		{"GET", "/metrics"}:       {perm: permMetrics},
		{"GET", "/openapi.json"}:  pub,
		{"GET", "/openapi.yaml"}:  pub,
		{"GET", "/docs"}:          pub,
		{"GET", "/docs/"}:         pub,
		{"GET", "/docs/doc.json"}: pub,
		{"GET", "/docs/doc.yaml"}: pub,
		{"GET", "/docs/*"}:        pub,

		{"POST", "/v1/namespaces"}:                 {perm: permGlobalAdmin},
		{"GET", "/v1/namespaces"}:                  {perm: permGlobalAdmin},
		{"PATCH", "/v1/namespaces/:namespace"}:     {perm: permAdmin},
		{"GET", "/v1/namespaces/:namespace"}:       {perm: permAdmin},
		{"DELETE", "/v1/namespaces/:namespace"}:    {perm: permGlobalAdmin},
		{"POST", BasePath + "/api-keys"}:           ad,
		{"GET", BasePath + "/api-keys"}:            ad,
		{"DELETE", BasePath + "/api-keys/:key_id"}: ad,
		{"GET", BasePath + "/caller"}:              anyKey,

		// Nexus endpoints: managed by global admins, resolved by callers.
		{"POST", "/v1/nexus/endpoints"}:              {perm: permGlobalAdmin},
		{"GET", "/v1/nexus/endpoints"}:               {perm: permGlobalAdmin},
		{"DELETE", "/v1/nexus/endpoints/:name"}:      {perm: permGlobalAdmin},
		{"GET", BasePath + "/nexus/endpoints/:name"}: anyKey,

		{"POST", BasePath + "/workflows"}:                            cl,
		{"GET", BasePath + "/workflows"}:                             vw,
		{"GET", BasePath + "/workflows/count"}:                       vw,
		{"POST", BasePath + "/search-attributes"}:                    ad,
		{"GET", BasePath + "/search-attributes"}:                     vw,
		{"DELETE", BasePath + "/search-attributes/:name"}:            ad,
		{"GET", BasePath + "/workflows/:instance_id"}:                vw,
		{"DELETE", BasePath + "/workflows/:instance_id"}:             ad,
		{"GET", BasePath + "/workflows/:instance_id/history"}:        rd,
		{"GET", BasePath + "/workflows/:instance_id/result"}:         vw,
		{"POST", BasePath + "/workflows/:instance_id/cancel"}:        cl,
		{"POST", BasePath + "/workflows/:instance_id/signals/:name"}: cl,
		{"POST", BasePath + "/workflows/:instance_id/queries/:name"}: cl,
		{"POST", BasePath + "/workflows/:instance_id/updates/:name"}: cl,
		{"POST", BasePath + "/query-tasks/poll"}:                     w,
		{"POST", BasePath + "/query-tasks/:query_id/answer"}:         w,
		{"POST", BasePath + "/workflow-tasks/poll"}:                  w,
		{"POST", BasePath + "/workflow-tasks/:token/complete"}:       w,
		{"POST", BasePath + "/workflow-tasks/:token/fail"}:           w,
		{"POST", BasePath + "/activity-tasks/poll"}:                  w,
		{"POST", BasePath + "/activity-tasks/:token/heartbeat"}:      w,
		{"POST", BasePath + "/activity-tasks/:token/complete"}:       w,
		{"POST", BasePath + "/activity-tasks/:token/fail"}:           w,
		{"POST", BasePath + "/activity-tasks/:token/abandon"}:        w,
		{"POST", BasePath + "/workers/heartbeat"}:                    w,
		{"GET", BasePath + "/workers"}:                               vw,
		{"GET", BasePath + "/workers/:worker_id"}:                    vw,
		{"GET", BasePath + "/task-queues/:name"}:                     vw,
		{"PUT", BasePath + "/task-queues/:name/limits"}:              ad,

		// The outcome of an update, by its id (GetWorkflowUpdateHandle).
		{"GET", BasePath + "/workflows/:instance_id/update-outcomes/:update_id"}: cl,

		// Issue 20: workflows that talk.
		{"POST", BasePath + "/schedules"}:                                                cl,
		{"GET", BasePath + "/schedules"}:                                                 vw,
		{"GET", BasePath + "/schedules/:schedule_id"}:                                    vw,
		{"PUT", BasePath + "/schedules/:schedule_id"}:                                    cl,
		{"DELETE", BasePath + "/schedules/:schedule_id"}:                                 cl,
		{"POST", BasePath + "/schedules/:schedule_id/pause"}:                             cl,
		{"POST", BasePath + "/schedules/:schedule_id/unpause"}:                           cl,
		{"POST", BasePath + "/schedules/:schedule_id/trigger"}:                           cl,
		{"POST", BasePath + "/schedules/:schedule_id/backfill"}:                          cl,
		{"POST", BasePath + "/workflows/:instance_id/terminate"}:                         cl,
		{"POST", BasePath + "/workflows/:instance_id/reset"}:                             cl,
		{"POST", BasePath + "/workflows/:instance_id/signal-with-start"}:                 cl,
		{"POST", BasePath + "/workflows/:instance_id/activities/:activity_id/complete"}:  cl,
		{"POST", BasePath + "/workflows/:instance_id/activities/:activity_id/fail"}:      cl,
		{"POST", BasePath + "/workflows/:instance_id/activities/:activity_id/heartbeat"}: cl,
		{"POST", BasePath + "/activity-tasks/:token/pending"}:                            w,
	}
	rules[ruleKey{http.MethodGet, uiPath}] = pub
	rules[ruleKey{http.MethodPost, uiPath}] = pub
	batchRouteRules(rules)
	return rules
}

// ruleOf is the rule of a route for the authorizer (auth.Options.Rule).
func (s *Server) ruleOf(method, route string) (auth.Rule, bool) {
	r, ok := s.rules[ruleKey{method, route}]
	return auth.Rule{Perm: r.perm, CheckNamespace: r.checkNamespace}, ok
}

// principal returns the caller's verified key (nil when auth is off).
func principal(c echo.Context) *storage.KeyRecord { return auth.Principal(c) }

// forbidden is the 403 answer to a key that may not make the request.
func forbidden() error { return auth.Forbidden() }

// routeNamespace is the route's namespace parameter, unescaped ("" when
// none or not a name).
func routeNamespace(c echo.Context) string { return auth.RouteNamespace(c) }

// WorkerSecretHeader carries a worker session's secret when authentication
// is off (auth.WorkerSecretHeader).
const WorkerSecretHeader = auth.WorkerSecretHeader

// callerOwner is who the caller is, as the owner of a worker session
// (auth.CallerOwner).
func callerOwner(c echo.Context) string { return auth.CallerOwner(c) }

// startsReady answers 429 with Retry-After when the caller's key may not
// start a workflow now (auth.Authorizer.StartsReady).
func (s *Server) startsReady(c echo.Context, ns string) error { return s.auth.StartsReady(c, ns) }

// chargeStarts counts n workflows the caller's key has started against
// its start rate (auth.Authorizer.ChargeStarts).
func (s *Server) chargeStarts(c echo.Context, ns string, n int) { s.auth.ChargeStarts(c, ns, n) }

// turnStarts is how many workflows a turn's commands start
// (auth.TurnStarts).
func turnStarts(cmds []api.Command) int { return auth.TurnStarts(cmds) }

// createAPIKey godoc
//
//	@Summary		Create an API key
//	@ID			createAPIKey
//	@Description	Creates a key of the given role in the namespace and answers it, this once: the server keeps only its hash. Send it as "Authorization: Bearer <key>". Needs an admin key of the namespace.
//	@Tags			api-keys
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string					true	"Namespace"	default(default)
//	@Param			request		body		api.CreateAPIKeyRequest	true	"The key's role"
//	@Success		201			{object}	api.CreateAPIKeyResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this"
//	@Failure		404			{object}	api.Problem	"Unknown namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/api-keys [post]
func (s *Server) createAPIKey(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.CreateAPIKeyRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	k, err := s.store.CreateAPIKey(c.Request().Context(), &storage.CreateAPIKeyParams{Namespace: ns, Role: req.Role, Name: req.Name})
	if err != nil {
		return err
	}
	s.logger.Info("api key created", "namespace", ns, "key_id", k.ID, "role", k.Role, "by", callerID(c))
	return c.JSON(http.StatusCreated, k)
}

// callerID names the caller's key in logs ("" when auth is off).
func callerID(c echo.Context) string {
	if k := principal(c); k != nil {
		return k.ID
	}
	return ""
}

// seesGlobalKeys reports whether the caller may list and revoke the keys of
// every namespace: an admin key of every namespace, or anyone with auth off.
func seesGlobalKeys(c echo.Context) bool {
	k := principal(c)
	return k == nil || k.Namespace == api.AllNamespaces && k.Role == api.RoleAdmin
}

// listAPIKeys godoc
//
//	@Summary		List API keys
//	@ID			listAPIKeys
//	@Description	The keys of the namespace (and, for an admin key of every namespace, the keys of every namespace), newest first, without their secrets. Needs an admin key of the namespace.
//	@Tags			api-keys
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Success		200			{object}	api.ListAPIKeysResponse
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this"
//	@Failure		404			{object}	api.Problem	"Unknown namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/api-keys [get]
func (s *Server) listAPIKeys(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	if err := b.err(); err != nil {
		return err
	}
	keys, err := s.store.ListAPIKeys(c.Request().Context(), &storage.ListAPIKeysParams{Namespace: ns, WithGlobal: seesGlobalKeys(c)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.ListAPIKeysResponse{Keys: keys.Keys})
}

// revokeAPIKey godoc
//
//	@Summary		Revoke an API key
//	@ID			revokeAPIKey
//	@Description	The key stops working at once on this server, and within the key cache's bound (5s by default) on the others. Needs an admin key of the namespace (of every namespace for a key of every namespace).
//	@Tags			api-keys
//	@Produce		application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"	default(default)
//	@Param			key_id		path	string	true	"The key's id"
//	@Success		204
//	@Failure		400	{object}	api.Problem	"Invalid request"
//	@Failure		401	{object}	api.Problem	"No valid API key"
//	@Failure		403	{object}	api.Problem	"The key may not do this"
//	@Failure		404	{object}	api.Problem	"Unknown namespace or key (or revoked already)"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/api-keys/{key_id} [delete]
func (s *Server) revokeAPIKey(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	id := b.param("key_id", "required")
	b.check(validKeyID(id), "key_id", "must be 16 lowercase hexadecimal digits")
	if err := b.err(); err != nil {
		return err
	}
	if err := s.store.RevokeAPIKey(c.Request().Context(), &storage.RevokeAPIKeyParams{Namespace: ns, ID: id, WithGlobal: seesGlobalKeys(c)}); err != nil {
		return err
	}
	s.auth.ForgetKey(id)
	s.logger.Info("api key revoked", "namespace", ns, "key_id", id, "by", callerID(c))
	return c.NoContent(http.StatusNoContent)
}

// validKeyID reports whether id is shaped as an API key's id.
func validKeyID(id string) bool {
	_, _, ok := store.ParseAPIKey("tk_" + id + "_" + strings.Repeat("A", 43))
	return ok
}

// caller godoc
//
//	@Summary		Who the caller is
//	@ID			caller
//	@Description	The request's API key: its id, namespace and role, so that a program (the web UI) offers only what the key may do. Any valid key of the namespace may ask. Without authentication (auth_required false) anyone may do anything and the key fields are absent.
//	@Tags			api-keys
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Success		200			{object}	api.Caller
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key is of another namespace"
//	@Failure		404			{object}	api.Problem	"Unknown namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/caller [get]
func (s *Server) caller(c echo.Context) error {
	b := s.bind(c)
	b.namespace()
	if err := b.err(); err != nil {
		return err
	}
	k := principal(c)
	if k == nil {
		return c.JSON(http.StatusOK, api.Caller{AuthRequired: s.cfg.Auth.Required})
	}
	return c.JSON(http.StatusOK, api.Caller{AuthRequired: true, KeyID: k.ID, KeyNamespace: k.Namespace, Role: k.Role})
}
