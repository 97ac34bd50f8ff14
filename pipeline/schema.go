package pipeline

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// SchemaID is the $id of the job file's JSON Schema.
const SchemaID = "https://remessa.dev/schema/job-v1.json"

// Schema returns the JSON Schema (draft 2020-12) of the job file, derived
// from the same Go structs and tags the decoder uses, so the two cannot
// drift apart. lang picks the descriptions ("en" or Portuguese).
func Schema(lang string) map[string]any {
	s := schemaOf(reflect.TypeFor[JobSpec](), lang)
	s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	s["$id"] = SchemaID
	s["title"] = "remessa job"
	if lang == "en" {
		s["description"] = "A remessa job file: where the payers are, what to issue for each row and where the reports go."
	} else {
		s["description"] = "Arquivo de job do remessa: onde estão os pagadores, o que emitir para cada linha e onde ficam os relatórios."
	}
	return s
}

// SchemaJSON returns the schema as indented JSON.
func SchemaJSON(lang string) []byte {
	b, _ := json.MarshalIndent(Schema(lang), "", "  ")
	return append(b, '\n')
}

var valueType = reflect.TypeFor[Value]()

func schemaOf(t reflect.Type, lang string) map[string]any {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == valueType {
		return map[string]any{"type": []string{"string", "number", "integer"}}
	}
	switch t.Kind() {
	case reflect.Struct:
		props := map[string]any{}
		var req []string
		for _, jf := range fieldsOf(t) {
			f, name := t.Field(jf.index), jf.name
			p := schemaOf(f.Type, lang)
			doc := f.Tag.Get("doc")
			if lang == "en" && f.Tag.Get("doc_en") != "" {
				doc = f.Tag.Get("doc_en")
			}
			if doc != "" {
				p["description"] = doc
			}
			if enum := f.Tag.Get("enum"); enum != "" {
				vals := strings.Split(enum, ",")
				target := p
				if f.Type.Kind() == reflect.Slice {
					target = p["items"].(map[string]any)
				}
				if f.Type.Kind() == reflect.Int {
					ints := make([]int, len(vals))
					for k, v := range vals {
						ints[k], _ = strconv.Atoi(v)
					}
					target["enum"] = ints
				} else {
					target["enum"] = vals
				}
			}
			if f.Tag.Get("secret") == "true" {
				p["pattern"] = `^\$\{[A-Za-z_][A-Za-z0-9_]*(:[^}]*)?\}$`
			}
			switch f.Tag.Get("kind") {
			case "int":
				p["examples"] = []any{12, "{{ .Parcelas }}"}
			case "percent":
				p["examples"] = []any{"2%", "0,033%"}
			case "money":
				p["examples"] = []any{"R$ 1.234,56", "{{ .Valor }}"}
			case "date":
				p["examples"] = []any{"2027-02-10", "10/02/2027", "dia 10 do próximo mês", "day 10 of next month", "+30d"}
			}
			props[name] = p
			if jf.required {
				req = append(req, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(req) > 0 {
			s["required"] = req
		}
		if t == reflect.TypeFor[IssueSpec]() {
			s["minProperties"] = 1
			s["maxProperties"] = 1
		}
		return s
	case reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem(), lang)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem(), lang)}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	}
	return map[string]any{}
}
