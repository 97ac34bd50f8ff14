package reports

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"

	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"

	"remessa/formats"
	"remessa/pipeline/results"
)

// rejectedColumn is the header of the column added to the rejected rows.
func rejectedColumn(lang string) string { return tr(lang, "col_problem") }

// rejectedText is the "Problema" cell of a rejected row.
func rejectedText(lang string, row *results.Row, probs []results.Problem) string {
	parts := make([]string, 0, len(probs))
	for _, p := range probs {
		msg, _ := problemText(lang, row.Outcome, p)
		if place := problemPlace(lang, p); place != "" {
			msg = place + ": " + msg
		}
		parts = append(parts, msg+" ["+p.Code+"]")
	}
	return strings.Join(parts, "; ")
}

// WriteRejected writes the refused and denied rows of r into dir, in the
// input's own format and columns plus a "Problema" column: rejeitadas.xlsx
// for an XLSX input (same sheet name, numbers, dates and text kept as they
// were typed), rejeitadas.csv for a CSV input (same delimiter and encoding,
// fields exactly as typed), rejeitadas.yaml for a YAML input. The input must
// be the file the run read: when results.json records its SHA-256, a changed
// file is refused. It returns "" and no error when no row was rejected.
func WriteRejected(dir string, r *results.Results, in InputInfo, opt Options) (string, error) {
	opt, err := opt.normalize()
	if err != nil {
		return "", err
	}
	d := newDigest(opt.Lang)
	d.rejected = &rejectedSpill{}
	defer d.rejected.close()
	for i := range r.Rows {
		d.add(&r.Rows[i])
	}
	if d.rejected.len() == 0 {
		return "", nil
	}
	return writeRejected(dir, r.Run, d.rejected, in, opt)
}

// writeRejected writes the rows of want (source row -> problem text; the
// map is emptied as rows are found).
func writeRejected(dir string, run results.RunInfo, rej *rejectedSpill, in InputInfo, opt Options) (string, error) {
	if err := checkInputHash(in.Path, run.InputSHA256); err != nil {
		return "", err
	}
	want, err := rej.want()
	if err != nil {
		return "", err
	}
	rd, err := formats.Open(in.Path, formats.Options{Sheet: in.Sheet, MaxRows: -1})
	if err != nil {
		return "", fmt.Errorf("linhas rejeitadas: %w", err)
	}
	defer rd.Close()
	if strings.HasPrefix(rd.Source().Format, "cnab") {
		// a CNAB remessa goes back to its ERP, not to a person's editor:
		// the reports list its refused titles with their lines and positions
		return "", nil
	}
	ext, err := rejectedExt(rd.Source().Format)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileRejected+ext)
	err = writeAtomic(path, func(f io.Writer) error { return rejectedTo(f, rd, want, opt.Lang) })
	if err != nil {
		return "", fmt.Errorf("linhas rejeitadas: %w", err)
	}
	m, err := want.left()
	if err != nil {
		return path, err
	}
	if len(m) > 0 {
		return path, fmt.Errorf("linhas rejeitadas: %s: %w", path, missingRows(m))
	}
	return path, nil
}

// rejectedExt is the extension of the rejected rows of an input format.
func rejectedExt(format string) (string, error) {
	switch format {
	case "xlsx", "csv", "yaml":
		return "." + format, nil
	}
	return "", fmt.Errorf("linhas rejeitadas: formato de entrada %q não suportado", format)
}

// rejectedTo writes the rows of rd in want in rd's format.
func rejectedTo(w io.Writer, rd formats.Reader, want wantRows, lang string) error {
	switch rd.Source().Format {
	case "xlsx":
		return rejectedXLSX(w, rd, want, lang)
	case "csv":
		return rejectedCSV(w, rd, want, lang)
	case "yaml":
		return rejectedYAML(w, rd, want, lang)
	}
	_, err := rejectedExt(rd.Source().Format)
	return err
}

// RejectedRows maps the source row (results.Row.SourceRow, the row number
// as the spreadsheet shows it) of every refused or denied row of rows to
// its "Problema" text, as WriteRejected writes it: for WriteRejectedRows,
// e.g. with the Refused rows of a pipeline.Validation before any run. lang
// is "pt" (default, "") or "en".
func RejectedRows(rows []results.Row, lang string) map[int]string {
	if lang != "en" {
		lang = "pt"
	}
	want := map[int]string{}
	for i := range rows {
		row := &rows[i]
		if row.Outcome == results.Refused || row.Outcome == results.Denied {
			want[row.SourceRow] = rejectedText(lang, row, rowProblems(lang, row))
		}
	}
	return want
}

