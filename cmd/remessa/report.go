package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"remessa/reports"
)

func init() {
	register(&command{
		Name:    "report",
		Summary: "escreve de novo os relatórios de uma execução a partir do seu results.json",
		Usage:   "RUNDIR [--lang pt|en] [--formats xlsx,csv,json,html] [--csv-dialect excel|comma] [--out DIR] [--input ARQUIVO] [--sheet ABA] [--no-rejected]",
		Run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	c := commands["report"]
	flags := newFlagSet(c, stdout, stderr)
	lang := flags.String("lang", "pt", "idioma dos rótulos: pt ou en")
	formatList := flags.String("formats", "xlsx,csv,json,html", "formatos, separados por vírgula")
	dialect := flags.String("csv-dialect", reports.DialectExcel, "CSV: excel (UTF-8 com BOM, ';') ou comma (UTF-8, ',')")
	out := flags.String("out", "", "pasta dos relatórios (padrão RUNDIR/reports)")
	input := flags.String("input", "", "planilha de entrada, para as linhas rejeitadas (padrão: a que a execução leu)")
	sheet := flags.String("sheet", "", "aba da planilha de entrada (XLSX)")
	noRejected := flags.Bool("no-rejected", false, "não escrever as linhas rejeitadas")
	db := flags.String("db", "", "banco Postgres (remessa run --db): RUNDIR é o id de uma execução de lá")
	pos, code, ok := parseFlags(flags, args)
	if !ok {
		return code
	}
	if dsn := dbOf(*db, pos); dsn != "" {
		return reportDB(dsn, pos, *out, stdout, stderr)
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "remessa report: informe uma pasta de execução (RUNDIR)")
		flags.Usage()
		return exitUsage
	}
	formatsList, err := reports.ParseFormats(*formatList)
	if err != nil {
		fmt.Fprintln(stderr, "remessa report: --formats:", err)
		return exitUsage
	}
	if *lang != "pt" && *lang != "en" {
		fmt.Fprintf(stderr, "remessa report: --lang %q: use pt ou en\n", *lang)
		return exitUsage
	}
	if *dialect != reports.DialectExcel && *dialect != reports.DialectComma {
		fmt.Fprintf(stderr, "remessa report: --csv-dialect %q: use excel ou comma\n", *dialect)
		return exitUsage
	}
	runDir := pos[0]
	dir := *out
	if dir == "" {
		dir = filepath.Join(runDir, "reports")
	}
	opt := reports.Options{Formats: formatsList, Lang: *lang, CSVDialect: *dialect}
	if !*noRejected {
		opt.Input = &reports.InputInfo{Path: *input, Sheet: *sheet}
	}
	written, r, err := reports.WriteFromFile(dir, filepath.Join(runDir, "results.json"), opt)
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	rowsNotTotals := errors.Is(err, reports.ErrRowsNotTotals)
	switch {
	case errors.Is(err, reports.ErrNoInput), errors.Is(err, reports.ErrInputChanged):
		fmt.Fprintf(stderr, "remessa report: aviso: %v; use --input\n", err)
	case rowsNotTotals:
		fmt.Fprintln(stderr, "remessa report:", err)
	case errors.Is(err, reports.ErrBadResults):
		fmt.Fprintln(stderr, "remessa report:", err)
		return exitUsage
	case err != nil:
		fmt.Fprintln(stderr, "remessa report:", err)
		return exitInternal
	}
	if ok, diff := r.Totals.Reconciles(); !ok {
		fmt.Fprintln(stderr, "remessa report: os totais de results.json não conferem:", diff)
		return exitProblems
	}
	if rowsNotTotals {
		return exitProblems
	}
	return exitOK
}
