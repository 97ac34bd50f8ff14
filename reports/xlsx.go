package reports

import (
	"fmt"
	"io"
	"os"
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

// WriteXLSXFile writes the XLSX report to path (through a temporary file).
func WriteXLSXFile(path string, r *results.Results, opt Options) error {
	return writeAtomic(path, func(f *os.File) error { return WriteXLSX(f, r, opt) })
}

// WriteXLSX writes the XLSX report to w: sheets Resumo, Linhas, Parcelas
// (carnet jobs) and Problemas (Summary, Rows, Parcels, Problems in English).
// Big sheets are streamed, so memory stays flat with the number of rows.
func WriteXLSX(w io.Writer, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := newXLSXStyles(f)
	if err != nil {
		return err
	}
	summary := tr(opt.Lang, "summary")
	if err := f.SetSheetName("Sheet1", summary); err != nil {
		return err
	}
	if err := writeXLSXSummary(f, summary, st, r, opt); err != nil {
		return fmt.Errorf("planilha %s: %w", summary, err)
	}
	tables := []table{linesTable(r, opt.Lang)}
	if hasParcels(r) {
		tables = append(tables, parcelsTable(r, opt.Lang))
	}
	tables = append(tables, problemsTable(r, opt.Lang))
	for _, t := range tables {
		name := tr(opt.Lang, t.sheet)
		if _, err := f.NewSheet(name); err != nil {
			return err
		}
		if err := writeXLSXTable(f, name, st, t, opt.Lang); err != nil {
			return fmt.Errorf("planilha %s: %w", name, err)
		}
	}
	f.SetActiveSheet(0)
	_, err = f.WriteTo(w)
	return err
}

func writeXLSXTable(f *excelize.File, sheet string, st *xlsxStyles, t table, lang string) error {
	sw, err := f.NewStreamWriter(sheet)
	if err != nil {
		return err
	}
	for i, c := range t.cols {
		if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
			return err
		}
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft",
		Selection: []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}}}); err != nil {
		return err
	}
	vals := make([]any, len(t.cols))
	for i, c := range t.cols {
		vals[i] = excelize.Cell{StyleID: st.header, Value: tr(lang, c.key)}
	}
	if err := sw.SetRow("A1", vals, excelize.RowOpts{Height: 30}); err != nil {
		return err
	}
	row := 1
	t.rows(func(cells []cell) bool {
		row++
		for i, c := range cells {
			vals[i] = xlsxCell(c, st)
		}
		ref, _ := excelize.CoordinatesToCellName(1, row)
		err = sw.SetRow(ref, vals)
		return err == nil
	})
	if err != nil {
		return err
	}
	last, _ := excelize.CoordinatesToCellName(len(t.cols), max(row, 2))
	show := true
	if err := sw.AddTable(&excelize.Table{Range: "A1:" + last, Name: tr("en", t.sheet), StyleName: "TableStyleLight1", ShowRowStripes: &show}); err != nil {
		return err
	}
	return sw.Flush()
}

// xlsxCell turns a report cell into a typed, styled excelize cell; an empty
// value gives no cell at all.
func xlsxCell(c cell, st *xlsxStyles) any {
	switch c.kind {
	case kMoney:
		// Exact: cents/100 formats back to the same two decimals.
		return excelize.Cell{StyleID: st.money, Value: float64(c.n) / 100}
	case kInt:
		return excelize.Cell{StyleID: st.integer, Value: c.n}
	case kDate:
		if c.s == "" {
			return nil
		}
		t, err := time.Parse("2006-01-02", c.s)
		if err != nil {
			return excelize.Cell{StyleID: st.text, Value: c.s}
		}
		return excelize.Cell{StyleID: st.date, Value: t}
	}
	if c.s == "" {
		return nil
	}
	return excelize.Cell{StyleID: st.text, Value: c.s}
}

// writeXLSXSummary lays the Resumo sheet out for people: title, service
// banner, run identity, totals with the reconciliation, amounts by due month
// and split shares.
func writeXLSXSummary(f *excelize.File, sheet string, st *xlsxStyles, r *results.Results, opt Options) error {
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
	for col, w := range map[string]float64{"A": 36, "B": 30, "C": 16, "D": 18} {
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
	for _, fl := range runFields(lang, r.Run, true) {
		set("A", tr(lang, fl[0]), st.label)
		set("B", fl[1], st.text)
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
	ok, sentence := reconciliation(lang, r.Totals)
	set("A", tr(lang, "reconciliation"), st.label)
	if ok {
		set("B", sentence, st.ok)
	} else {
		set("B", sentence, st.bad)
	}
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
	if lines := splitLines(r); len(lines) > 0 {
		set("A", tr(lang, "split"), st.bold)
		row++
		set("A", tr(lang, "recipient"), st.header)
		set("B", tr(lang, "month"), st.header)
		set("C", tr(lang, "amount"), st.header)
		row++
		for _, s := range lines {
			set("A", recipientLabel(lang, s), st.text)
			set("B", s.Month, st.text)
			set("C", float64(s.Cents)/100, st.money)
			row++
		}
		row++
	}
	set("A", tr(lang, "generated_at")+" "+formatTimestamp(lang, opt.Now().UTC().Format(time.RFC3339)), st.generate)
	return err
}
