// Package cnab reads and writes the fixed-width CNAB files Brazilian banks
// and ERPs exchange (FEBRABAN CNAB 240 Cobrança, the banks' CNAB 400). The
// layouts are data: each is a table of fields in layouts/*.csv naming the
// manual it was taken from, so another bank's variant is a new table, not
// new code. The package knows nothing of the pipeline; formats turns its
// titles into rows.
package cnab

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed layouts/*.csv
var layoutFS embed.FS

// Field is one field of a record: positions are 1-based and inclusive, as
// the manuals print them.
type Field struct {
	Record string // record key: "0", "1", "3P", "5", "9" ...
	Name   string // stable name the code uses ("vencimento")
	Label  string // the manual's name ("Data de vencimento do título")
	Start  int
	End    int
	Num    bool   // N (numeric, right-aligned, zero-filled) or A
	Format string // "", "data8", "data6", "hora6", "v2", "v5"
	Fixed  string // value the record must carry, if any
}

// Width is the number of positions of the field.
func (f *Field) Width() int { return f.End - f.Start + 1 }

// Decimals is the number of decimals of a value field ("v2" -> 2), or 0.
func (f *Field) Decimals() int {
	if strings.HasPrefix(f.Format, "v") {
		n, _ := strconv.Atoi(f.Format[1:])
		return n
	}
	return 0
}

// Manual names the document a layout was taken from.
type Manual struct {
	Title   string
	Version string
	Date    string
}

// Layout is one layout: its records, each a list of fields in position order.
type Layout struct {
	Name    string // "febraban240-remessa"
	Manual  Manual
	LineLen int    // 240 or 400
	Bank    string // bank code the layout belongs to ("" for FEBRABAN's, any bank)
	Records map[string][]Field

	byName  map[string]map[string]*Field
	fixed   map[string][]*Field // per record, the fields with a fixed value
	numeric map[string][]*Field // per record, the numeric fields
}

// Fixed returns the fields of record rec that carry a fixed value.
func (l *Layout) Fixed(rec string) []*Field { return l.fixed[rec] }

// Numeric returns the numeric fields of record rec.
func (l *Layout) Numeric(rec string) []*Field { return l.numeric[rec] }

// Field returns the field name of record rec, or nil.
func (l *Layout) Field(rec, name string) *Field {
	return l.byName[rec][name]
}

// Has reports whether the layout defines record rec.
func (l *Layout) Has(rec string) bool { _, ok := l.Records[rec]; return ok }

var (
	layoutsOnce sync.Once
	layouts     map[string]*Layout
	layoutsErr  error
)

// Get returns the embedded layout with that name ("febraban240-remessa",
// "bradesco400-remessa", "itau400-remessa", and their "-retorno").
func Get(name string) (*Layout, error) {
	layoutsOnce.Do(loadAll)
	if layoutsErr != nil {
		return nil, layoutsErr
	}
	l, ok := layouts[name]
	if !ok {
		return nil, fmt.Errorf("cnab: layout %q not found (have %s)", name, strings.Join(Names(), ", "))
	}
	return l, nil
}

// MustGet is Get for layouts the program itself names; it panics when the
// embedded tables are broken, which a test catches.
func MustGet(name string) *Layout {
	l, err := Get(name)
	if err != nil {
		panic(err)
	}
	return l
}

// Names lists the embedded layouts.
func Names() []string {
	layoutsOnce.Do(loadAll)
	var ns []string
	for n := range layouts {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

func loadAll() {
	layouts = map[string]*Layout{}
	ents, err := layoutFS.ReadDir("layouts")
	if err != nil {
		layoutsErr = err
		return
	}
	for _, e := range ents {
		b, err := layoutFS.ReadFile("layouts/" + e.Name())
		if err != nil {
			layoutsErr = err
			return
		}
		l, err := ParseLayout(b)
		if err != nil {
			layoutsErr = fmt.Errorf("cnab: layouts/%s: %w", e.Name(), err)
			return
		}
		layouts[l.Name] = l
	}
}

// ParseLayout reads a layout table: "# key;value" lines (leiaute, titulo,
// versao, data, tamanho, banco), then a header line and one field a line
// (registro;campo;nome;inicio;fim;tipo;formato;fixo). It checks that the
// fields of each record are inside the line, do not overlap, and that
// fixed values and formats fit their widths.
func ParseLayout(b []byte) (*Layout, error) {
	l := &Layout{Records: map[string][]Field{}, byName: map[string]map[string]*Field{}, fixed: map[string][]*Field{}, numeric: map[string][]*Field{}}
	var body bytes.Buffer
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "#") {
			k, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ";")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "leiaute":
				l.Name = v
			case "titulo":
				l.Manual.Title = v
			case "versao":
				l.Manual.Version = v
			case "data":
				l.Manual.Date = v
			case "banco":
				l.Bank = v
			case "tamanho":
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("line %d: tamanho %q is not a number", i+1, v)
				}
				l.LineLen = n
			}
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if l.Name == "" || l.LineLen == 0 || l.Manual.Title == "" || l.Manual.Version == "" || l.Manual.Date == "" {
		return nil, fmt.Errorf("missing leiaute, tamanho, titulo, versao or data")
	}
	r := csv.NewReader(&body)
	r.Comma = ';'
	r.FieldsPerRecord = 8
	head, err := r.Read()
	if err != nil || head[0] != "registro" {
		return nil, fmt.Errorf("no header line registro;campo;nome;inicio;fim;tipo;formato;fixo")
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		f := Field{Record: rec[0], Name: rec[1], Label: rec[2], Num: rec[5] == "N", Format: rec[6], Fixed: rec[7]}
		f.Start, err = strconv.Atoi(rec[3])
		if err == nil {
			f.End, err = strconv.Atoi(rec[4])
		}
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s.%s: positions %q-%q", f.Record, f.Name, rec[3], rec[4])
		case f.Start < 1 || f.End < f.Start || f.End > l.LineLen:
			return nil, fmt.Errorf("%s.%s: positions %d-%d outside 1-%d", f.Record, f.Name, f.Start, f.End, l.LineLen)
		case rec[5] != "N" && rec[5] != "A":
			return nil, fmt.Errorf("%s.%s: tipo %q is neither N nor A", f.Record, f.Name, rec[5])
		case f.Fixed != "" && !f.Num && len(f.Fixed) < f.Width():
			f.Fixed += strings.Repeat(" ", f.Width()-len(f.Fixed)) // text is left-aligned, blank-filled
		case f.Fixed != "" && len(f.Fixed) != f.Width():
			return nil, fmt.Errorf("%s.%s: fixed value %q does not fill %d positions", f.Record, f.Name, f.Fixed, f.Width())
		}
		switch f.Format {
		case "", "v2", "v5":
		case "data8":
			if f.Width() != 8 {
				return nil, fmt.Errorf("%s.%s: data8 over %d positions", f.Record, f.Name, f.Width())
			}
		case "data6", "hora6":
			if f.Width() != 6 {
				return nil, fmt.Errorf("%s.%s: %s over %d positions", f.Record, f.Name, f.Format, f.Width())
			}
		default:
			return nil, fmt.Errorf("%s.%s: unknown format %q", f.Record, f.Name, f.Format)
		}
		if _, dup := l.byName[f.Record][f.Name]; dup {
			return nil, fmt.Errorf("%s.%s: defined twice", f.Record, f.Name)
		}
		l.Records[f.Record] = append(l.Records[f.Record], f)
		if l.byName[f.Record] == nil {
			l.byName[f.Record] = map[string]*Field{}
		}
		l.byName[f.Record][f.Name] = nil // set below, once the slice stops growing
	}
	for rec, fs := range l.Records {
		sort.Slice(fs, func(a, b int) bool { return fs[a].Start < fs[b].Start })
		for i := range fs {
			if i > 0 && fs[i].Start <= fs[i-1].End {
				return nil, fmt.Errorf("%s.%s (%d-%d) overlaps %s (%d-%d)", rec, fs[i].Name, fs[i].Start, fs[i].End, fs[i-1].Name, fs[i-1].Start, fs[i-1].End)
			}
			l.byName[rec][fs[i].Name] = &fs[i]
			if fs[i].Fixed != "" {
				l.fixed[rec] = append(l.fixed[rec], &fs[i])
			}
			if fs[i].Num {
				l.numeric[rec] = append(l.numeric[rec], &fs[i])
			}
		}
	}
	return l, nil
}
