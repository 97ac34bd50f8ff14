package actions

import (
	"encoding/json"
	"reflect"

	"remessa/pipeline"
)

// Schema is the JSON Schema (draft 2020-12) of an action job file, derived
// from Spec by the same generator as the issuing job's.
func Schema(lang string) map[string]any {
	s := pipeline.SchemaOfType(reflect.TypeFor[Spec](), lang)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = "https://remessa.dev/schema/action-v1.json"
	s["title"] = "remessa action job"
	if a, ok := s["properties"].(map[string]any)["action"].(map[string]any); ok {
		a["minProperties"], a["maxProperties"] = 1, 1
	}
	return s
}

// SchemaJSON is Schema as indented JSON with a final newline.
func SchemaJSON(lang string) []byte {
	b, _ := json.MarshalIndent(Schema(lang), "", "  ")
	return append(b, '\n')
}
