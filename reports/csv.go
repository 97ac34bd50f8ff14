package reports

import (
	"bufio"
	"encoding/csv"
	"io"
	"path/filepath"
	"strconv"

	"remessa/pipeline/results"
)

// utf8BOM starts every CSV of the excel dialect, so Excel detects UTF-8.
const utf8BOM = "\uFEFF"

// csvTable writes one table as CSV in a dialect.
type csvTable struct {
	t     table
	bw    *bufio.Writer
	cw    *csv.Writer
	rec   []string
	excel bool
	yield func([]cell) error
}

func newCSVTable(w io.Writer, t table, opt Options) (*csvTable, error) {
	c := &csvTable{t: t, bw: bufio.NewWriterSize(w, 64<<10), rec: make([]string, len(t.cols)), excel: opt.CSVDialect != DialectComma}
	if c.excel {
		c.bw.WriteString(utf8BOM)
	}
	c.cw = csv.NewWriter(c.bw)
	if c.excel {
		c.cw.Comma = ';'
		c.cw.UseCRLF = true
	}
	for i, col := range t.cols {
		c.rec[i] = tr(opt.Lang, col.key)
	}
	c.yield = func(cells []cell) error {
		for i, v := range cells {
			c.rec[i] = csvValue(v, c.excel)
		}
		return c.cw.Write(c.rec)
	}
	return c, c.cw.Write(c.rec)
}

func (c *csvTable) row(row *results.Row) error { return c.t.emit(row, c.yield) }

func (c *csvTable) lines(rows [][]cell) error {
	for _, r := range rows {
		if err := c.yield(r); err != nil {
			return err
		}
	}
	return nil
}

func (c *csvTable) flush() error {
	c.cw.Flush()
	if err := c.cw.Error(); err != nil {
		return err
	}
	return c.bw.Flush()
}

// csvSink writes resumo.csv, linhas.csv, parcelas.csv (carnet jobs) and
// problemas.csv into a directory.
type csvSink struct {
	dir    string
	opt    Options
	files  []*atomicFile
	tables []*csvTable
}

func (s *csvSink) start(h *results.Results) error {
	for _, t := range rowTables(h.Run.Kind, s.opt.Lang) {
		f, err := createAtomic(filepath.Join(s.dir, t.file))
		if err != nil {
			return err
		}
		s.files = append(s.files, f)
		ct, err := newCSVTable(f, t, s.opt)
		if err != nil {
			return err
		}
		s.tables = append(s.tables, ct)
	}
	return nil
}

func (s *csvSink) row(row *results.Row) error {
	for _, t := range s.tables {
		if err := t.row(row); err != nil {
			return err
		}
	}
	return nil
}

func (s *csvSink) finish(r *results.Results, d *digest) ([]string, error) {
	summary := filepath.Join(s.dir, FileSummaryCSV)
	err := writeAtomic(summary, func(w io.Writer) error {
		ct, err := newCSVTable(w, table{cols: summaryColumns}, s.opt)
		if err != nil {
			return err
		}
		if err := ct.lines(summaryRows(r, d, s.opt.Lang)); err != nil {
			return err
		}
		return ct.flush()
	})
	if err != nil {
		s.abort()
		return nil, err
	}
	written := []string{summary}
	for i, t := range s.tables {
		if err := t.flush(); err != nil {
			s.abort()
			return written, err
		}
		if err := s.files[i].commit(); err != nil {
			s.abort()
			return written, err
		}
		written = append(written, s.files[i].path)
		s.files[i] = nil
	}
	return written, nil
}

func (s *csvSink) abort() {
	for _, f := range s.files {
		f.abort()
	}
}

// WriteCSV writes one report table as CSV to w. name is the file name of the
// table: "resumo.csv", "linhas.csv", "parcelas.csv" or "problemas.csv".
func WriteCSV(w io.Writer, name string, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	if name == FileSummaryCSV {
		d := newDigest(opt.Lang)
		for i := range r.Rows {
			d.add(&r.Rows[i])
		}
		ct, err := newCSVTable(w, table{cols: summaryColumns}, opt)
		if err != nil {
			return err
		}
		if err := ct.lines(summaryRows(r, d, opt.Lang)); err != nil {
			return err
		}
		return ct.flush()
	}
	for _, t := range []table{linesTable(opt.Lang), parcelsTable(opt.Lang), problemsTable(opt.Lang)} {
		if t.file != name {
			continue
		}
		ct, err := newCSVTable(w, t, opt)
		if err != nil {
			return err
		}
		for i := range r.Rows {
			if err := ct.row(&r.Rows[i]); err != nil {
				return err
			}
		}
		return ct.flush()
	}
	return errUnknownTable(name)
}

type errUnknownTable string

func (e errUnknownTable) Error() string {
	return "reports: tabela CSV desconhecida " + strconv.Quote(string(e)) + " (use resumo.csv, linhas.csv, parcelas.csv ou problemas.csv)"
}

// csvValue renders a cell for a CSV dialect: excel uses the decimal comma and
// dd/mm/yyyy dates and defuses text that a spreadsheet would take for a
// formula (a leading = + - @ gets a leading apostrophe); comma uses the
// decimal point and ISO dates and leaves text as it is.
func csvValue(c cell, excel bool) string {
	switch c.kind {
	case kMoney:
		if excel {
			return plainDecimal(c.n, ',')
		}
		return plainDecimal(c.n, '.')
	case kInt:
		return strconv.FormatInt(c.n, 10)
	case kDate:
		if excel {
			return formatDate("pt", c.s)
		}
		return c.s
	}
	if excel {
		return defuseFormula(c.s)
	}
	return c.s
}

// defuseFormula gives text that a spreadsheet would take for a formula (a
// leading = + - @, tab or carriage return) a leading apostrophe, so it
// opens as the text it is (a payer named =HYPERLINK(...) stays a name).
func defuseFormula(s string) string {
	if s != "" {
		switch s[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + s
		}
	}
	return s
}
