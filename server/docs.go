package server

import (
	"net/http"

	"github.com/labstack/echo/v4"
	echoSwagger "github.com/swaggo/echo-swagger"
)

// swaggerUI serves the Swagger UI under /docs/, over the OpenAPI 3 document
// at /openapi.json.
//
// echo-swagger's handler picks the file to serve from the raw request URI,
// query included, so a link that carries one (the UI's own
// ?urls.primaryName=…, a tracking parameter) answered 404; and its default
// document list names doc.yaml, which it renders from swag's registry,
// empty here (500). This wrapper hands it the path alone, and the page
// lists /openapi.json only (doc.json and doc.yaml redirect to the
// documents).
func swaggerUI() echo.HandlerFunc {
	ui := echoSwagger.EchoWrapHandler(func(c *echoSwagger.Config) {
		c.URLs = []string{"/openapi.json"}
	})
	return func(c echo.Context) error {
		r := c.Request()
		if r.Method == http.MethodHead {
			// echo-swagger answers GET only; HEAD answers wherever GET does.
			r = r.Clone(r.Context())
			r.Method = http.MethodGet
			c.SetRequest(r)
		}
		r.RequestURI = r.URL.EscapedPath()
		return ui(c)
	}
}
