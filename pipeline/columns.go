package pipeline

import (
	"sort"
	"strings"

	"remessa/formats"
	"remessa/pipeline/results"
)

// ColumnMatch is how the headers of a job's input bind to fields, as
// Validate binds them: for a form that lets a person fix the mapping.
type ColumnMatch struct {
	Headers []HeaderMatch // in file order
	Missing []string      // required field IDs with no column
	Fields  []FieldChoice // fields a header can be mapped to for this kind
	Format  string        // xlsx, csv, yaml, cnab240, cnab400
	Sheet   string        // XLSX: the sheet read
	// Layout is a CNAB remessa's layout table ("febraban240-remessa"…):
	// its fields are at fixed positions, so there is nothing to match, and
	// each header's Column is where the field is in the file's first title
	// that reads (formats.PositionColumn, formats.Place renders it), or ""
	// when that title leaves the field out.
	Layout string
}

// HeaderMatch is one header of the input and the field it serves.
type HeaderMatch struct {
	Column   string // column letter (YAML: the key)
	Header   string // as written
	Field    string // field ID; "" = not used
	Override bool   // bound by the job (input.columns or input.key), not by name
}

// FieldChoice is a field of a kind.
type FieldChoice struct {
	ID       string
	Label    string // Portuguese header the templates write
	LabelEN  string // the same in English
	Required bool   // the job needs a column for it
}

// Choice is the field f of the match's kind, and whether there is one.
func (cm *ColumnMatch) Choice(id string) (FieldChoice, bool) {
	for _, f := range cm.Fields {
		if f.ID == id {
			return f, true
		}
	}
	return FieldChoice{}, false
}

// MatchColumns opens the job's input (its sheet), reads the header and
// matches it against the fields of the job's kind with the catalogue's
// aliases and the job's input.columns and input.key, exactly as Validate
// does. Problems Validate would stop at (a missing required column, an
// input.columns header that does not exist, a field in two columns) are
// not errors here: the field is left without a column (Missing when
// required). The error is only for an input that cannot be read.
func MatchColumns(job *Job) (*ColumnMatch, error) {
	rd, err := formats.Open(job.InputFile, job.InputOptions())
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	src := rd.Source()
	specs, overrides, required := columnSpecs(job)
	m, _ := formats.MatchHeaders(src.Headers, specs, overrides)
	cm := &ColumnMatch{Format: src.Format, Sheet: src.Sheet, Layout: src.Layout, Headers: make([]HeaderMatch, len(src.Headers))}
	for i, h := range src.Headers {
		cm.Headers[i] = HeaderMatch{Header: h}
		if i < len(src.Columns) {
			cm.Headers[i].Column = src.Columns[i]
		} else {
			cm.Headers[i].Column = formats.ColumnLetter(i)
		}
	}
	if src.Layout != "" {
		firstTitlePositions(rd, cm.Headers)
	}
	// fields in catalogue order, so a header two fields claim (cannot
	// happen through MatchHeaders) would show the first
	fields := make([]string, 0, len(m.ByField))
	for f := range m.ByField {
		fields = append(fields, f)
	}
	sort.Slice(fields, func(a, b int) bool { return catalogueIndex(fields[a]) < catalogueIndex(fields[b]) })
	for _, f := range fields {
		i := m.ByField[f]
		if i < 0 || i >= len(cm.Headers) || cm.Headers[i].Field != "" {
			continue
		}
		_, over := overrides[f]
		cm.Headers[i].Field, cm.Headers[i].Override = f, over
	}
	keyFound := true
	if job.KeyHeader != "" {
		// input.key may be a column that serves another field too (a CPF
		// as the key): that header keeps the other field
		i, ok := findHeader(m.ByField, src.Headers, job.KeyHeader)
		keyFound = ok
		if ok && cm.Headers[i].Field == "" {
			cm.Headers[i].Field, cm.Headers[i].Override = FKey, true
		}
	}
	for _, f := range Catalogue {
		if !f.usedBy(job.Kind) {
			continue
		}
		req := required[f.ID] || f.ID == FKey
		cm.Fields = append(cm.Fields, FieldChoice{ID: f.ID, Label: f.Label, LabelEN: f.LabelEN, Required: req})
		if !req {
			continue
		}
		if _, ok := m.ByField[f.ID]; !ok && (f.ID != FKey || job.KeyHeader == "" || !keyFound) {
			cm.Missing = append(cm.Missing, f.ID)
		}
	}
	return cm, nil
}

// firstTitlePositions sets each header's Column to the positions of its
// field in the first title of a CNAB remessa that reads (titles refused
// whole are passed over, the first cnabLookTitles at most), "" for a field
// that title leaves out.
func firstTitlePositions(rd formats.Reader, hs []HeaderMatch) {
	for i := range hs {
		hs[i].Column = ""
	}
	for n := 0; n < cnabLookTitles; n++ {
		row, err := rd.Next()
		if err != nil {
			if formats.IsRowLevel(err) {
				continue
			}
			return
		}
		for i := range hs {
			if i < len(row.Cells) {
				if _, _, _, ok := formats.ParsePositionColumn(row.Cells[i].Column); ok {
					hs[i].Column = row.Cells[i].Column
				}
			}
		}
		return
	}
}

// cnabLookTitles is how many titles MatchColumns reads at most for the
// fields' positions.
const cnabLookTitles = 100

func catalogueIndex(id string) int {
	for i, f := range Catalogue {
		if f.ID == id {
			return i
		}
	}
	return len(Catalogue)
}

// columnSpecs is what the header matching of a job uses: the fields of its
// kind (which required), and the input.columns overrides by field. With
// input.key the key is not among the specs (findHeader looks it up apart).
func columnSpecs(job *Job) (specs []formats.FieldSpec, overrides map[string]string, required map[string]bool) {
	s := job.Spec
	required = map[string]bool{FKey: true, FName: true, FDocument: true}
	switch job.Kind {
	case results.Carnets:
		c := s.Issue.Carnets
		required[FDueDate] = !c.FirstDue.Set
		required[FValue] = itemsNeedValue(c.Items)
	case results.Boletos:
		b := s.Issue.Boletos
		required[FDueDate] = !b.Due.Set
		required[FValue] = itemsNeedValue(b.Items)
	case results.Cobv:
		c := s.Issue.Cobv
		required[FDueDate] = !c.Due.Set
		required[FValue] = !c.Valor.Set
	}
	overrides = map[string]string{}
	for f, hdr := range job.Columns {
		overrides[strings.TrimPrefix(f, "payer.")] = hdr
	}
	// input.key may name a column that also serves another field (a CPF
	// as the key), so it is looked up apart from the matching.
	delete(overrides, FKey)
	required[FKey] = job.KeyHeader == ""
	specs = fieldSpecs(job.Kind, required)
	if job.KeyHeader != "" {
		for i := range specs {
			if specs[i].Name == FKey {
				specs = append(specs[:i], specs[i+1:]...)
				break
			}
		}
	}
	return specs, overrides, required
}

// findHeader finds the column of name: a field already bound (col), else
// the first header written exactly so, else the first equal once
// normalized (formats.NormalizeHeader).
func findHeader(col map[string]int, headers []string, name string) (int, bool) {
	if i, ok := col[name]; ok {
		return i, true
	}
	for i, h := range headers {
		if h == name {
			return i, true
		}
	}
	n := formats.NormalizeHeader(name)
	for i, h := range headers {
		if hn := formats.NormalizeHeader(h); hn != "" && hn == n {
			return i, true
		}
	}
	return 0, false
}
