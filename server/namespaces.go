package server

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// namespaceCache is the set of known namespaces, read from the database at
// most once per ttl (and, for a name it does not hold, at most once per
// missInterval), so that the check on every request is a map lookup.
// Namespaces created or deleted through this server are seen at once;
// through another replica, within ttl.
type namespaceCache struct {
	ttl  time.Duration
	load func(ctx context.Context) ([]string, error)
	now  func() time.Time

	snap atomic.Pointer[nsSnapshot]
	mu   sync.Mutex // serializes loads
}

type nsSnapshot struct {
	names map[string]struct{}
	at    time.Time
}

func newNamespaceCache(ttl time.Duration, load func(context.Context) ([]string, error)) *namespaceCache {
	return &namespaceCache{ttl: ttl, load: load, now: time.Now}
}

// missInterval bounds how often a name the cache does not hold reloads it.
func (n *namespaceCache) missInterval() time.Duration { return min(n.ttl, time.Second) }

// known reports whether namespace ns exists.
func (n *namespaceCache) known(ctx context.Context, ns string) (bool, error) {
	now := n.now()
	if s := n.snap.Load(); s != nil {
		_, ok := s.names[ns]
		age := now.Sub(s.at)
		if ok && age < n.ttl || !ok && age < n.missInterval() {
			return ok, nil
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	// Another request may have loaded it while this one waited.
	if s := n.snap.Load(); s != nil {
		_, ok := s.names[ns]
		if age := n.now().Sub(s.at); ok && age < n.ttl || !ok && age < n.missInterval() {
			return ok, nil
		}
	}
	names, err := n.load(ctx)
	if err != nil {
		if s := n.snap.Load(); s != nil {
			if _, ok := s.names[ns]; ok {
				return true, nil // known a moment ago: the request itself will meet the database
			}
		}
		return false, err
	}
	s := &nsSnapshot{names: make(map[string]struct{}, len(names)), at: now}
	for _, name := range names {
		s.names[name] = struct{}{}
	}
	n.snap.Store(s)
	_, ok := s.names[ns]
	return ok, nil
}

// invalidate makes the next check read the database.
// It waits for a load in flight, so that the load cannot store what it
// read before the change.
func (n *namespaceCache) invalidate() {
	n.mu.Lock()
	n.snap.Store(nil)
	n.mu.Unlock()
}

// namespaceRoutes adds the routes of namespaces and API keys to e.
func (s *Server) namespaceRoutes(e *echo.Echo) {
	e.POST("/v1/namespaces", s.createNamespace)
	getAndHead(e, "/v1/namespaces", s.listNamespaces)
	getAndHead(e, "/v1/namespaces/:namespace", s.getNamespace)
	e.PATCH("/v1/namespaces/:namespace", s.updateNamespace)
	e.DELETE("/v1/namespaces/:namespace", s.deleteNamespace)
	e.POST(BasePath+"/api-keys", s.createAPIKey)
	getAndHead(e, BasePath+"/api-keys", s.listAPIKeys)
	e.DELETE(BasePath+"/api-keys/:key_id", s.revokeAPIKey)
	getAndHead(e, BasePath+"/caller", s.caller)
}

// createNamespace godoc
//
//	@Summary		Create a namespace
//	@ID			createNamespace
//	@Description	Needs an admin key of every namespace. A namespace of that name exists → 409.
//	@Tags			namespaces
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			request	body		api.CreateNamespaceRequest	true	"The namespace"
//	@Success		201		{object}	api.Namespace
//	@Failure		400		{object}	api.Problem	"Invalid request"
//	@Failure		401		{object}	api.Problem	"No valid API key"
//	@Failure		403		{object}	api.Problem	"The key may not do this"
//	@Failure		409		{object}	api.Problem	"The namespace exists"
//	@Failure		500		{object}	api.Problem
//	@Router			/v1/namespaces [post]
func (s *Server) createNamespace(c echo.Context) error {
	b := s.bind(c)
	var req api.CreateNamespaceRequest
	b.body(&req)
	if req.Retention != nil {
		b.retention(*req.Retention, false)
	}
	if err := b.err(); err != nil {
		return err
	}
	n, err := s.store.CreateNamespace(c.Request().Context(), req)
	if errors.Is(err, storage.ErrNamespaceExists) {
		return newProblem(http.StatusConflict, ProblemNamespaceExists, "Namespace exists",
			"A namespace of this name exists already.")
	}
	if err != nil {
		return err
	}
	s.namespaces.invalidate()
	s.logger.Info("namespace created", "namespace", n.Name, "by", callerID(c))
	return c.JSON(http.StatusCreated, n)
}

// listNamespaces godoc
//
//	@Summary		List namespaces
//	@ID			listNamespaces
//	@Description	Needs an admin key of every namespace.
//	@Tags			namespaces
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Success		200	{object}	api.ListNamespacesResponse
//	@Failure		401	{object}	api.Problem	"No valid API key"
//	@Failure		403	{object}	api.Problem	"The key may not do this"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/namespaces [get]
func (s *Server) listNamespaces(c echo.Context) error {
	ns, err := s.store.ListNamespaces(c.Request().Context(), &storage.ListNamespacesParams{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.ListNamespacesResponse{Namespaces: ns})
}

// getNamespace godoc
//
//	@Summary		Describe a namespace
//	@ID			getNamespace
//	@Description	Needs an admin key of the namespace.
//	@Tags			namespaces
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Success		200			{object}	api.Namespace
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this"
//	@Failure		404			{object}	api.Problem	"Unknown namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace} [get]
func (s *Server) getNamespace(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	if err := b.err(); err != nil {
		return err
	}
	list, err := s.store.ListNamespaces(c.Request().Context(), &storage.ListNamespacesParams{Name: ns})
	if errors.Is(err, storage.ErrNotFound) {
		return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", "No such namespace.")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, list[0])
}

// Bounds of a namespace's retention.
const (
	minRetention = time.Minute
	maxRetention = 87600 * time.Hour
)

// retention checks a retention: within bounds, or 0 when clearing is
// allowed.
func (b *binder) retention(d api.Duration, clear bool) {
	if clear && d == 0 {
		return
	}
	if d.D() < minRetention || d.D() > maxRetention {
		b.add("retention", "must be between %s and %s", minRetention, maxRetention)
	}
}

// updateNamespace godoc
//
//	@Summary		Update a namespace
//	@ID			updateNamespace
//	@Description	Sets the description and/or the retention of closed workflows ("0s" removes the retention: closed workflows are kept). Needs an admin key of the namespace.
//	@Tags			namespaces
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string						true	"Namespace"	default(default)
//	@Param			request		body		api.UpdateNamespaceRequest	true	"What to change"
//	@Success		200			{object}	api.Namespace
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this"
//	@Failure		404			{object}	api.Problem	"Unknown namespace"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace} [patch]
func (s *Server) updateNamespace(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.UpdateNamespaceRequest
	b.body(&req)
	if req.Retention != nil {
		b.retention(*req.Retention, true)
	}
	if err := b.err(); err != nil {
		return err
	}
	n, err := s.store.UpdateNamespace(c.Request().Context(), &storage.UpdateNamespaceParams{Name: ns, Request: req})
	if errors.Is(err, storage.ErrNotFound) {
		return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", "No such namespace.")
	}
	if err != nil {
		return err
	}
	s.logger.Info("namespace updated", "namespace", ns, "by", callerID(c))
	return c.JSON(http.StatusOK, n)
}

// deleteNamespace godoc
//
//	@Summary		Delete a namespace
//	@ID			deleteNamespace
//	@Description	Deletes an empty namespace with its worker sessions and API keys. A namespace that still holds workflow instances → 409 (delete them first); the namespace "default" cannot be deleted (409). Another server replica may accept requests under the namespace for up to its cache bound (5s by default). Needs an admin key of every namespace.
//	@Tags			namespaces
//	@Produce		application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"
//	@Success		204
//	@Failure		400	{object}	api.Problem	"Invalid request"
//	@Failure		401	{object}	api.Problem	"No valid API key"
//	@Failure		403	{object}	api.Problem	"The key may not do this"
//	@Failure		404	{object}	api.Problem	"Unknown namespace"
//	@Failure		409	{object}	api.Problem	"The namespace holds workflow instances, or is default"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/namespaces/{namespace} [delete]
func (s *Server) deleteNamespace(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	if err := b.err(); err != nil {
		return err
	}
	if ns == "default" {
		return newProblem(http.StatusConflict, ProblemNamespaceInUse, "Namespace in use",
			"The default namespace cannot be deleted.")
	}
	err := s.store.DeleteNamespace(c.Request().Context(), ns)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return newProblem(http.StatusNotFound, ProblemNotFound, "Not found", "No such namespace.")
	case errors.Is(err, storage.ErrNamespaceNotEmpty):
		return newProblem(http.StatusConflict, ProblemNamespaceInUse, "Namespace not empty",
			"The namespace still holds workflow instances; delete them first.")
	case err != nil:
		return err
	}
	s.namespaces.invalidate()
	s.auth.ForgetNamespace(ns)
	s.logger.Info("namespace deleted", "namespace", ns, "by", callerID(c))
	return c.NoContent(http.StatusNoContent)
}
