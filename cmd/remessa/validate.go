package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"remessa/pipeline"
)

func init() {
	register(&command{
		Name:    "validate",
		Summary: "confere o job e todas as linhas da planilha, sem enviar nada",
		Usage:   "JOB [--format text|json] [--lang pt|en]",
		Run:     runValidate,
	})
}

func runValidate(args []string, stdout, stderr io.Writer) int {
	c := commands["validate"]
	fs := newFlagSet(c, stdout, stderr)
	format := fs.String("format", "text", "saída: text ou json")
	lang := fs.String("lang", "pt", "idioma das mensagens: pt ou en")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fmt.Fprintf(stderr, "Uso: remessa validate %s\n", c.Usage)
		return exitUsage
	}
	setSoftMemoryLimit()
	job, err := pipeline.Load(pos[0], pipeline.LoadOptions{})
	var v *pipeline.Validation
	if err == nil {
		v, err = pipeline.ValidateNotes(context.Background(), job)
	}
	rep := pipeline.NewValidationReport(pos[0], job, v, err)
	if *format == "json" {
		if err := rep.WriteJSON(stdout); err != nil {
			return exitInternal
		}
	} else {
		rep.WriteText(stdout, *lang)
	}
	return rep.ExitCode
}

// setSoftMemoryLimit asks the garbage collector to keep the heap near
// pipeline.SoftMemoryLimit unless GOMEMLIMIT says otherwise.
func setSoftMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(pipeline.SoftMemoryLimit)
	}
}
