package reports

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/xuri/excelize/v2"

	"remessa/pipeline/results"
)

// Number formats of the XLSX report. Excel shows the separators of the
// reader's locale, so "#,##0.00" reads "1.234,56" in a Brazilian Excel.
const (
	xlsxMoneyFormat = `"R$" #,##0.00;-"R$" #,##0.00`
	xlsxDateFormat  = `dd/mm/yyyy`
	xlsxTextFormat  = 49 // built-in "@"
	xlsxIntFormat   = 1  // built-in "0"
)

// xlsxStyles holds the style ids of one workbook.
type xlsxStyles struct {
	header, text, money, date, integer    int
	title, label, bold, ok, bad, generate int
	banner                                map[string]int // by service label key
}

func newXLSXStyles(f *excelize.File) (*xlsxStyles, error) {
	s := &xlsxStyles{banner: map[string]int{}}
	money, date := xlsxMoneyFormat, xlsxDateFormat
	defs := []struct {
		dst *int
		st  excelize.Style
	}{
		{&s.header, excelize.Style{
			Font:      &excelize.Font{Bold: true},
			Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"D9E1F2"}},
			Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
			Border:    []excelize.Border{{Type: "bottom", Color: "8EA9DB", Style: 1}},
			NumFmt:    xlsxTextFormat,
		}},
		{&s.text, excelize.Style{NumFmt: xlsxTextFormat}},
		{&s.money, excelize.Style{CustomNumFmt: &money}},
		{&s.date, excelize.Style{CustomNumFmt: &date, Alignment: &excelize.Alignment{Horizontal: "center"}}},
		{&s.integer, excelize.Style{NumFmt: xlsxIntFormat}},
		{&s.title, excelize.Style{Font: &excelize.Font{Bold: true, Size: 16}}},
		{&s.label, excelize.Style{Font: &excelize.Font{Color: "555555"}, NumFmt: xlsxTextFormat}},
		{&s.bold, excelize.Style{Font: &excelize.Font{Bold: true}, NumFmt: xlsxTextFormat}},
		{&s.ok, excelize.Style{Font: &excelize.Font{Bold: true, Color: "1E7B34"}, NumFmt: xlsxTextFormat}},
		{&s.bad, excelize.Style{Font: &excelize.Font{Bold: true, Color: "C00000"}, NumFmt: xlsxTextFormat}},
		{&s.generate, excelize.Style{Font: &excelize.Font{Italic: true, Color: "777777"}, NumFmt: xlsxTextFormat}},
	}
	for _, d := range defs {
		id, err := f.NewStyle(&d.st)
		if err != nil {
			return nil, err
		}
		*d.dst = id
	}
	for key, colors := range map[string][2]string{
		"service_production": {"C00000", "FFFFFF"},
		"service_sandbox":    {"FFC000", "000000"},
		"service_embedded":   {"2F75B5", "FFFFFF"},
		"service_unknown":    {"7F7F7F", "FFFFFF"},
	} {
		id, err := f.NewStyle(&excelize.Style{
			Font:      &excelize.Font{Bold: true, Size: 14, Color: colors[1]},
			Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{colors[0]}},
			Alignment: &excelize.Alignment{Horizontal: "center", Vertical: "center"},
		})
		if err != nil {
			return nil, err
		}
		s.banner[key] = id
	}
	return s, nil
}

// xlsxSink writes the XLSX report: sheets Resumo, Linhas, Parcelas (carnet
// jobs) and Problemas (Summary, Rows, Parcels, Problems in English). The
// row sheets are streamed, so memory stays flat with the number of rows.
type xlsxSink struct {
	w      io.Writer
	path   string // when writing a file
	opt    Options
	f      *excelize.File
	st     *xlsxStyles
	sheets []*xlsxTable
}

// xlsxTable is one streamed table, on one sheet or more.
type xlsxTable struct {
	f     *excelize.File
	base  string // sheet name of the first part
	lang  string
	part  int
	t     table
	sw    *excelize.StreamWriter
	vals  []any
	cells []excelize.Cell
	line  int
	st    *xlsxStyles
	yield func([]cell) error
}

func (s *xlsxSink) start(h *results.Results) error {
	s.f = excelize.NewFile()
	var err error
	if s.st, err = newXLSXStyles(s.f); err != nil {
		return err
	}
	if err := s.f.SetSheetName("Sheet1", tr(s.opt.Lang, "summary")); err != nil {
		return err
	}
	for _, t := range rowTables(h.Run.Kind, s.opt.Lang) {
		x, err := newXLSXTable(s.f, tr(s.opt.Lang, t.sheet), s.st, t, s.opt.Lang)
		if err != nil {
			return fmt.Errorf("planilha %s: %w", tr(s.opt.Lang, t.sheet), err)
		}
		s.sheets = append(s.sheets, x)
	}
	return nil
}

