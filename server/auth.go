package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// Problem types of authentication and authorization.
const (
	ProblemUnauthorized    = problemBase + "unauthorized"
	ProblemForbidden       = problemBase + "forbidden"
	ProblemNamespaceExists = problemBase + "namespace-exists"
	ProblemNamespaceInUse  = problemBase + "namespace-not-empty"
)

// AuthConfig is the authentication and authorization of a Server.
type AuthConfig struct {
	// Required, when true, makes every route but /healthz, /readyz, the API
	// documents (/openapi.*, /docs) and, unless MetricsAuth, /metrics
	// require an API key ("Authorization: Bearer <key>") whose role and
	// namespace allow the route. When false, anyone may call anything (the
	// `tether server` command refuses that unless --insecure-no-auth).
	Required bool
	// MetricsAuth makes /metrics require an admin key too (with Required).
	MetricsAuth bool
	// CacheTTL bounds how long the server trusts what it read of the
	// database without reading it again: a verified key (so a key revoked
	// through another replica stops working within CacheTTL; through this
	// one, at once) and the set of known namespaces (a namespace created
	// or deleted through another replica). Default 5s.
	CacheTTL time.Duration
	// StartRate and StartBurst rate-limit the workflow starts of each API
	// key (per second, token bucket; in memory, so per server replica);
	// over the limit a start gets 429 with Retry-After. Defaults 1000/s and
	// 2000; a negative rate disables the limit. Without auth there is no
	// such limit.
	StartRate  float64
	StartBurst int
	// KeyHeartbeatRate and KeyHeartbeatBurst rate-limit the worker
	// heartbeats of each API key, all its workers together (on top of each
	// worker's own limit, Config.HeartbeatRate). Defaults 2000/s and 4000; a
	// negative rate disables the limit. Without auth there is no such limit.
	KeyHeartbeatRate  float64
	KeyHeartbeatBurst int
	// UnauthRate and UnauthBurst rate-limit, per client address (the
	// connection's peer, not a forwarded header), the requests that do not
	// carry a key this replica verified recently: a missing, malformed,
	// unknown or not yet cached key. They are counted before the key is
	// looked up, so a flood of made-up keys costs no database read past
	// the limit; over it, 429 with Retry-After. Defaults 100/s and 200; a
	// negative rate disables the limit.
	UnauthRate  float64
	UnauthBurst int
}

func (a AuthConfig) withDefaults() AuthConfig {
	if a.CacheTTL <= 0 {
		a.CacheTTL = 5 * time.Second
	}
	if a.StartRate == 0 {
		a.StartRate = 1000
	}
	if a.StartBurst <= 0 {
		a.StartBurst = 2000
	}
	if a.KeyHeartbeatRate == 0 {
		a.KeyHeartbeatRate = 2000
	}
	if a.KeyHeartbeatBurst <= 0 {
		a.KeyHeartbeatBurst = 4000
	}
	if a.UnauthRate == 0 {
		a.UnauthRate = 100
	}
	if a.UnauthBurst <= 0 {
		a.UnauthBurst = 200
	}
	return a
}

// perm is what a route requires of the caller's key.
type perm uint8