// WriteRejectedRows writes the rows of the input file in.Path (sheet
// in.Sheet; empty: the first) whose source row numbers are in want, in the
// input's own format and columns plus the "Problema" column with want's
// text, to w: the same file WriteRejected writes (xlsx, csv or yaml; the
// format is returned, for the file's name), without a run. Rows of want
// the input does not have (or that its reader cannot give back) are left
// out and reported, after the whole file was written, by an error that
// matches ErrRowsNotFound. lang is "pt" (default, "") or "en".
func WriteRejectedRows(w io.Writer, in InputInfo, want map[int]string, lang string) (format string, err error) {
	opt, err := Options{Lang: lang}.normalize()
	if err != nil {
		return "", err
	}
	if in.Path == "" {
		return "", fmt.Errorf("linhas rejeitadas: %w", ErrNoInput)
	}
	rd, err := formats.Open(in.Path, formats.Options{Sheet: in.Sheet, MaxRows: -1})
	if err != nil {
		return "", fmt.Errorf("linhas rejeitadas: %w", err)
	}
	defer rd.Close()
	format = rd.Source().Format
	if _, err := rejectedExt(format); err != nil {
		return "", err
	}
	rows := mapWant(maps.Clone(want))
	if err := rejectedTo(w, rd, rows, opt.Lang); err != nil {
		return format, fmt.Errorf("linhas rejeitadas: %w", err)
	}
	if m, _ := rows.left(); len(m) > 0 {
		return format, fmt.Errorf("linhas rejeitadas: %w", missingRows(m))
	}
	return format, nil
}

// ErrRowsNotFound matches the error of rows to write back that the input
// file does not have.
var ErrRowsNotFound = errors.New("linhas não encontradas na entrada")

// ErrInputChanged is returned (wrapped) when the input file is not the one
// the run read: its SHA-256 differs from results.json's.
var ErrInputChanged = errors.New("a planilha de entrada mudou depois da execução")

// missingRows is returned when failing rows are not in the input file.
type missingRows []int

func (m missingRows) Is(target error) bool { return target == ErrRowsNotFound }

func (m missingRows) Error() string {
	s := make([]string, len(m))
	for i, n := range m {
		s[i] = strconv.Itoa(n)
	}
	return "as linhas " + strings.Join(s, ", ") + " não foram encontradas na entrada (veja problemas.csv)"
}

func checkInputHash(path, want string) error {
	if want == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("linhas rejeitadas: abrir a entrada: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("linhas rejeitadas: ler %s: %w", path, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("linhas rejeitadas: %w: %s (SHA-256 %s, a execução leu %s); use a planilha original", ErrInputChanged, path, got, want)
	}
	return nil
}

// eachRejected calls fn for every input row that failed, in input order;
// failing rows the reader never returned are left in want.
func eachRejected(rd formats.Reader, want wantRows, fn func(formats.Row, string) error) error {
	for {
		row, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if formats.IsRowLevel(err) {
				continue // a row the reader cannot give back; problemas.csv lists it
			}
			return err
		}
		msg, ok, err := want.take(row.Number)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(row, msg); err != nil {
			return err
		}
	}
	return nil
}

