// Package openapi holds Tether's OpenAPI (Swagger 2.0) document, generated
// by swag from the annotations of package server:
//
//	go tool swag init -q -g doc.go -d server,api -o openapi --ot json,yaml
//
// The generated files are committed; CI checks that they match the code.
package openapi

import "embed"

//go:embed swagger.json swagger.yaml
var files embed.FS

// JSON returns the OpenAPI document as JSON (a fresh copy on each call).
func JSON() []byte { return mustRead("swagger.json") }

// YAML returns the OpenAPI document as YAML (a fresh copy on each call).
func YAML() []byte { return mustRead("swagger.yaml") }

func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic("openapi: " + err.Error()) // the files are embedded at build time
	}
	return b
}
