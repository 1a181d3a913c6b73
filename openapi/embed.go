// Package openapi holds Tether's API documents. swag generates the Swagger
// 2.0 document from the annotations of package server, and
// internal/tools/oas3 converts it into the OpenAPI 3 document that the
// server publishes (make generate):
//
//	go tool swag init -q -g doc.go -d server,api -o openapi --ot json,yaml
//	go run ./internal/tools/oas3 -in openapi/swagger.json -out openapi/openapi3
//
// The generated files are committed; CI checks that they match the code.
package openapi

import "embed"

//go:embed openapi3.json openapi3.yaml
var files embed.FS

// JSON returns the OpenAPI 3 document as JSON (a fresh copy on each call).
func JSON() []byte { return mustRead("openapi3.json") }

// YAML returns the OpenAPI 3 document as YAML (a fresh copy on each call).
func YAML() []byte { return mustRead("openapi3.yaml") }

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("openapi: " + err.Error()) // the files are embedded at build time
	}
	return b
}
