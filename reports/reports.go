// Package reports writes the reports of a run from its results
// (results.json): an XLSX workbook, CSV files, the JSON results themselves,
// a self-contained HTML page, and the rejected rows in the input's own
// format, ready to be fixed and run again.
//
// Labels are Portuguese by default and English with Options.Lang "en"; money
// is shown in reais from integer cents, never through floats except where a
// spreadsheet number cell needs one. docs/reports.md describes every report
// and column.
package reports

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"remessa/pipeline/results"
)

// Report formats accepted in Options.Formats.
const (
	FormatXLSX = "xlsx"
	FormatCSV  = "csv"
	FormatJSON = "json"
	FormatHTML = "html"
)

// AllFormats is the default list of formats.
var AllFormats = []string{FormatXLSX, FormatCSV, FormatJSON, FormatHTML}

// CSV dialects accepted in Options.CSVDialect.
const (
	DialectExcel = "excel" // UTF-8 with BOM, ';' separator, decimal comma, dd/mm/yyyy dates
	DialectComma = "comma" // plain UTF-8, ',' separator, decimal point, ISO dates
)

// File names written by Write.
const (
	FileXLSX        = "relatorio.xlsx"
	FileHTML        = "relatorio.html"
	FileJSON        = "results.json"
	FileLinesCSV    = "linhas.csv"
	FileParcelsCSV  = "parcelas.csv"
	FileProblemsCSV = "problemas.csv"
	FileSummaryCSV  = "resumo.csv"
	// FileRejected is the base name of the rejected rows; the extension is
	// the input's (rejeitadas.xlsx, rejeitadas.csv).
	FileRejected = "rejeitadas"
)

// Options says which reports to write and how.
type Options struct {
	Formats    []string         // subset of AllFormats; empty means all
	Lang       string           // "pt" (default) or "en"
	CSVDialect string           // DialectExcel (default) or DialectComma
	Input      *InputInfo       // the input file, for the rejected rows; nil skips them
	Now        func() time.Time // the clock for "generated at"; nil means time.Now
}

// InputInfo names the input file a run read, so the rejected rows can be
// written in its own format and columns.
type InputInfo struct {
	Path  string
	Sheet string // XLSX sheet; empty means the one the run used (the first)
}

func (o Options) normalize() (Options, error) {
	if o.Lang == "" {
		o.Lang = "pt"
	}
	if o.Lang != "pt" && o.Lang != "en" {
		return o, fmt.Errorf("reports: idioma %q desconhecido (use pt ou en)", o.Lang)
	}
	if o.CSVDialect == "" {
		o.CSVDialect = DialectExcel
	}
	if o.CSVDialect != DialectExcel && o.CSVDialect != DialectComma {
		return o, fmt.Errorf("reports: dialeto CSV %q desconhecido (use excel ou comma)", o.CSVDialect)
	}
	if len(o.Formats) == 0 {
		o.Formats = AllFormats
	}
	for _, f := range o.Formats {
		switch f {
		case FormatXLSX, FormatCSV, FormatJSON, FormatHTML:
		default:
			return o, fmt.Errorf("reports: formato %q desconhecido (use %s)", f, strings.Join(AllFormats, ", "))
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// ParseFormats splits a comma-separated list of formats ("xlsx,csv") and
// checks each one.
func ParseFormats(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		switch f {
		case FormatXLSX, FormatCSV, FormatJSON, FormatHTML:
			out = append(out, f)
		default:
			return nil, fmt.Errorf("formato %q desconhecido (use %s)", f, strings.Join(AllFormats, ", "))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nenhum formato em %q (use %s)", s, strings.Join(AllFormats, ", "))
	}
	return out, nil
}

// Write writes the reports of r into dir (created if missing) and returns the
// paths of the files written, in order. Each file is written to a temporary
// name and renamed, so a crash never leaves half a report. When opt.Input is
// set and rows were refused or denied, the rejected rows are written too; a
// failure there is returned after the other reports are written.
func Write(dir string, r *results.Results, opt Options) ([]string, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("reports: sem resultados")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("reports: criar %s: %w", dir, err)
	}
	var written []string
	for _, f := range opt.Formats {
		switch f {
		case FormatXLSX:
			p := filepath.Join(dir, FileXLSX)
			if err := WriteXLSXFile(p, r, opt); err != nil {
				return written, err
			}
			written = append(written, p)
		case FormatCSV:
			ps, err := WriteCSVFiles(dir, r, opt)
			written = append(written, ps...)
			if err != nil {
				return written, err
			}
		case FormatJSON:
			p := filepath.Join(dir, FileJSON)
			if err := writeAtomic(p, func(f *os.File) error { return WriteJSON(f, r) }); err != nil {
				return written, err
			}
			written = append(written, p)
		case FormatHTML:
			p := filepath.Join(dir, FileHTML)
			if err := writeAtomic(p, func(f *os.File) error { return WriteHTML(f, r, opt) }); err != nil {
				return written, err
			}
			written = append(written, p)
		}
	}
	if opt.Input != nil {
		p, err := WriteRejected(dir, r, *opt.Input, opt)
		if p != "" {
			written = append(written, p)
		}
		if err != nil {
			return written, err
		}
	}
	return written, nil
}

// writeAtomic writes path through fn into a temporary file in the same
// directory and renames it into place.
func writeAtomic(path string, fn func(f *os.File) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("reports: criar %s: %w", filepath.Dir(path), err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("reports: criar %s: %w", path, err)
	}
	tmp := f.Name()
	if err := fn(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("reports: escrever %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("reports: escrever %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("reports: escrever %s: %w", path, err)
	}
	return nil
}
