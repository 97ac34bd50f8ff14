package reports

import (
	"bufio"
	"encoding/csv"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"remessa/pipeline/results"
)

// utf8BOM starts every CSV of the excel dialect, so Excel detects UTF-8.
const utf8BOM = "\uFEFF"

// csvTables returns the tables written as CSV files, in order.
func csvTables(r *results.Results, lang string) []table {
	ts := []table{summaryTable(r, lang), linesTable(r, lang)}
	if hasParcels(r) {
		ts = append(ts, parcelsTable(r, lang))
	}
	return append(ts, problemsTable(r, lang))
}

// WriteCSVFiles writes resumo.csv, linhas.csv, parcelas.csv (carnet jobs)
// and problemas.csv into dir and returns their paths.
func WriteCSVFiles(dir string, r *results.Results, opt Options) ([]string, error) {
	opt, err := opt.normalize()
	if err != nil {
		return nil, err
	}
	var written []string
	for _, t := range csvTables(r, opt.Lang) {
		p := filepath.Join(dir, t.file)
		err := writeAtomic(p, func(f *os.File) error { return writeTableCSV(f, t, opt) })
		if err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// WriteCSV writes one report table as CSV to w. name is the file name of the
// table: "resumo.csv", "linhas.csv", "parcelas.csv" or "problemas.csv".
func WriteCSV(w io.Writer, name string, r *results.Results, opt Options) error {
	opt, err := opt.normalize()
	if err != nil {
		return err
	}
	for _, t := range []table{summaryTable(r, opt.Lang), linesTable(r, opt.Lang), parcelsTable(r, opt.Lang), problemsTable(r, opt.Lang)} {
		if t.file == name {
			return writeTableCSV(w, t, opt)
		}
	}
	return errUnknownTable(name)
}

type errUnknownTable string

func (e errUnknownTable) Error() string {
	return "reports: tabela CSV desconhecida " + strconv.Quote(string(e)) + " (use resumo.csv, linhas.csv, parcelas.csv ou problemas.csv)"
}

func writeTableCSV(w io.Writer, t table, opt Options) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	excel := opt.CSVDialect != DialectComma
	if excel {
		if _, err := bw.WriteString(utf8BOM); err != nil {
			return err
		}
	}
	cw := csv.NewWriter(bw)
	if excel {
		cw.Comma = ';'
		cw.UseCRLF = true
	}
	rec := make([]string, len(t.cols))
	for i, c := range t.cols {
		rec[i] = tr(opt.Lang, c.key)
	}
	if err := cw.Write(rec); err != nil {
		return err
	}
	var err error
	t.rows(func(cells []cell) bool {
		for i, c := range cells {
			rec[i] = csvValue(c, excel)
		}
		err = cw.Write(rec)
		return err == nil
	})
	if err != nil {
		return err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
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
	if excel && c.s != "" {
		switch c.s[0] {
		case '=', '+', '-', '@', '\t', '\r':
			return "'" + c.s
		}
	}
	return c.s
}
