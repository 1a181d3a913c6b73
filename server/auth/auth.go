// Package auth is the server's authentication and authorization: API keys
// verified and cached, the permission each route requires of a key's
// role and namespace, the namespace's existence, the rate limits per key
// and per client address, and the owners of worker sessions. It knows no
// route: package server gives it each route's rule (Options.Rule) and
// the store's lookups, and it never imports package server.
package auth

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
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/store"
)

// ProblemUnauthorized is the problem type of a 401 answer: no valid API
// key.
const ProblemUnauthorized = api.ProblemBase + "unauthorized"

// Config is the authentication and authorization of a server.
type Config struct {
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
	// worker's own limit, the server's HeartbeatRate). Defaults 2000/s and
	// 4000; a negative rate disables the limit. Without auth there is no
	// such limit.
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

// WithDefaults returns a with each zero field set to its default.
func (a Config) WithDefaults() Config {
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

// Perm is what a route requires of the caller's key.
type Perm uint8

const (
	// PermPublic needs no key (health, readiness, API documents).
	PermPublic Perm = iota
	// PermWorker needs a worker or admin key of the route's namespace.
	PermWorker
	// PermClient needs a client or admin key of the route's namespace.
	PermClient
	// PermRead needs a worker, client, reader or admin key of the route's
	// namespace (an execution's history, which a worker reads to replay a
	// turn whose history did not fit one answer, or whose state it lost).
	PermRead
	// PermView needs a client, reader or admin key of the route's namespace
	// (reading workflows, workers and task queues; it changes nothing).
	PermView
	// PermAnyKey needs any valid key of the route's namespace (who the caller
	// is: GET /caller).
	PermAnyKey
	// PermAdmin needs an admin key of the route's namespace.
	PermAdmin
	// PermGlobalAdmin needs an admin key of every namespace.
	PermGlobalAdmin
	// PermMetrics is the rule of /metrics (public unless Config.MetricsAuth, then admin).
	PermMetrics
)

// Rule is what one route requires.
type Rule struct {
	// Perm is what the route requires of the caller's key.
	Perm Perm
	// CheckNamespace: the route is under a namespace, and a request under
	// an unknown namespace is 404.
	CheckNamespace bool
}

// Options are what an Authorizer needs of the server.
type Options struct {
	// Config is the authentication's configuration, defaults filled in.
	Config Config
	// Rule returns the rule of the route of that method and path
	// template; known is false for a route without one, which needs a
	// valid key and nothing more (it can only answer 404 or 405).
	Rule func(method, route string) (rule Rule, known bool)
	// LookupKey reads the API key of that id (storage.ErrNotFound: none).
	LookupKey func(ctx context.Context, id string) (storage.KeyRecord, error)
	// NamespaceKnown reports whether namespace ns exists.
	NamespaceKnown func(ctx context.Context, ns string) (bool, error)
	// StartRoute and HeartbeatRoute are the route templates of the POST
	// requests limited per API key: the workflow start
	// (Config.StartRate) and the worker heartbeat
	// (Config.KeyHeartbeatRate).
	StartRoute, HeartbeatRoute string
}

// Authorizer authenticates and authorizes requests (Middleware) and
// keeps what that needs: the keys verified recently, the rate limiters
// per key and per client address, and the owners of worker sessions.
type Authorizer struct {
	opts Options
	keys *keyCache
	// starts and keyBeats limit starts and heartbeats per API key;
	// unauth limits the requests without a verified key per client
	// address (Config.UnauthRate).
	starts, keyBeats, unauth *edge.Limiter
	// Owners are the owners of worker sessions (CheckWorkerOwner's
	// cache).
	Owners *Owners
}

// New returns the Authorizer of opts.
func New(opts Options) *Authorizer {
	cfg := opts.Config
	return &Authorizer{
		opts:     opts,
		keys:     newKeyCache(cfg.CacheTTL, opts.LookupKey),
		starts:   edge.NewLimiter(cfg.StartRate, cfg.StartBurst),
		keyBeats: edge.NewLimiter(cfg.KeyHeartbeatRate, cfg.KeyHeartbeatBurst),
		unauth:   edge.NewLimiter(cfg.UnauthRate, cfg.UnauthBurst),
		Owners:   NewOwners(),
	}
}

// principalKey holds the caller's *storage.KeyRecord in the echo context.
const principalKey = "tether.principal"

// Principal returns the caller's verified key (nil when auth is off).
func Principal(c echo.Context) *storage.KeyRecord {
	k, _ := c.Get(principalKey).(*storage.KeyRecord)
	return k
}

// unauthorized is the 401 answer, with its WWW-Authenticate header.
func unauthorized(c echo.Context) error {
	c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Bearer realm="tether"`)
	// The same answer for a missing, malformed, unknown, revoked or wrong
	// key: nothing that tells a guesser how close it came.
	return edge.NewProblem(http.StatusUnauthorized, ProblemUnauthorized, "Unauthorized",
		`A valid API key is required: "Authorization: Bearer <key>".`)
}

// Forbidden is the 403 answer to a key whose role or namespace does not
// allow the request.
func Forbidden() error {
	return edge.NewProblem(http.StatusForbidden, edge.ProblemForbidden, "Forbidden",
		"The API key's role or namespace does not allow this request.")
}

// allows reports whether key k may call a route requiring p in namespace ns.
func allows(k *storage.KeyRecord, p Perm, ns string) bool {
	if p == PermGlobalAdmin || p == PermMetrics {
		return k.Role == api.RoleAdmin && (p == PermMetrics || k.Namespace == api.AllNamespaces)
	}
	if k.Namespace != api.AllNamespaces && k.Namespace != ns {
		return false
	}
	switch k.Role {
	case api.RoleAdmin:
		return true
	case api.RoleWorker:
		return p == PermWorker || p == PermRead || p == PermAnyKey
	case api.RoleClient:
		return p == PermClient || p == PermView || p == PermRead || p == PermAnyKey
	case api.RoleReader:
		return p == PermView || p == PermRead || p == PermAnyKey
	}
	return false
}

// RouteNamespace is the route's namespace parameter, unescaped ("" when
// the route has none or it is not a valid name: the handler answers 400).
func RouteNamespace(c echo.Context) string {
	ns := c.Param("namespace")
	if strings.IndexByte(ns, '%') >= 0 {
		u, err := url.PathUnescape(ns)
		if err != nil {
			return ""
		}
		ns = u
	}
	if !edge.ValidName(ns) {
		return ""
	}
	return ns
}

// Middleware is the middleware of authentication (401), authorization
// (403) and namespace existence (404), and of the rate limits per key
// (429). It runs after routing, so it knows the route's template.
func (a *Authorizer) Middleware(next echo.HandlerFunc) echo.HandlerFunc {
	cfg := a.opts.Config
	return func(c echo.Context) error {
		method := c.Request().Method
		if method == http.MethodHead {
			method = http.MethodGet // HEAD is GET without the body: GET's rule
		}
		rule, known := a.opts.Rule(method, c.Path())
		if rule.Perm == PermPublic && known || rule.Perm == PermMetrics && !cfg.MetricsAuth {
			return next(c)
		}
		ns := RouteNamespace(c)
		if cfg.Required {
			k, err := a.authenticate(c)
			if err != nil {
				return err
			}
			if known && !allows(k, rule.Perm, ns) {
				return Forbidden()
			}
			c.Set(principalKey, k)
		}
		if known && rule.CheckNamespace && ns != "" {
			ok, err := a.opts.NamespaceKnown(c.Request().Context(), ns)
			if err != nil {
				return err
			}
			if !ok {
				return edge.NewProblem(http.StatusNotFound, api.ProblemNotFound, "Not found", "No such namespace.")
			}
		}
		if err := a.limitPerKey(c, ns); err != nil {
			return err
		}
		return next(c)
	}
}

// limitPerKey answers 429 with Retry-After to a workflow start or worker
// heartbeat over its key's rate.
func (a *Authorizer) limitPerKey(c echo.Context, ns string) error {
	k := Principal(c)
	if k == nil || c.Request().Method != http.MethodPost {
		return nil
	}
	var l *edge.Limiter
	var what string
	switch c.Path() {
	case a.opts.StartRoute:
		l, what = a.starts, "starts workflows"
	case a.opts.HeartbeatRoute:
		l, what = a.keyBeats, "sends worker heartbeats"
	default:
		return nil
	}
	ok, retry, _ := l.Allow(ns, k.ID, time.Now(), false)
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", edge.RetryAfterSeconds(retry))
	return edge.NewProblem(http.StatusTooManyRequests, api.ProblemRateLimited, "Too many requests",
		"this API key "+what+" too often; retry after "+retry.Round(time.Millisecond).String())
}

// authenticate verifies the request's bearer key (401 when it cannot).
func (a *Authorizer) authenticate(c echo.Context) (*storage.KeyRecord, error) {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	scheme, token, ok := strings.Cut(h, " ")
	ok = ok && strings.EqualFold(scheme, "Bearer")
	var id string
	var hash [32]byte
	if ok {
		id, hash, ok = store.ParseAPIKey(strings.TrimSpace(token))
	}
	if !ok || !a.keys.fresh(id) {
		if err := a.limitUnauthenticated(c); err != nil {
			return nil, err
		}
	}
	if !ok {
		return nil, unauthorized(c)
	}
	rec, found, err := a.keys.get(c.Request().Context(), id)
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

// limitUnauthenticated answers 429 with Retry-After to a request without
// a recently verified key from a client address over Config.UnauthRate.
func (a *Authorizer) limitUnauthenticated(c echo.Context) error {
	addr := c.Request().RemoteAddr
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	ok, retry, _ := a.unauth.Allow(addr, "", time.Now(), false)
	if ok {
		return nil
	}
	c.Response().Header().Set("Retry-After", edge.RetryAfterSeconds(retry))
	return edge.NewProblem(http.StatusTooManyRequests, api.ProblemRateLimited, "Too many requests",
		"too many requests without a valid API key from this address; retry after "+retry.Round(time.Millisecond).String())
}

// ForgetKey drops key id from the cache (revoked through this server).
func (a *Authorizer) ForgetKey(id string) { a.keys.forget(id) }

// ForgetNamespace drops what is cached of namespace ns (deleted): its
// keys and the owners of its worker sessions.
func (a *Authorizer) ForgetNamespace(ns string) {
	a.keys.forgetNamespace(ns)
	a.Owners.ForgetNamespace(ns)
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