func rejectedCSV(w io.Writer, rd formats.Reader, want wantRows, lang string) error {
	src := rd.Source()
	var out io.Writer = w
	bw := bufio.NewWriter(w)
	out = bw
	switch src.Encoding {
	case "utf-8-bom":
		bw.WriteString(utf8BOM)
	case "windows-1252":
		out = encoding.ReplaceUnsupported(charmap.Windows1252.NewEncoder()).Writer(bw)
	}
	cw := csv.NewWriter(out)
	if d, n := utf8.DecodeRuneInString(src.Delimiter); n > 0 {
		cw.Comma = d
	}
	cw.UseCRLF = true
	if err := cw.Write(append(append([]string{}, src.Headers...), rejectedColumn(lang))); err != nil {
		return err
	}
	rec := make([]string, len(src.Headers)+1)
	err := eachRejected(rd, want, func(row formats.Row, msg string) error {
		for i := range src.Headers {
			c := row.Get(i)
			rec[i] = c.Raw
			if c.Kind == formats.KindText && !isNumberText(c.Raw) {
				rec[i] = defuseFormula(c.Raw)
			}
		}
		rec[len(src.Headers)] = defuseFormula(msg)
		return cw.Write(rec)
	})
	cw.Flush()
	if cerr := cw.Error(); err == nil {
		err = cerr
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func rejectedXLSX(w io.Writer, rd formats.Reader, want wantRows, lang string) error {
	src := rd.Source()
	f := excelize.NewFile()
	defer f.Close()
	sheet := src.Sheet
	if sheet == "" {
		sheet = "Sheet1"
	}
	if sheet != "Sheet1" {
		if err := f.SetSheetName("Sheet1", sheet); err != nil {
			return err
		}
	}
	st, err := newXLSXStyles(f)
	if err != nil {
		return err
	}
	pct, err := f.NewStyle(&excelize.Style{NumFmt: 10}) // 0.00%
	if err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	n := len(src.Headers)
	for i := 0; i < n; i++ {
		sw.SetColWidth(i+1, i+1, 18)
	}
	sw.SetColWidth(n+1, n+1, 70)
	vals := make([]any, n+1)
	for i, h := range src.Headers {
		vals[i] = excelize.Cell{StyleID: st.header, Value: h}
	}
	vals[n] = excelize.Cell{StyleID: st.header, Value: rejectedColumn(lang)}
	if err := sw.SetRow("A1", vals); err != nil {
		return err
	}
	line := 1
	err = eachRejected(rd, want, func(row formats.Row, msg string) error {
		line++
		for i := 0; i < n; i++ {
			vals[i] = rejectedXLSXCell(row.Get(i), st, pct)
		}
		vals[n] = excelize.Cell{StyleID: st.text, Value: msg}
		ref, _ := excelize.CoordinatesToCellName(1, line)
		return sw.SetRow(ref, vals)
	})
	if err != nil {
		return err
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	return saveXLSX(f, w)
}

// rejectedXLSXCell writes a value back as the input stored it: numbers as
// numbers, dates as dates, percentages as percentages, text as text.
func rejectedXLSXCell(c formats.Cell, st *xlsxStyles, pct int) any {
	switch c.Kind {
	case formats.KindEmpty:
		return nil
	case formats.KindNumber:
		if v, err := strconv.ParseFloat(c.Value, 64); err == nil {
			return v
		}
	case formats.KindPercent:
		if v, err := strconv.ParseFloat(c.Raw, 64); err == nil {
			return excelize.Cell{StyleID: pct, Value: v}
		}
	case formats.KindDate:
		if t, err := time.Parse("2006-01-02", c.Value); err == nil {
			return excelize.Cell{StyleID: st.date, Value: t}
		}
	case formats.KindBool:
		return c.Value == "true"
	case formats.KindFormula:
		// the cached result, typed as the formula's cell showed it
		if v, err := strconv.ParseFloat(c.Value, 64); err == nil {
			return v
		}
		if t, err := time.Parse("2006-01-02", c.Value); err == nil {
			return excelize.Cell{StyleID: st.date, Value: t}
		}
		if v, err := strconv.ParseFloat(c.Raw, 64); err == nil && strings.HasSuffix(c.Value, "%") {
			return excelize.Cell{StyleID: pct, Value: v}
		}
	}
	v := c.Raw
	if c.Kind == formats.KindFormula || c.Kind == formats.KindError || v == "" {
		v = c.Value
	}
	return excelize.Cell{StyleID: st.text, Value: v}
}

func rejectedYAML(w io.Writer, rd formats.Reader, want wantRows, lang string) error {
	src := rd.Source()
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	err := eachRejected(rd, want, func(row formats.Row, msg string) error {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for i, c := range row.Cells {
			key := c.Column
			if key == "" && i < len(src.Headers) {
				key = src.Headers[i]
			}
			if c.Kind == formats.KindEmpty {
				continue
			}
			m.Content = append(m.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: key},
				yamlScalar(c))
		}
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: strings.ToLower(rejectedColumn(lang))},
			&yaml.Node{Kind: yaml.ScalarNode, Value: msg})
		seq.Content = append(seq.Content, m)
		return nil
	})
	if err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{seq}}); err != nil {
		return err
	}
	return enc.Close()
}

// yamlScalar keeps text as a string (quoted when it would read as something
// else, like "01234") and other values plain.
func yamlScalar(c formats.Cell) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Value: c.Raw}
	if c.Kind == formats.KindText {
		n.Tag = "!!str"
	}
	return n
}

// isNumberText reports whether s reads as a number as typed in a sheet
// ("-10,50", "+5"), which a leading sign does not make a formula.
func isNumberText(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	if s[0] == '-' || s[0] == '+' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && r != ',' && r != '.' {
			return false
		}
	}
	return true
}
