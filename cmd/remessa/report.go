package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"remessa/pipeline/results"
	"remessa/reports"
)

func init() {
	register(&command{
		Name:    "report",
		Summary: "escreve de novo os relatórios de uma execução a partir do seu results.json",
		Usage:   "RUNDIR [--lang pt|en] [--formats xlsx,csv,json,html] [--csv-dialect excel|comma] [--out DIR] [--input ARQUIVO] [--sheet ABA]",
		Run:     runReport,
	})
}

func runReport(args []string, stdout, stderr io.Writer) int {
	c := commands["report"]
	fs := newFlagSet(c, stdout, stderr)
	lang := fs.String("lang", "pt", "idioma dos rótulos: pt ou en")
	formatList := fs.String("formats", "xlsx,csv,json,html", "formatos, separados por vírgula")
	dialect := fs.String("csv-dialect", reports.DialectExcel, "CSV: excel (UTF-8 com BOM, ';') ou comma (UTF-8, ',')")
	out := fs.String("out", "", "pasta dos relatórios (padrão RUNDIR/reports)")
	input := fs.String("input", "", "planilha de entrada, para as linhas rejeitadas (padrão: a que a execução leu)")
	sheet := fs.String("sheet", "", "aba da planilha de entrada (XLSX)")
	noRejected := fs.Bool("no-rejected", false, "não escrever as linhas rejeitadas")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "remessa report: informe uma pasta de execução (RUNDIR)")
		fs.Usage()
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
	r, err := results.Load(filepath.Join(runDir, "results.json"))
	if err != nil {
		fmt.Fprintln(stderr, "remessa report:", err)
		return exitUsage
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join(runDir, "reports")
	}
	opt := reports.Options{Formats: formatsList, Lang: *lang, CSVDialect: *dialect}
	if !*noRejected && (r.Totals.Refused.Rows > 0 || r.Totals.Denied.Rows > 0) {
		path := *input
		if path == "" {
			path = r.Run.InputFile
		}
		if _, err := os.Stat(path); path != "" && err == nil {
			opt.Input = &reports.InputInfo{Path: path, Sheet: *sheet}
		} else {
			fmt.Fprintf(stderr, "remessa report: aviso: entrada %q não encontrada; as linhas rejeitadas não serão escritas (use --input)\n", path)
		}
	}
	written, err := reports.Write(dir, r, opt)
	for _, p := range written {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		fmt.Fprintln(stderr, "remessa report:", err)
		return exitInternal
	}
	if ok, diff := r.Totals.Reconciles(); !ok {
		fmt.Fprintln(stderr, "remessa report: os totais de results.json não conferem:", diff)
		return exitProblems
	}
	return exitOK
}
