package openapi

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"
)

func load(t *testing.T, data []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return doc
}

// The published document is valid OpenAPI 3, and its YAML twin says the
// same.
func TestDocumentIsValidOpenAPI3(t *testing.T) {
	doc := load(t, JSON())
	if doc.OpenAPI[:2] != "3." {
		t.Fatalf("openapi: %q", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	fromYAML, err := yaml.YAMLToJSON(YAML())
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(JSON(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("openapi3.yaml and openapi3.json differ")
	}
	if len(doc.Paths.Map()) < 20 {
		t.Fatalf("only %d paths", len(doc.Paths.Map()))
	}
}

// Every operation has an operationId, and no two share one (generated
// clients name their methods after them).
func TestEveryOperationHasAUniqueID(t *testing.T) {
	doc := load(t, JSON())
	seen := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			where := method + " " + path
			if op.OperationID == "" {
				t.Errorf("%s has no operationId (add an @ID annotation)", where)
				continue
			}
			if prev, dup := seen[op.OperationID]; dup {
				t.Errorf("%s and %s share the operationId %q", prev, where, op.OperationID)
			}
			seen[op.OperationID] = where
		}
	}
}

// Payloads are any JSON value: their schemas have no type, so that a
// generated client accepts {"greeting": "Hello"} as well as "Ada" or 42.
func TestPayloadsAreAnyJSONValue(t *testing.T) {
	doc := load(t, JSON())
	payloads := map[string][]string{
		"api.StartWorkflowRequest":        {"input"},
		"api.Workflow":                    {"input", "result"},
		"api.SignalRequest":               {"input"},
		"api.Error":                       {"details"},
		"api.Command":                     {"input", "result", "marker_details"},
		"api.WorkflowTask":                {"input"},
		"api.ActivityTask":                {"input", "heartbeat_details"},
		"api.CompleteActivityTaskRequest": {"result"},
		"api.ActivityHeartbeatRequest":    {"details"},
	}
	for name, fields := range payloads {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Errorf("no schema %s", name)
			continue
		}
		for _, f := range fields {
			p := s.Value.Properties[f]
			if p == nil || p.Value == nil {
				t.Errorf("%s has no property %s", name, f)
				continue
			}
			if p.Value.Type != nil && len(*p.Value.Type) > 0 {
				t.Errorf("%s.%s is typed %v; a payload is any JSON value", name, f, *p.Value.Type)
			}
		}
	}
	// Structured fields keep their type.
	if s := doc.Components.Schemas["api.StartWorkflowRequest"].Value.Properties["task_queue"]; !s.Value.Type.Is(openapi3.TypeString) {
		t.Errorf("task_queue: %v", s.Value.Type)
	}
}

// The API keys are declared as an HTTP bearer scheme.
func TestBearerSecurityScheme(t *testing.T) {
	doc := load(t, JSON())
	ss := doc.Components.SecuritySchemes["BearerAuth"]
	if ss == nil || ss.Value == nil || ss.Value.Type != "http" || ss.Value.Scheme != "bearer" {
		t.Fatalf("BearerAuth: %+v", ss)
	}
}

// Every field of every wire type is described: swag takes the descriptions
// from the fields' Go doc comments in api/.
func TestEveryFieldIsDescribed(t *testing.T) {
	doc := load(t, JSON())
	for name, s := range doc.Components.Schemas {
		if s.Value == nil {
			continue
		}
		for field, p := range s.Value.Properties {
			if p.Value == nil {
				continue
			}
			desc := p.Value.Description
			for _, c := range p.Value.AllOf { // a $ref with siblings
				if desc == "" && c.Value != nil && c.Ref == "" {
					desc = c.Value.Description
				}
			}
			if desc == "" && p.Ref == "" {
				t.Errorf("%s.%s has no description: add a doc comment to the field", name, field)
			}
		}
	}
}
