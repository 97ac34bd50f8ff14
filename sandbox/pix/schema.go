package pix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"remessa/sandbox/httpx"
)

// Violacao is one entry of a problem's violacoes: why (Razao), where
// (Propriedade, a dotted path such as "cobsv[3].devedor.cpf") and, when
// useful, the offending value.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
	Valor       string `json:"valor,omitempty"`
}

// maxViolacoes caps the violations reported for one body, so a hostile
// input cannot make the answer huge.
const maxViolacoes = 50

type kind int

const (
	kObject kind = iota
	kString
	kInt
	kBool
	kArray
)

// field is one property of an object schema.
type field struct {
	name     string
	s        *schema
	required bool
}

// schema is a small JSON-schema subset: enough to name the exact property
// (with its dotted path) of every violation in the Pix request bodies.
type schema struct {
	kind     kind
	props    []field
	item     *schema
	minItems int
	maxItems int // 0 = no limit
	minLen   int
	maxLen   int // 0 = no limit
	pattern  *regexp.Regexp
	patDesc  string
	min, max int64 // integers; max 0 = no limit
	enum     []string
}

func obj(fields ...field) *schema { return &schema{kind: kObject, props: fields} }
func req(name string, s *schema) field {
	return field{name: name, s: s, required: true}
}
func opt(name string, s *schema) field { return field{name: name, s: s} }
func str(minLen, maxLen int) *schema   { return &schema{kind: kString, minLen: minLen, maxLen: maxLen} }
func pat(re, desc string) *schema {
	return &schema{kind: kString, pattern: regexp.MustCompile(re), patDesc: desc}
}
func integer(min, max int64) *schema { return &schema{kind: kInt, min: min, max: max} }
func enumStr(vals ...string) *schema { return &schema{kind: kString, enum: vals} }
func arr(item *schema, minItems, maxItems int) *schema {
	return &schema{kind: kArray, item: item, minItems: minItems, maxItems: maxItems}
}
func boolean() *schema { return &schema{kind: kBool} }

// decodeAny parses body into generic JSON values (numbers kept exact).
// It rejects trailing data after the value.
func decodeAny(body []byte) (any, error) {
	if v, ok := decodeAnyFast(body); ok { // the usual bodies (cobjson_any.go)
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("dados após o fim do JSON")
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("dados após o fim do JSON")
	}
	return v, nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "número"
	case bool:
		return "booleano"
	case []any:
		return "array"
	case map[string]any:
		return "objeto"
	}
	return "desconhecido"
}

func short(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	case bool:
		s = strconv.FormatBool(x)
	case nil:
		s = "null"
	default:
		return ""
	}
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// check validates v against s, appending violations named by path.
func (s *schema) check(path string, v any, out *[]Violacao) {
	add := func(razao string) {
		if len(*out) < maxViolacoes {
			*out = append(*out, Violacao{Razao: razao, Propriedade: path, Valor: short(v)})
		}
	}
	switch s.kind {
	case kObject:
		m, ok := v.(map[string]any)
		if !ok {
			add("deve ser um objeto, recebido " + typeName(v))
			return
		}
		for _, f := range s.props {
			fv, present := m[f.name]
			if !present || fv == nil && !f.required {
				// An optional property sent as null is one not sent (typed
				// clients serialize unset fields as null); in a PATCH the
				// merge then removes it (RFC 7386). A required one is
				// refused below as the wrong type.
				if !present && f.required {
					if len(*out) < maxViolacoes {
						*out = append(*out, Violacao{Razao: "campo obrigatório ausente", Propriedade: join(path, f.name)})
					}
				}
				continue
			}
			f.s.check(join(path, f.name), fv, out)
		}
		var unknown []string
		for k := range m {
			if !s.has(k) {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		for _, k := range unknown {
			if len(*out) < maxViolacoes {
				*out = append(*out, Violacao{Razao: "propriedade desconhecida", Propriedade: join(path, k)})
			}
		}
	case kString:
		str, ok := v.(string)
		if !ok {
			add("deve ser uma string, recebido " + typeName(v))
			return
		}
		n := utf8.RuneCountInString(str)             // as len([]rune(str)) counts, without making it
		c, pos, ctl := httpx.ControlChar(str, false) // no Pix text field is multi-line
		switch {
		case ctl:
			add(httpx.ControlCharMessage(c, pos))
		case s.minLen > 0 && n < s.minLen:
			add(fmt.Sprintf("deve ter ao menos %d caracteres", s.minLen))
		case s.maxLen > 0 && n > s.maxLen:
			add(fmt.Sprintf("deve ter no máximo %d caracteres, tem %d", s.maxLen, n))
		case s.pattern != nil && !s.pattern.MatchString(str):
			add("não corresponde ao formato " + s.patDesc)
		case s.enum != nil && !contains(s.enum, str):
			add("valor não permitido; use " + strings.Join(s.enum, ", "))
		}
	case kInt:
		n, ok := v.(json.Number)
		if !ok {
			add("deve ser um número inteiro, recebido " + typeName(v))
			return
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		if err != nil {
			add("deve ser um número inteiro")
			return
		}
		if i < s.min || (s.max != 0 && i > s.max) {
			if s.max != 0 {
				add(fmt.Sprintf("deve estar entre %d e %d", s.min, s.max))
			} else {
				add(fmt.Sprintf("deve ser maior ou igual a %d", s.min))
			}
		}
	case kBool:
		if _, ok := v.(bool); !ok {
			add("deve ser booleano, recebido " + typeName(v))
		}
	case kArray:
		a, ok := v.([]any)
		if !ok {
			add("deve ser um array, recebido " + typeName(v))
			return
		}
		if len(a) < s.minItems {
			add(fmt.Sprintf("deve ter ao menos %d itens", s.minItems))
		}
		if s.maxItems > 0 && len(a) > s.maxItems {
			add(fmt.Sprintf("deve ter no máximo %d itens, tem %d", s.maxItems, len(a)))
			return
		}
		for i, e := range a {
			s.item.check(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	}
}

// has tells whether the object schema s has the property name (a few
// properties: a scan, no map made per object checked).
func (s *schema) has(name string) bool {
	for _, f := range s.props {
		if f.name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// remarshal turns a generic value that passed its schema into a typed
// struct.
func remarshal(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
