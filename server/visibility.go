package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tetherhq/tether/api"
	"github.com/tetherhq/tether/server/edge"
	"github.com/tetherhq/tether/server/storage"
	"github.com/tetherhq/tether/server/visibility"
)

// tagListQuery bounds the query parameter of a list or count.
const tagListQuery = "omitempty,max=4096"

// searchAttributeName validates the name path parameter.
func (b *binder) searchAttributeName(field, name string) {
	b.check(visibility.ValidName(name), field,
		"must be a letter or underscore then letters, digits or underscores, at most 64 characters, and not a built-in attribute (%s) or a keyword",
		strings.Join(visibility.BuiltinNames(), ", "))
}

// checkMemo checks a start request's memo: a JSON object of at most
// api.MaxMemoBytes bytes.
func (b *binder) checkMemo(field string, memo []byte) {
	if len(memo) == 0 {
		return
	}
	b.check(bytes.HasPrefix(bytes.TrimSpace(memo), []byte("{")), field, "must be a JSON object")
	b.check(len(memo) <= api.MaxMemoBytes, field, "must be at most %d bytes of JSON", api.MaxMemoBytes)
}

// registerSearchAttribute godoc
//
//	@Summary		Register a search attribute
//	@ID			registerSearchAttribute
//	@Description	Registers a typed search attribute of the namespace (at most 100): workflows may then set it at start or by upsert, and list queries may name it. A name taken → 409.
//	@Tags			search-attributes
//	@Accept			json
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path		string								true	"Namespace"	default(default)
//	@Param			request		body		api.RegisterSearchAttributeRequest	true	"The attribute"
//	@Success		201			{object}	api.SearchAttribute
//	@Failure		400			{object}	api.Problem	"Invalid request"
//	@Failure		401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		409			{object}	api.Problem	"The name is taken"
//	@Failure		500			{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/search-attributes [post]
func (s *Server) registerSearchAttribute(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	var req api.RegisterSearchAttributeRequest
	b.body(&req)
	if !b.has("name") {
		b.searchAttributeName("name", req.Name)
	}
	if err := b.err(); err != nil {
		return err
	}
	sa, err := s.store.ChangeSearchAttribute(c.Request().Context(), &storage.ChangeSearchAttributeParams{Namespace: ns, Name: req.Name, Type: req.Type})
	if errors.Is(err, storage.ErrSearchAttributeExists) {
		return newProblem(http.StatusConflict, api.ProblemSearchAttributeExists, "Search attribute exists",
			fmt.Sprintf("The namespace has a search attribute named %s already.", req.Name))
	}
	if err != nil {
		return err
	}
	s.logger.Info("search attribute registered", "namespace", ns, "name", sa.Name, "type", sa.Type, "by", callerID(c))
	return c.JSON(http.StatusCreated, sa)
}

// listSearchAttributes godoc
//
//	@Summary	List search attributes
//	@ID		listSearchAttributes
//	@Tags		search-attributes
//	@Produce	json,application/problem+json
//	@Security	BearerAuth
//	@Param		namespace	path		string	true	"Namespace"	default(default)
//	@Success	200			{object}	api.ListSearchAttributesResponse
//	@Failure	400			{object}	api.Problem	"Invalid request"
//	@Failure	401			{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure	403			{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure	500			{object}	api.Problem
//	@Router		/v1/namespaces/{namespace}/search-attributes [get]
func (s *Server) listSearchAttributes(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	if err := b.err(); err != nil {
		return err
	}
	list, err := s.store.ListSearchAttributes(c.Request().Context(), ns)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, api.ListSearchAttributesResponse{SearchAttributes: list})
}

// deleteSearchAttribute godoc
//
//	@Summary		Unregister a search attribute
//	@ID			deleteSearchAttribute
//	@Description	Workflows keep the values they hold; queries may no longer name the attribute.
//	@Tags			search-attributes
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace	path	string	true	"Namespace"	default(default)
//	@Param			name		path	string	true	"Attribute name"
//	@Success		204
//	@Failure		400	{object}	api.Problem	"Invalid request"
//	@Failure		401	{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403	{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		404	{object}	api.Problem	"No such attribute"
//	@Failure		500	{object}	api.Problem
//	@Router			/v1/namespaces/{namespace}/search-attributes/{name} [delete]
func (s *Server) deleteSearchAttribute(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	name := b.param("name", "required,max=64")
	if err := b.err(); err != nil {
		return err
	}
	if _, err := s.store.ChangeSearchAttribute(c.Request().Context(), &storage.ChangeSearchAttributeParams{Namespace: ns, Name: name, Delete: true}); err != nil {
		return err
	}
	s.logger.Info("search attribute deleted", "namespace", ns, "name", name, "by", callerID(c))
	return c.NoContent(http.StatusNoContent)
}

// countWorkflows godoc
//
//	@Summary		Count workflow instances
//	@ID			countWorkflows
//	@Description	Counts the instances a list query selects (docs/api.md, "Visibility"). An instance named "count" is described by GET /workflows?query=WorkflowId='count', as this route takes its path.
//	@Tags			workflows
//	@Produce		json,application/problem+json
//	@Security		BearerAuth
//	@Param			namespace		path		string	true	"Namespace"	default(default)
//	@Param			query			query		string	false	"List query (at most 4096 bytes), e.g. WorkflowType = 'X' AND ExecutionStatus = 'Running'"
//	@Param			status			query		string	false	"Only instances of this status"	Enums(running, completed, failed, canceled, terminated)
//	@Param			workflow_type	query		string	false	"Only instances of this workflow type"
//	@Success		200				{object}	api.CountWorkflowsResponse
//	@Failure		400				{object}	api.Problem	"Invalid request (a query's problem names the field query and the position)"
//	@Failure		401				{object}	api.Problem	"No valid API key (Authorization: Bearer <key>)"
//	@Failure		403				{object}	api.Problem	"The key may not do this (its role or namespace)"
//	@Failure		500				{object}	api.Problem
//	@Failure		503				{object}	api.Problem	"The query ran past the list timeout (Retry-After)"
//	@Router			/v1/namespaces/{namespace}/workflows/count [get]
func (s *Server) countWorkflows(c echo.Context) error {
	b := s.bind(c)
	ns := b.namespace()
	f := storage.ListFilter{
		Status:       b.query("status", tagStatus),
		WorkflowType: b.query("workflow_type", tagOptionalName),
		Query:        b.query("query", tagListQuery),
	}
	if err := b.err(); err != nil {
		return err
	}
	list, err := s.store.ListWorkflows(c.Request().Context(), &storage.ListWorkflowsParams{Namespace: ns, Filter: f, CountOnly: true})
	if err != nil {
		return edge.ListTimedOut(c, err)
	}
	return c.JSON(http.StatusOK, api.CountWorkflowsResponse{Count: list.Count})
}
