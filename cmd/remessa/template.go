package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"remessa/formats"
	"remessa/pipeline"
)

func init() {
	register(&command{
		Name:    "template",
		Summary: "escreve uma planilha pronta para preencher (cabeçalhos, exemplo, instruções) e, se pedido, um job inicial",
		Usage:   "carnets|cobv|boletos [-o arquivo.xlsx|.csv|.yaml] [--job job.yaml] [--lang pt|en]",
		Run:     runTemplate,
	})
}

func runTemplate(args []string, stdout, stderr io.Writer) int {
	c := commands["template"]
	fs := newFlagSet(c, stdout, stderr)
	out := fs.String("o", "", "arquivo a escrever (padrão: <tipo>.xlsx)")
	job := fs.String("job", "", "também escreve um arquivo de job que lê a planilha")
	lang := fs.String("lang", "pt", "idioma das instruções: pt ou en")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "Uso: remessa template %s\n", c.Usage)
		return exitUsage
	}
	kind, err := pipeline.ParseKind(pos[0])
	if err != nil {
		fmt.Fprintln(stderr, "remessa template:", err)
		return exitUsage
	}
	if *out == "" {
		*out = string(kind) + ".xlsx"
	}
	if err := pipeline.WriteTemplate(kind, *out, time.Now(), *lang); err != nil {
		fmt.Fprintln(stderr, "remessa template:", err)
		if fe := (*formats.Error)(nil); errors.As(err, &fe) && fe.Code == formats.CodeUnknownFormat {
			return exitUsage // -o names a format there is no template for
		}
		return exitInternal
	}
	fmt.Fprintf(stdout, "escrito %s\n", *out)
	if *job != "" {
		rel := pipeline.RelativeTo(*job, *out)
		if err := os.WriteFile(*job, []byte(pipeline.StarterJob(kind, rel)), 0o644); err != nil {
			fmt.Fprintln(stderr, "remessa template:", err)
			return exitInternal
		}
		fmt.Fprintf(stdout, "escrito %s (confira com: remessa validate %s)\n", *job, *job)
	}
	return exitOK
}
