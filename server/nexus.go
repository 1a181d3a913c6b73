package server

import (
	"errors"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/storage"
)

// nexusRoutes adds the routes of Nexus endpoints to e: managed by global
// admins, resolved by any key of the caller's namespace.
func (s *Server) nexusRoutes(e *echo.Echo) {
	e.POST("/v1/nexus/endpoints", s.createNexusEndpoint)
	getAndHead(e, "/v1/nexus/endpoints", s.listNexusEndpoints)
	e.DELETE("/v1/nexus/endpoints/:name", s.deleteNexusEndpoint)
	getAndHead(e, BasePath+"/nexus/endpoints/:name", s.getNexusEndpoint)
}

// createNexusEndpoint godoc
//
//	@Summary		Create a Nexus endpoint
//	@ID			createNexusEndpoint
//	@Description	Maps an endpoint name to the namespace and task queue whose workers handle its operations (Temporal's `operator nexus endpoint create`). Needs an admin key of every namespace. An endpoint of that name exists → 409.
//	@Tags			nexus
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			request	body		api.CreateNexusEndpointRequest	true	"The endpoint"
//	@Success		201		{object}	api.NexusEndpoint
//	@Failure		400		{object}	api.Problem	"Invalid request"
//	@Failure		401		{object}	api.Problem	"No valid API key"
//	@Failure		403		{object}	api.Problem	"The key may not do this"
//	@Failure		409		{object}	api.Problem	"The endpoint exists"
//	@Failure		500		{object}	api.Problem
//	@Router			/v1/nexus/endpoints [post]
func (s *Server) createNexusEndpoint(c echo.Context) error {
	b := s.bind(c)
	var req api.CreateNexusEndpointRequest
	b.body(&req)
	if err := b.err(); err != nil {
		return err
	}
	out, err := s.store.NexusEndpoints(c.Request().Context(), &storage.NexusEndpointsParams{Create: &req})
	if errors.Is(err, storage.ErrNexusEndpointExists) {
		return newProblem(http.StatusConflict, api.ProblemAlreadyExists, "Endpoint exists",
			"A Nexus endpoint of this name exists already.")
	}
	if err != nil {
		return err
	}
	s.logger.Info("nexus endpoint created", "endpoint", req.Name, "target_namespace", req.TargetNamespace,
		"target_task_queue", req.TargetTaskQueue, "by", callerID(c))
	return c.JSON(http.StatusCreated, out[0])
}

// listNexusEndpoints godoc
//
//	@Summary		List Nexus endpoints
//	@ID			listNexusEndpoints
//	@Description	Every endpoint, by name. Needs an admin key of every namespace.
//	@Tags			nexus
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Success		200	{object}	api.ListNexusEndpointsResponse
//	@Failure		401	{object}	api.Problem	"No valid API key"
//	@Failure		403	{object}	api.Problem	"The key may not do this"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/nexus/endpoints [get]
func (s *Server) listNexusEndpoints(c echo.Context) error {
	out, err := s.store.NexusEndpoints(c.Request().Context(), &storage.NexusEndpointsParams{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.ListNexusEndpointsResponse{Endpoints: out})
}

// deleteNexusEndpoint godoc
//
//	@Summary		Delete a Nexus endpoint
//	@ID			deleteNexusEndpoint
//	@Description	Operations already started keep running; new ones naming the endpoint fail. Needs an admin key of every namespace.
//	@Tags			nexus
//	@Produce		application/problem+json
//	@Security		BearerAuth
//	@Param			name	path	string	true	"Endpoint name"
//	@Success		204
//	@Failure		400	{object}	api.Problem	"Invalid request"
//	@Failure		401	{object}	api.Problem	"No valid API key"
//	@Failure		403	{object}	api.Problem	"The key may not do this"
//	@Failure		404	{object}	api.Problem	"Unknown endpoint"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/nexus/endpoints/{name} [delete]
func (s *Server) deleteNexusEndpoint(c echo.Context) error {
	b := s.bind(c)
	name := b.param("name", "required,name")
	if err := b.err(); err != nil {
		return err
	}
	if _, err := s.store.NexusEndpoints(c.Request().Context(), &storage.NexusEndpointsParams{Name: name, Delete: true}); err != nil {
		return err
	}
	s.logger.Info("nexus endpoint deleted", "endpoint", name, "by", callerID(c))
	return c.NoContent(http.StatusNoContent)
}

// getNexusEndpoint godoc
//
//	@Summary		Resolve a Nexus endpoint
//	@ID			getNexusEndpoint
//	@Description	The endpoint's target namespace and task queue, as a caller in the namespace sees it (workers resolve the endpoints their workflows name through it). Needs any key of the namespace.
//	@Tags			nexus
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string	true	"Namespace"	default(default)
//	@Param			name		path		string	true	"Endpoint name"
//	@Success		200			{object}	api.NexusEndpoint
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key"
//	@Failure		403			{object}	api.Problem	"The key may not do this"
//	@Failure		404			{object}	api.Problem	"Unknown namespace or endpoint"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/nexus/endpoints/{name} [get]
func (s *Server) getNexusEndpoint(c echo.Context) error {
	b := s.bind(c)
	b.namespace()
	name := b.param("name", "required,name")
	if err := b.err(); err != nil {
		return err
	}
	out, err := s.store.NexusEndpoints(c.Request().Context(), &storage.NexusEndpointsParams{Name: name})
	if errors.Is(err, storage.ErrNotFound) {
		return newProblem(http.StatusNotFound, api.ProblemNotFound, "Not found", "No Nexus endpoint of this name.")
	}
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, out[0])
}
