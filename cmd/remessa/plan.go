package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"remessa/pipeline"
	"remessa/pipeline/movements"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "plan",
		Summary: "mostra o que uma execução faria (emissões, lotes, totais, chamadas, dias), sem enviar nada",
		Usage:   "JOB [--format text|json] [--lang pt|en] [--runs-dir DIR]",
		Run:     runPlan,
	})
}

func runPlan(args []string, stdout, stderr io.Writer) int {
	c := commands["plan"]
	fs := newFlagSet(c, stdout, stderr)
	format := fs.String("format", "text", "saída: text ou json")
	lang := fs.String("lang", "pt", "idioma: pt ou en")
	runsDir := fs.String("runs-dir", "", "pasta das execuções a consultar (padrão: reports.dir do job, remessa-out)")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fmt.Fprintf(stderr, "Uso: remessa plan %s\n", c.Usage)
		return exitUsage
	}
	setSoftMemoryLimit()
	job, err := pipeline.Load(pos[0], pipeline.LoadOptions{})
	var plan *pipeline.Plan
	var mov *movements.Plan
	if err == nil {
		plan, err = run.Plan(context.Background(), pos[0], job, *runsDir)
	}
	if err == nil {
		if mov, err = movements.Scan(context.Background(), job, *runsDir, ""); err == nil && mov.Titles > 0 {
			plan.Movements, _ = json.Marshal(mov)
		}
	}
	if err != nil {
		rep := pipeline.NewValidationReport(pos[0], job, nil, err)
		if *format == "json" {
			rep.WriteJSON(stdout)
		} else {
			rep.WriteText(stderr, *lang)
		}
		return exitUsage
	}
	if *format == "json" {
		if err := plan.WriteJSON(stdout); err != nil {
			return exitInternal
		}
	} else {
		plan.WriteText(stdout, *lang)
		mov.WriteText(stdout)
	}
	if plan.Refused > 0 || len(mov.Refused) > 0 {
		return exitProblems
	}
	return exitOK
}
