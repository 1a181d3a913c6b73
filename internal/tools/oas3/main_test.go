package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

const swagger2 = `{
 "swagger": "2.0",
 "info": {"title": "T", "version": "1"},
 "basePath": "/",
 "paths": {"/things": {"post": {
  "operationId": "startThing",
  "consumes": ["application/json"],
  "produces": ["application/json", "application/problem+json"],
  "parameters": [{"in": "body", "name": "request", "required": true, "schema": {"$ref": "#/definitions/Thing"}}],
  "responses": {
   "201": {"description": "Created", "schema": {"$ref": "#/definitions/Thing"}},
   "400": {"description": "Bad", "schema": {"$ref": "#/definitions/Problem"}}
  }
 }}},
 "definitions": {
  "Thing": {"type": "object", "properties": {
   "name": {"type": "string"},
   "input": {"description": "Input is any JSON value.", "type": "object"},
   "labels": {"type": "object", "additionalProperties": {"type": "string"}},
   "items": {"type": "array", "items": {"type": "object"}}
  }},
  "Problem": {"type": "object", "properties": {"title": {"type": "string"}}}
 },
 "securityDefinitions": {"BearerAuth": {"type": "apiKey", "in": "header", "name": "Authorization", "description": "Bearer <key>"}}
}`

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "swagger.json")
	if err := os.WriteFile(in, []byte(swagger2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), in, filepath.Join(dir, "openapi3")); err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".json", ".yaml"} {
		data, err := os.ReadFile(filepath.Join(dir, "openapi3"+ext))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if err := doc.Validate(context.Background()); err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		thing := doc.Components.Schemas["Thing"].Value
		if typ := thing.Properties["input"].Value.Type; typ != nil && len(*typ) > 0 {
			t.Errorf("%s: input typed %v, want any JSON value", ext, *typ)
		}
		if d := thing.Properties["input"].Value.Description; d != "Input is any JSON value." {
			t.Errorf("%s: input's description %q", ext, d)
		}
		if typ := thing.Properties["items"].Value.Items.Value.Type; typ != nil && len(*typ) > 0 {
			t.Errorf("%s: items' items typed %v", ext, *typ)
		}
		if !thing.Properties["labels"].Value.Type.Is(openapi3.TypeObject) || !thing.Properties["name"].Value.Type.Is(openapi3.TypeString) {
			t.Errorf("%s: structured fields lost their type", ext)
		}
		ss := doc.Components.SecuritySchemes["BearerAuth"].Value
		if ss.Type != "http" || ss.Scheme != "bearer" {
			t.Errorf("%s: security scheme %+v", ext, ss)
		}
		op := doc.Paths.Find("/things").Post
		if op.OperationID != "startThing" {
			t.Errorf("%s: operationId %q", ext, op.OperationID)
		}
		if c := op.Responses.Status(201).Value.Content; c.Get("application/json") == nil || c.Get(problemJSON) != nil {
			t.Errorf("%s: 201 content types %v", ext, keys(c))
		}
		if c := op.Responses.Status(400).Value.Content; c.Get(problemJSON) == nil || c.Get("application/json") != nil {
			t.Errorf("%s: 400 content types %v", ext, keys(c))
		}
	}
}

func keys(c openapi3.Content) []string {
	var ks []string
	for k := range c {
		ks = append(ks, k)
	}
	return ks
}