func (s *xlsxSink) row(row *results.Row) error {
	for _, x := range s.sheets {
		if err := x.t.emit(row, x.yield); err != nil {
			return err
		}
	}
	return nil
}

func (s *xlsxSink) finish(r *results.Results, d *digest) ([]string, error) {
	defer s.abort()
	for _, x := range s.sheets {
		if err := x.close(); err != nil {
			return nil, err
		}
	}
	summary := tr(s.opt.Lang, "summary")
	if err := writeXLSXSummary(s.f, summary, s.st, r, d, s.opt); err != nil {
		return nil, fmt.Errorf("planilha %s: %w", summary, err)
	}
	if s.path == "" {
		return nil, saveXLSX(s.f, s.w)
	}
	if err := writeAtomic(s.path, func(w io.Writer) error { return saveXLSX(s.f, w) }); err != nil {
		return nil, err
	}
	return []string{s.path}, nil
}

func (s *xlsxSink) abort() {
	if s.f != nil {
		s.f.Close() // removes the stream writers' temporary files
		s.f = nil
	}
}

// WriteXLSXFile writes the XLSX report to path (through a temporary file).
func WriteXLSXFile(path string, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	_, _, err = runPass(memorySource(r), []sink{&xlsxSink{path: path, opt: opt}}, newDigest(opt.Lang))
	return err
}

// WriteXLSX writes the XLSX report to w.
func WriteXLSX(w io.Writer, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	_, _, err = runPass(memorySource(r), []sink{&xlsxSink{w: w, opt: opt}}, newDigest(opt.Lang))
	return err
}

// saveXLSX zips the workbook straight into w (excelize's WriteTo would build
// the whole file in memory first), with fast compression.
func saveXLSX(f *excelize.File, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(bw)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, flate.BestSpeed)
		})
		return zw
	})
	if _, err := f.WriteTo(io.Discard); err != nil {
		return err
	}
	return bw.Flush()
}

// xlsxMaxRows is the number of rows of a worksheet (Excel's limit); a
// table longer than that goes on in "Parcelas (2)" and so on.
var xlsxMaxRows = 1_048_576

func newXLSXTable(f *excelize.File, sheet string, st *xlsxStyles, t table, lang string) (*xlsxTable, error) {
	x := &xlsxTable{f: f, base: sheet, lang: lang, t: t, vals: make([]any, len(t.cols)), cells: make([]excelize.Cell, len(t.cols)), st: st}
	if err := x.open(1); err != nil {
		return nil, err
	}
	x.yield = func(cells []cell) error {
		if x.line >= xlsxMaxRows {
			if err := x.close(); err != nil {
				return err
			}
			if err := x.open(x.part + 1); err != nil {
				return err
			}
		}
		x.line++
		for i, c := range cells {
			x.vals[i] = x.cell(i, c)
		}
		ref, _ := excelize.CoordinatesToCellName(1, x.line)
		return x.sw.SetRow(ref, x.vals)
	}
	return x, nil
}

// open starts part n of the table on its own sheet, with the header row.
func (x *xlsxTable) open(n int) error {
	sheet := x.base
	if n > 1 {
		sheet = fmt.Sprintf("%s (%d)", x.base, n)
	}
	if _, err := x.f.NewSheet(sheet); err != nil {
		return err
	}
	sw, err := x.f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	for i, c := range x.t.cols {
		if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return err
	}
	header := make([]any, len(x.t.cols))
	for i, c := range x.t.cols {
		header[i] = excelize.Cell{StyleID: x.st.header, Value: tr(x.lang, c.key)}
	}
	if err := sw.SetRow("A1", header, excelize.RowOpts{Height: 30}); err != nil {
		return err
	}
	x.sw, x.part, x.line = sw, n, 1
	return nil
}

// close adds the table (autofilter) over the data and flushes the sheet.
func (x *xlsxTable) close() error {
	last, _ := excelize.CoordinatesToCellName(len(x.t.cols), max(x.line, 2))
	name := tr("en", x.t.sheet)
	if x.part > 1 {
		name += strconv.Itoa(x.part)
	}
	show := true
	if err := x.sw.AddTable(&excelize.Table{Range: "A1:" + last, Name: name, StyleName: "TableStyleLight1", ShowRowStripes: &show}); err != nil {
		return err
	}
	return x.sw.Flush()
}

// cell fills the reused excelize cell i from c (nil when empty), so a row
// costs no allocation for the cells themselves.
func (x *xlsxTable) cell(i int, c cell) any {
	c2, ok := xlsxCell(c, x.st)
	if !ok {
		return nil
	}
	x.cells[i] = c2
	return &x.cells[i]
}

