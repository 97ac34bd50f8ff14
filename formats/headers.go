package formats

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// NormalizeHeader folds a header for matching: accents removed, lowercase,
// and everything that is not a letter or digit dropped, so "Data de
// Vencimento", "data_de_vencimento" and "DATA DE VENCIMENTO" are equal.
func NormalizeHeader(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		switch {
		case unicode.Is(unicode.Mn, r):
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// FieldSpec is a field the caller wants, with the header names it accepts.
type FieldSpec struct {
	Name     string
	Aliases  []string
	Required bool
}

// Mapping tells which column holds each field.
type Mapping struct {
	ByField map[string]int // field name -> column index (into Row.Cells)
	Unknown []string       // headers no field claimed, as written
}

// Column returns the column index of field and whether it is present.
func (m Mapping) Column(field string) (int, bool) {
	i, ok := m.ByField[field]
	return i, ok
}

// MatchHeaders maps fields to columns. A field matches a header when their
// NormalizeHeader forms are equal, trying the field name then its aliases;
// overrides (field -> header as the user wrote it) take precedence. Each
// header serves one field at most. The error (an *Error with Code
// CodeMissingColumns) names every required field without a column and
// lists the headers found; an override naming a header that does not exist
// and a field whose header appears twice are errors too. The Mapping is
// returned filled as far as possible even with an error.
func MatchHeaders(headers []string, fields []FieldSpec, overrides map[string]string) (Mapping, error) {
	m := Mapping{ByField: map[string]int{}}
	norms := make([]string, len(headers))
	for i, h := range headers {
		norms[i] = NormalizeHeader(h)
	}
	used := make([]bool, len(headers))
	find := func(name string) []int {
		n := NormalizeHeader(name)
		if n == "" {
			return nil
		}
		var idx []int
		for i, h := range norms {
			if h == n {
				idx = append(idx, i)
			}
		}
		return idx
	}
	var problems, problemsEN []string
	ambiguous := func(f string, idx []int) {
		var cols []string
		for _, i := range idx {
			cols = append(cols, ColumnLetter(i))
		}
		problems = append(problems, fmt.Sprintf("o campo %s aparece em mais de uma coluna (%s: %q); deixe só uma", f, strings.Join(cols, ", "), headers[idx[0]]))
		problemsEN = append(problemsEN, fmt.Sprintf("field %s is in more than one column (%s: %q); keep only one", f, strings.Join(cols, ", "), headers[idx[0]]))
	}
	code := ""
	// Overrides first.
	for _, f := range fields {
		h, ok := overrides[f.Name]
		if !ok {
			continue
		}
		idx := find(h)
		switch {
		case len(idx) == 0:
			code = CodeUnknownColumn
			problems = append(problems, fmt.Sprintf("a coluna %q indicada para o campo %s não existe", h, f.Name))
			problemsEN = append(problemsEN, fmt.Sprintf("column %q given for field %s does not exist", h, f.Name))
		case len(idx) > 1:
			code = CodeAmbiguous
			ambiguous(f.Name, idx)
		default:
			m.ByField[f.Name] = idx[0]
			used[idx[0]] = true
		}
	}
	var missing []string
	for _, f := range fields {
		if _, ok := overrides[f.Name]; ok {
			continue
		}
		found := false
		for _, name := range append([]string{f.Name}, f.Aliases...) {
			idx := find(name)
			var free []int
			for _, i := range idx {
				if !used[i] {
					free = append(free, i)
				}
			}
			if len(free) == 0 {
				continue
			}
			if len(free) > 1 {
				code = CodeAmbiguous
				ambiguous(f.Name, free)
			}
			m.ByField[f.Name] = free[0]
			used[free[0]] = true
			found = true
			break
		}
		if !found && f.Required {
			missing = append(missing, f.Name)
		}
	}
	for i, h := range headers {
		if !used[i] && h != "" {
			m.Unknown = append(m.Unknown, h)
		}
	}
	if len(missing) == 0 && len(problems) == 0 {
		return m, nil
	}
	found, foundEN := QuoteHeaders(headers)
	msg, en := strings.Join(problems, "; "), strings.Join(problemsEN, "; ")
	if len(missing) > 0 {
		code = CodeMissingColumns
		var pt, e []string
		for _, f := range fields {
			for _, mi := range missing {
				if mi == f.Name {
					// the accepted names, once each as matching sees them
					var names []string
					seen := map[string]bool{}
					for _, n := range append([]string{f.Name}, f.Aliases...) {
						if k := NormalizeHeader(n); !seen[k] {
							seen[k] = true
							names = append(names, n)
						}
					}
					pt = append(pt, fmt.Sprintf("%s (aceita: %s)", f.Name, strings.Join(names, ", ")))
					e = append(e, fmt.Sprintf("%s (accepts: %s)", f.Name, strings.Join(names, ", ")))
				}
			}
		}
		msg = join2(fmt.Sprintf("faltam colunas obrigatórias: %s", strings.Join(pt, "; ")), msg)
		en = join2(fmt.Sprintf("missing required columns: %s", strings.Join(e, "; ")), en)
	}
	return m, &Error{Code: code, Value: strings.Join(missing, ","),
		Message:   msg + ". Cabeçalhos encontrados: " + found,
		MessageEN: en + ". Headers found: " + foundEN}
}

func join2(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
