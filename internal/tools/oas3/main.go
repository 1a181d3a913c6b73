// Command oas3 converts the Swagger 2.0 document that swag generates
// (openapi/swagger.json) into the OpenAPI 3 document that the server
// publishes (openapi/openapi3.json and openapi/openapi3.yaml). `make
// generate` runs it after swag:
//
//	go run ./internal/tools/oas3 -in openapi/swagger.json -out openapi/openapi3
//
// Beyond openapi2conv's conversion it fixes what Swagger 2.0 cannot say:
// payloads (json.RawMessage fields, which swag types as a bare "object")
// become any JSON value (a schema without a type), and the API key scheme
// becomes an HTTP bearer scheme. It validates the result before writing it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"
)

func main() {
	in := flag.String("in", "openapi/swagger.json", "the Swagger 2.0 document to convert")
	out := flag.String("out", "openapi/openapi3", "where to write the OpenAPI 3 document, without extension (.json and .yaml are added)")
	flag.Parse()
	if err := run(context.Background(), *in, *out); err != nil {
		slog.Error("oas3", "err", err)
		os.Exit(1)
	}
}

// run converts the document at in and writes out.json and out.yaml.
func run(ctx context.Context, in, out string) error {
	v2, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	js, ys, err := Convert(ctx, v2)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out+".json", js, 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := os.WriteFile(out+".yaml", ys, 0o644); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// bearerScheme is the name of the security scheme of the API keys, as the
// handlers' @Security annotations name it.
const bearerScheme = "BearerAuth"

// problemJSON is the media type of error answers (RFC 9457).
const problemJSON = "application/problem+json"

// Convert turns a Swagger 2.0 document (JSON) into a validated OpenAPI 3
// document, as indented JSON and as YAML.
func Convert(ctx context.Context, v2 []byte) (jsonDoc, yamlDoc []byte, err error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(v2, &doc2); err != nil {
		return nil, nil, fmt.Errorf("parse the Swagger 2.0 document: %w", err)
	}
	doc3, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, nil, fmt.Errorf("convert to OpenAPI 3: %w", err)
	}
	fix(doc3)
	if err := doc3.Validate(ctx); err != nil {
		return nil, nil, fmt.Errorf("the OpenAPI 3 document is invalid: %w", err)
	}
	raw, err := json.Marshal(doc3)
	if err != nil {
		return nil, nil, fmt.Errorf("encode: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "    "); err != nil {
		return nil, nil, fmt.Errorf("indent: %w", err)
	}
	buf.WriteByte('\n')
	ys, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("encode YAML: %w", err)
	}
	return buf.Bytes(), ys, nil
}

// fix post-processes the converted document: payloads become any JSON
// value, and the API key scheme is declared as what it is, HTTP bearer.
func fix(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	if doc.Components != nil {
		for _, s := range doc.Components.Schemas {
			anyJSON(s, seen)
		}
		for _, r := range doc.Components.RequestBodies {
			if r.Value != nil {
				for _, mt := range r.Value.Content {
					anyJSON(mt.Schema, seen)
				}
			}
		}
		if ss, ok := doc.Components.SecuritySchemes[bearerScheme]; ok && ss.Value != nil {
			ss.Value = &openapi3.SecurityScheme{
				Type:         "http",
				Scheme:       "bearer",
				BearerFormat: "API key",
				Description:  ss.Value.Description,
			}
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil {
					anyJSON(p.Value.Schema, seen)
				}
			}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					anyJSON(mt.Schema, seen)
				}
			}
			for code, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				// swag lists every @Produce type for every answer; an
				// error is application/problem+json, anything else
				// application/json.
				drop := problemJSON
				if code >= "400" && code != "default" {
					drop = "application/json"
				}
				if len(r.Value.Content) > 1 {
					delete(r.Value.Content, drop)
				}
				for _, mt := range r.Value.Content {
					anyJSON(mt.Schema, seen)
				}
			}
		}
	}
}

// anyJSON walks a schema and drops the type of every bare object (type
// object with no properties, no additional properties and no composition):
// swag's rendering of a json.RawMessage field typed swaggertype:"object",
// which on the wire is any JSON value (a string, a number, an array...).
func anyJSON(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Ref != "" || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if s.Type.Is(openapi3.TypeObject) && len(s.Properties) == 0 && s.AdditionalProperties.Has == nil &&
		s.AdditionalProperties.Schema == nil && len(s.AllOf) == 0 && len(s.OneOf) == 0 && len(s.AnyOf) == 0 {
		s.Type = nil
		return
	}
	for _, p := range s.Properties {
		anyJSON(p, seen)
	}
	anyJSON(s.Items, seen)
	anyJSON(s.AdditionalProperties.Schema, seen)
	for _, c := range s.AllOf {
		anyJSON(c, seen)
	}
	for _, c := range s.OneOf {
		anyJSON(c, seen)
	}
	for _, c := range s.AnyOf {
		anyJSON(c, seen)
	}
}
