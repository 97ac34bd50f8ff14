package main

import (
	"fmt"
	"io"
	"os"

	"remessa/pipeline"
	"remessa/pipeline/actions"
)

func init() {
	register(&command{
		Name:    "schema",
		Summary: "imprime o JSON Schema (draft 2020-12) do arquivo de job (ou de ação, com --action), para editores",
		Usage:   "[--action] [--lang pt|en] [-o arquivo.json]",
		Run:     runSchema,
	})
}

func runSchema(args []string, stdout, stderr io.Writer) int {
	c := commands["schema"]
	fs := newFlagSet(c, stdout, stderr)
	lang := fs.String("lang", "pt", "idioma das descrições: pt ou en")
	out := fs.String("o", "", "grava em um arquivo em vez da saída padrão")
	action := fs.Bool("action", false, "o schema do job de ação (action: em vez de issue:)")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 0 {
		fmt.Fprintf(stderr, "Uso: remessa schema %s\n", c.Usage)
		return exitUsage
	}
	b := pipeline.SchemaJSON(*lang)
	if *action {
		b = actions.SchemaJSON(*lang)
	}
	if *out != "" {
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintln(stderr, "remessa schema:", err)
			return exitInternal
		}
		return exitOK
	}
	stdout.Write(b)
	return exitOK
}
