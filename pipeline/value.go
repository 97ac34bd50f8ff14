package pipeline

import (
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"remessa/formats"
)

// Value is a job setting that is either a constant for every row ("2%",
// "R$ 150,00", "dia 10 do próximo mês") or a text template evaluated per
// row ("{{ .Valor }}", "Mensalidade {{ .Turma }}"). Templates see the
// row's cells by header and by field name (see the field catalogue);
// "{{ .X }}" alone is a direct column reference and costs no template
// execution. A name that is neither a header nor a field is an error at
// the template's position.
type Value struct {
	Raw string
	Pos Pos
	Set bool

	tmpl *template.Template
	ref  string // "{{ .X }}" alone: the name X
	col  int    // resolved column index of ref
	info *valueInfo
}

var reRef = regexp.MustCompile(`^\{\{-?\s*\.([\p{L}\p{N}_]+)\s*-?\}\}$`)
var reIndexRef = regexp.MustCompile(`^\{\{-?\s*index\s+\.\s+"([^"]+)"\s*-?\}\}$`)

func (v *Value) decodeScalar(s string, pos Pos) error {
	v.Raw, v.Pos, v.Set = s, pos, true
	if !strings.Contains(s, "{{") {
		return nil
	}
	t := strings.TrimSpace(s)
	if m := reRef.FindStringSubmatch(t); m != nil {
		v.ref = m[1]
		return nil
	}
	if m := reIndexRef.FindStringSubmatch(t); m != nil {
		v.ref = m[1]
		return nil
	}
	tm, err := template.New("v").Option("missingkey=error").Parse(s)
	if err != nil {
		return bilingual(fmt.Sprintf("modelo inválido %q: %v", s, err), fmt.Sprintf("invalid template %q: %v", s, err))
	}
	v.tmpl = tm
	return nil
}

// IsTemplate reports whether the value depends on the row.
func (v *Value) IsTemplate() bool { return v.ref != "" || v.tmpl != nil }

// Const returns the constant text (meaningful when !IsTemplate).
func (v *Value) Const() string { return v.Raw }

// bilingualError carries a Portuguese and an English message.
type bilingualError struct{ pt, en string }

func (e *bilingualError) Error() string { return e.pt }

func bilingual(pt, en string) error { return &bilingualError{pt, en} }

func localizedEN(err error) string {
	if b, ok := err.(*bilingualError); ok {
		return b.en
	}
	if v, ok := err.(*formats.ValueError); ok {
		return v.MessageEN
	}
	return err.Error()
}