// xlsxCell turns a report cell into a typed, styled excelize cell; false
// for an empty value (no cell at all).
func xlsxCell(c cell, st *xlsxStyles) (excelize.Cell, bool) {
	switch c.kind {
	case kMoney:
		// Exact: cents/100 formats back to the same two decimals.
		return excelize.Cell{StyleID: st.money, Value: float64(c.n) / 100}, true
	case kInt:
		return excelize.Cell{StyleID: st.integer, Value: c.n}, true
	case kDate:
		if c.s == "" {
			return excelize.Cell{}, false
		}
		t, err := time.Parse("2006-01-02", c.s)
		if err != nil {
			return excelize.Cell{StyleID: st.text, Value: c.s}, true
		}
		return excelize.Cell{StyleID: st.date, Value: t}, true
	}
	if c.s == "" {
		return excelize.Cell{}, false
	}
	return excelize.Cell{StyleID: st.text, Value: c.s}, true
}

// writeXLSXSummary lays the Resumo sheet out for people: title, service
// banner, run identity, totals with the reconciliation, amounts by due month
// and split shares.
func writeXLSXSummary(f *excelize.File, sheet string, st *xlsxStyles, r *results.Results, d *digest, opt Options) error {
	lang := opt.Lang
	row := 1
	var err error
	set := func(col string, v any, style int) {
		if err != nil {
			return
		}
		ref := fmt.Sprintf("%s%d", col, row)
		if err = f.SetCellValue(sheet, ref, v); err == nil && style != 0 {
			err = f.SetCellStyle(sheet, ref, ref, style)
		}
	}
	for col, w := range map[string]float64{"A": 40, "B": 22, "C": 18, "D": 30} {
		if err := f.SetColWidth(sheet, col, col, w); err != nil {
			return err
		}
	}
	title := tr(lang, "title")
	if r.Run.JobName != "" {
		title += " — " + r.Run.JobName
	}
	set("A", title, st.title)
	row++
	banner := serviceKey(r.Run.Service)
	set("A", tr(lang, banner), st.banner[banner])
	if err == nil {
		err = f.MergeCell(sheet, fmt.Sprintf("A%d", row), fmt.Sprintf("D%d", row))
	}
	if err == nil {
		err = f.SetRowHeight(sheet, row, 26)
	}
	row++
	if !r.Run.Complete {
		set("A", tr(lang, "incomplete"), st.bad)
		row++
	}
	row++
	set("A", tr(lang, "identity"), st.bold)
	row++
	merge := func() {
		if err == nil {
			err = f.MergeCell(sheet, fmt.Sprintf("B%d", row), fmt.Sprintf("D%d", row))
		}
	}
	for _, fl := range runFields(lang, r.Run, true) {
		set("A", tr(lang, fl[0]), st.label)
		set("B", fl[1], st.text)
		merge()
		row++
	}
	row++
	set("A", tr(lang, "outcome"), st.header)
	set("B", tr(lang, "count"), st.header)
	set("C", tr(lang, "amount"), st.header)
	row++
	for _, t := range tallies(r.Totals) {
		set("A", tr(lang, t.key), st.text)
		set("B", t.t.Rows, st.integer)
		set("C", float64(t.t.AmountCents)/100, st.money)
		row++
	}
	ok, sentence := reconciliation(lang, r.Totals, d)
	set("A", tr(lang, "reconciliation"), st.label)
	if ok {
		set("B", sentence, st.ok)
	} else {
		set("B", sentence, st.bad)
	}
	merge()
	row += 2
	if months := sortedMonths(r.Totals.IssuedByDueMonth); len(months) > 0 {
		set("A", tr(lang, "by_month"), st.bold)
		row++
		set("A", tr(lang, "month"), st.header)
		set("B", tr(lang, "amount"), st.header)
		row++
		for _, m := range months {
			set("A", m, st.text)
			set("B", float64(r.Totals.IssuedByDueMonth[m])/100, st.money)
			row++
		}
		row++
	}
	if lines := splitLines(r.Totals, d.own); len(lines) > 0 {
		set("A", tr(lang, "split"), st.bold)
		row++
		set("A", tr(lang, "recipient"), st.header)
		set("B", tr(lang, "month"), st.header)
		set("C", tr(lang, "amount"), st.header)
		row++
		for _, s := range lines {
			set("A", recipientLabel(lang, r.Run.Account, s), st.text)
			set("B", s.Month, st.text)
			set("C", float64(s.Cents)/100, st.money)
			row++
		}
		row++
	}
	set("A", tr(lang, "generated_at")+" "+formatTimestamp(lang, opt.Now().UTC().Format(time.RFC3339)), st.generate)
	return err
}
