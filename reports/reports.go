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
	"errors"
	"fmt"
	"io"
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
	Path  string // empty means the run's own (RunInfo.InputFile)
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
	if r == nil {
		return nil, fmt.Errorf("reports: sem resultados")
	}
	written, _, err := write(dir, memorySource(r), "", opt)
	return written, err
}

// WriteFromFile writes the reports of the results.json at path, like Write,
// decoding its rows one at a time: the memory needed does not grow with the
// number of rows. It also returns the run's identity and totals (Rows nil),
// once read.
func WriteFromFile(dir, path string, opt Options) ([]string, *results.Results, error) {
	written, r, err := write(dir, fileSource(path), path, opt)
	if errors.Is(err, errLayout) {
		full, lerr := results.Load(path)
		if lerr != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrBadResults, lerr)
		}
		return write(dir, memorySource(full), "", opt)
	}
	return written, r, err
}

// RowSource feeds a run's rows, in input order, to yield (which must not
// keep a row it is given to change it: each row is a new value), and
// returns their totals.
type RowSource func(yield func(*results.Row) error) (results.Totals, error)

// WriteStream writes the reports of the run head describes (its Version
// and Run; its Rows and Totals are ignored) from rows as they come, like
// Write, without holding them: the memory needed does not grow with the
// number of rows. It returns the run's identity and totals (Rows nil).
func WriteStream(dir string, head *results.Results, rows RowSource, opt Options) ([]string, *results.Results, error) {
	if head == nil || rows == nil {
		return nil, nil, fmt.Errorf("reports: sem resultados")
	}
	src := func(start func(*results.Results) error, row func(*results.Row) error) (*results.Results, error) {
		h := &results.Results{Version: head.Version, Run: head.Run}
		if err := start(h); err != nil {
			return nil, err
		}
		t, err := rows(row)
		if err != nil {
			return nil, err
		}
		return &results.Results{Version: head.Version, Run: head.Run, Totals: t}, nil
	}
	return write(dir, src, "", opt)
}

// ErrNoInput is returned (wrapped, after the other reports are written) when
// the rejected rows were asked for but the input file is not there.
var ErrNoInput = errors.New("a planilha de entrada não foi encontrada; as linhas rejeitadas não foram escritas")

// write runs the pass. jsonFrom, when set, is a results.json to copy as is
// instead of encoding the rows again.
func write(dir string, src source, jsonFrom string, opt Options) ([]string, *results.Results, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("reports: criar %s: %w", dir, err)
	}
	var sinks []sink
	for _, f := range opt.Formats {
		switch f {
		case FormatXLSX:
			sinks = append(sinks, &xlsxSink{path: filepath.Join(dir, FileXLSX), opt: opt})
		case FormatCSV:
			sinks = append(sinks, &csvSink{dir: dir, opt: opt})
		case FormatJSON:
			if jsonFrom != "" {
				sinks = append(sinks, &copySink{from: jsonFrom, path: filepath.Join(dir, FileJSON)})
			} else {
				sinks = append(sinks, &lazyJSON{path: filepath.Join(dir, FileJSON)})
			}
		case FormatHTML:
			sinks = append(sinks, &htmlSink{path: filepath.Join(dir, FileHTML), opt: opt})
		}
	}
	d := newDigest(opt.Lang)
	if opt.Input != nil {
		d.rejected = &rejectedSpill{}
		defer d.rejected.close()
	}
	written, r, err := runPass(src, sinks, d)
	if err != nil {
		return written, r, err
	}
	var mismatch error
	if key, rows, tot, ok := rowsMatchTotals(r.Totals, d); !ok {
		mismatch = fmt.Errorf("reports: %w: %s: as linhas somam %d linha(s), %d centavos; os totais dizem %d, %d",
			ErrRowsNotTotals, tr("pt", key), rows.Rows, rows.AmountCents, tot.Rows, tot.AmountCents)
	}
	if opt.Input != nil && d.rejected.len() > 0 {
		in := *opt.Input
		if in.Path == "" {
			in.Path = r.Run.InputFile
		}
		if st, serr := os.Stat(in.Path); in.Path == "" || serr != nil || st.IsDir() {
			return written, r, errors.Join(fmt.Errorf("reports: %w (%q)", ErrNoInput, in.Path), mismatch)
		}
		p, err := writeRejected(dir, r.Run, d.rejected, in, opt)
		if p != "" {
			written = append(written, p)
		}
		if err != nil {
			return written, r, errors.Join(err, mismatch)
		}
	}
	return written, r, mismatch
}

// ErrRowsNotTotals is returned (wrapped, after every report is written, each
// saying so) when the totals in results.json are not the sums of its rows.
var ErrRowsNotTotals = errors.New("os totais de results.json não são a soma das suas linhas")

// lazyJSON is a jsonSink that opens its file at start.
type lazyJSON struct {
	jsonSink
	path string
}

func (s *lazyJSON) start(h *results.Results) error {
	f, err := createAtomic(s.path)
	if err != nil {
		return err
	}
	s.file, s.w = f, f
	return s.jsonSink.start(h)
}

// copySink copies a file (the run's results.json) into the reports.
type copySink struct{ from, path string }

func (s *copySink) start(*results.Results) error { return nil }
func (s *copySink) row(*results.Row) error       { return nil }
func (s *copySink) abort()                       {}

func (s *copySink) finish(*results.Results, *digest) ([]string, error) {
	if abs1, err1 := filepath.Abs(s.from); err1 == nil {
		if abs2, err2 := filepath.Abs(s.path); err2 == nil && abs1 == abs2 {
			return []string{s.path}, nil // already there
		}
	}
	in, err := os.Open(s.from)
	if err != nil {
		return nil, fmt.Errorf("reports: %w", err)
	}
	defer in.Close()
	if err := writeAtomic(s.path, func(w io.Writer) error { _, err := io.Copy(w, in); return err }); err != nil {
		return nil, err
	}
	return []string{s.path}, nil
}
