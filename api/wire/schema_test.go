package wire_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/api/wire"
)

// TestTypesMatchOpenAPI holds the Go types to api/openapi.yaml, which
// describes their JSON to other languages' clients: api/rest aliases these
// types (x-go-type), so a field added in Go but not in the schema (or the
// other way) would go unnoticed by the compiler.
func TestTypesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				GoType     string         `yaml:"x-go-type"`
				Properties map[string]any `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		schema string
		typ    any
	}{
		{"BuildStart", wire.BuildStart{}},
		{"Stage", wire.Stage{}},
		{"Step", wire.Step{}},
		{"RegistryAuth", wire.RegistryAuth{}},
		{"BuildLogEntry", wire.BuildLogEntry{}},
	}
	for _, tc := range tests {
		t.Run(tc.schema, func(t *testing.T) {
			s, ok := doc.Components.Schemas[tc.schema]
			if !ok {
				t.Fatalf("openapi.yaml has no schema %s", tc.schema)
			}
			if want := "wire." + tc.schema; s.GoType != want {
				t.Errorf("schema %s: x-go-type %q, want %q (api/rest must alias the one definition)", tc.schema, s.GoType, want)
			}
			var inSchema []string
			for k := range s.Properties {
				inSchema = append(inSchema, k)
			}
			slices.Sort(inSchema)
			if got := jsonFields(reflect.TypeOf(tc.typ)); !slices.Equal(got, inSchema) {
				t.Errorf("wire.%s has JSON fields %v, openapi.yaml describes %v", tc.schema, got, inSchema)
			}
		})
	}
}

// jsonFields lists the JSON names of t's fields, sorted.
func jsonFields(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