const (
	// permPublic: no key (health, readiness, API documents).
	permPublic perm = iota
	// permWorker: a worker or admin key of the route's namespace.
	permWorker
	// permClient: a client or admin key of the route's namespace.
	permClient
	// permRead: a worker, client, reader or admin key of the route's
	// namespace (an execution's history, which a worker reads to replay a
	// turn whose history did not fit one answer, or whose state it lost).
	permRead
	// permView: a client, reader or admin key of the route's namespace
	// (reading workflows, workers and task queues; it changes nothing).
	permView
	// permAnyKey: any valid key of the route's namespace (who the caller
	// is: GET /caller).
	permAnyKey
	// permAdmin: an admin key of the route's namespace.
	permAdmin
	// permGlobalAdmin: an admin key of every namespace.
	permGlobalAdmin
	// permMetrics: /metrics (public unless AuthConfig.MetricsAuth, then admin).
	permMetrics
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

// principalKey holds the caller's *storage.KeyRecord in the echo context.
const principalKey = "tether.principal"

// principal returns the caller's verified key (nil when auth is off).
func principal(c echo.Context) *storage.KeyRecord {
	k, _ := c.Get(principalKey).(*storage.KeyRecord)
	return k
}

func unauthorized(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="tether"`)
	// The same answer for a missing, malformed, unknown, revoked or wrong
	// key: nothing that tells a guesser how close it came.
	return newProblem(http.StatusUnauthorized, ProblemUnauthorized, "Unauthorized",
		`A valid API key is required: "Authorization: Bearer <key>".`)
}

func forbidden() error {
	return newProblem(http.StatusForbidden, ProblemForbidden, "Forbidden",
		"The API key's role or namespace does not allow this request.")
}

// allows reports whether key k may call a route requiring p in namespace ns.
func allows(k *storage.KeyRecord, p perm, ns string) bool {
	if p == permGlobalAdmin || p == permMetrics {
		return k.Role == api.RoleAdmin && (p == permMetrics || k.Namespace == api.AllNamespaces)
	}
	if k.Namespace != api.AllNamespaces && k.Namespace != ns {
		return false
	}
	switch k.Role {
	case api.RoleAdmin:
		return true
	case api.RoleWorker:
		return p == permWorker || p == permRead || p == permAnyKey
	case api.RoleClient:
		return p == permClient || p == permView || p == permRead || p == permAnyKey
	case api.RoleReader:
		return p == permView || p == permRead || p == permAnyKey
	}
	return false
}

// routeNamespace is the route's namespace parameter, unescaped ("" when
// the route has none or it is not a valid name: the handler answers 400).
func routeNamespace(c echo.Context) string {
	ns := c.Param("namespace")
	if strings.IndexByte(ns, '%') >= 0 {
		u, err := url.PathUnescape(ns)
		if err != nil {
			return ""
		}
		ns = u
	}
	if !validName(ns) {
		return ""
	}
	return ns
}

// authorize is the middleware of authentication (401), authorization
// (403) and namespace existence (404). It runs after routing, so it knows
// the route's template.
func (s *Server) authorize(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		method := c.Request().Method
		if method == http.MethodHead {
			method = http.MethodGet // HEAD is GET without the body: GET's rule
		}
		rule, known := s.rules[ruleKey{method, c.Path()}]
		if rule.perm == permPublic && known || rule.perm == permMetrics && !s.cfg.Auth.MetricsAuth {
			return next(c)
		}
		ns := routeNamespace(c)
		if s.cfg.Auth.Required {
			k, err := s.authenticate(c)
			if err != nil {
				return err
			}
			if known && !allows(k, rule.perm, ns) {
				return forbidden()
			}
			c.Set(principalKey, k)
		}
		if known && rule.checkNamespace && ns != "" {
			ok, err := s.namespaces.known(c.Request().Context(), ns)
			if err != nil {
				return err
			}
			if !ok {
				return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", "No such namespace.")
			}
		}
		if err := s.limitPerKey(c, ns); err != nil {
			return err
		}
		return next(c)
	}
}

// Routes limited per API key.
var (
	routeStart = ruleKey{http.MethodPost, BasePath + "/workflows"}
	routeBeat  = ruleKey{http.MethodPost, routeWorkerBeat}
)

// limitPerKey answers 429 with Retry-After to a workflow start or worker
// heartbeat over its key's rate.
func (s *Server) limitPerKey(c echo.Context, ns string) error {
	k := principal(c)
	if k == nil {
		return nil
	}
	route := ruleKey{c.Request().Method, c.Path()}
	var l *heartbeatLimiter
	var what string
	switch route {
	case routeStart:
		l, what = s.startLimiter, "starts workflows"
	case routeBeat:
		l, what = s.keyBeatLimiter, "sends worker heartbeats"
	default:
		return nil
	}
	ok, retry, _ := l.allow(ns, k.ID, time.Now(), false)
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", retryAfterSeconds(retry))
	return newProblem(http.StatusTooManyRequests, ProblemRateLimited, "Too many requests",
		"this API key "+what+" too often; retry after "+retry.Round(time.Millisecond).String())
}

// authenticate verifies the request's bearer key (401 when it cannot).
func (s *Server) authenticate(c echo.Context) (*storage.KeyRecord, error) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	var id string
	var hash [32]byte
	if ok {
		id, hash, ok = store.ParseAPIKey(strings.TrimSpace(token))
	}
	if !ok || !s.keys.fresh(id) {
		if err := s.limitUnauthenticated(c); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, unauthorized(c)
	}
	rec, found, err := s.keys.get(c.Request().Context(), id)
	if err != nil {
		return nil, err
	}
	if !found {
		// Compare anyway, so that an unknown id costs what a known one
		// does.
		rec = &storage.KeyRecord{Revoked: true}
	}
	if subtle.ConstantTimeCompare(rec.SecretHash[:], hash[:]) != 1 || rec.Revoked {
		return nil, unauthorized(c)
	}
	return rec, nil
}

// keyCache holds the keys verified recently, and the ids found unknown, for
// at most ttl: a request with a known key costs no database query.
type keyCache struct {
	ttl    time.Duration
	lookup func(ctx context.Context, id string) (storage.KeyRecord, error)
	now    func() time.Time

	mu sync.RWMutex
	m  map[string]keyEntry
}

type keyEntry struct {
	rec   *storage.KeyRecord // nil: no such key
	until time.Time
}

// maxCachedKeys bounds the cache (unknown ids included, which a guesser
// can make up at will); past it, expired entries go, and if none has,
// everything does.
const maxCachedKeys = 10000

func newKeyCache(ttl time.Duration, lookup func(context.Context, string) (storage.KeyRecord, error)) *keyCache {
	return &keyCache{ttl: ttl, lookup: lookup, now: time.Now, m: make(map[string]keyEntry)}
}

// fresh reports whether the cache holds a valid key of that id read less
// than ttl ago (a request with it costs no database read).
func (k *keyCache) fresh(id string) bool {
	k.mu.RLock()
	e, ok := k.m[id]
	k.mu.RUnlock()
	return ok && e.rec != nil && k.now().Before(e.until)
}

// limitUnauthenticated answers 429 with Retry-After to a request without
// a recently verified key from a client address over
// AuthConfig.UnauthRate.
func (s *Server) limitUnauthenticated(c echo.Context) error {
	addr := c.Request().RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	ok, retry, _ := s.unauthLimiter.allow(addr, "", time.Now(), false)
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", retryAfterSeconds(retry))
	return newProblem(http.StatusTooManyRequests, ProblemRateLimited, "Too many requests",
		"too many requests without a valid API key from this address; retry after "+retry.Round(time.Millisecond).String())
}

// get returns the key of that id (found false: none), from the cache when
// it was read less than ttl ago.
func (k *keyCache) get(ctx context.Context, id string) (*storage.KeyRecord, bool, error) {
	now := k.now()
	k.mu.RLock()
	e, ok := k.m[id]
	k.mu.RUnlock()
	if ok && now.Before(e.until) {
		return e.rec, e.rec != nil, nil
	}
	rec, err := k.lookup(ctx, id)
	e = keyEntry{until: now.Add(k.ttl)}
	switch {
	case errors.Is(err, storage.ErrNotFound):
	case err != nil:
		return nil, false, err
	default:
		e.rec = &rec
	}
	k.mu.Lock()
	if len(k.m) >= maxCachedKeys {
		for id, old := range k.m {
			if !now.Before(old.until) {
				delete(k.m, id)
			}
		}
		if len(k.m) >= maxCachedKeys {
			clear(k.m)
		}
	}
	k.m[id] = e
	k.mu.Unlock()
	return e.rec, e.rec != nil, nil
}

// forgetNamespace drops the keys of namespace ns (deleted with it).
func (k *keyCache) forgetNamespace(ns string) {
	k.mu.Lock()
	for id, e := range k.m {
		if e.rec != nil && e.rec.Namespace == ns {
			delete(k.m, id)
		}
	}
	k.mu.Unlock()
}

// forget drops key id from the cache (revoked through this server).
func (k *keyCache) forget(id string) {
	k.mu.Lock()
	delete(k.m, id)
	k.mu.Unlock()
}

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
	s.keys.forget(id)
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
