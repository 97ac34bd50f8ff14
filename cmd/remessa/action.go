package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"remessa/pipeline/actions"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "action",
		Summary: "ações de acompanhamento sobre uma execução (cancelar, mudar vencimento, reenviar, baixar, segunda via), como job",
		Usage:   "JOB [validate|plan|run] [--yes] [--base-url URL] [--pix-base-url URL] [--format text|json] [--quiet]",
		Run:     runActionCmd,
	})
}

// redirectAction sends `validate|plan|run JOB` with an action job, and
// `resume DIR` with an action folder, to the action command.
func redirectAction(name string, args []string, stdout, stderr io.Writer) (int, bool) {
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		switch {
		case (name == "validate" || name == "plan" || name == "run") && actions.IsActionJob(a):
		case name == "resume" && actions.IsActionDir(a):
		default:
			return 0, false
		}
		return actionMode(name, args, stdout, stderr), true
	}
	return 0, false
}

func runActionCmd(args []string, stdout, stderr io.Writer) int {
	mode := "plan"
	var rest []string
	for _, a := range args {
		switch a {
		case "validate", "plan", "run":
			mode = a
		default:
			rest = append(rest, a)
		}
	}
	return actionMode(mode, rest, stdout, stderr)
}

func actionMode(mode string, args []string, stdout, stderr io.Writer) int {
	c := commands["action"]
	fs := newFlagSet(c, stdout, stderr)
	yes := fs.Bool("yes", false, "produção: não pede confirmação")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (ex.: um remessa sandbox servindo os dados da execução)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	format := fs.String("format", "text", "saída: text ou json")
	quiet := fs.Bool("quiet", false, "só o resumo final")
	lang := fs.String("lang", "pt", "idioma das mensagens do job: pt ou en")
	fs.Int("concurrency", 0, "ignorada (a do job de ação)")
	fs.Int("quota", 0, "ignorada")
	fs.String("log-format", "text", "ignorada")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fmt.Fprintf(stderr, "Uso: remessa action %s\n", c.Usage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := actions.Options{Run: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL, Lang: *lang}, Yes: *yes}
	if !*quiet && *format == "text" {
		opts.Progress = stderr
	}
	opts.Confirm = func(p *actions.Plan) bool {
		if opts.Progress == nil {
			p.WriteText(stderr)
		}
		fmt.Fprint(stderr, "\nAplicar esta ação em PRODUÇÃO? Digite \"sim\" para confirmar: ")
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "sim") || strings.EqualFold(strings.TrimSpace(line), "yes")
	}
	var out *actions.Outcome
	var err error
	switch mode {
	case "validate":
		j, err := actions.Load(pos[0], actions.LoadOptions{})
		if err != nil {
			return actionErr(err, stderr)
		}
		fmt.Fprintf(stdout, "%s: ação %s sobre %s. Tudo certo.\n", pos[0], j.Kind, j.SourceDir)
		return exitOK
	case "plan":
		_, p, err := actions.Prepare(ctx, pos[0], opts)
		if err != nil {
			return actionErr(err, stderr)
		}
		if *format == "json" {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.Encode(p)
		} else {
			p.WriteText(stdout)
		}
		return exitOK
	case "run":
		out, err = actions.Run(ctx, pos[0], opts)
	case "resume":
		out, err = actions.Resume(ctx, pos[0], opts)
	}
	if err != nil {
		return actionErr(err, stderr)
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		fmt.Fprintf(stdout, "Ação %s: relatório em %s\n", out.ID, out.Dir)
	}
	if out.Pending > 0 {
		fmt.Fprintf(stderr, "Nada foi perdido: rode \"remessa resume %s\" para continuar de onde parou.\n", out.Dir)
	}
	return out.ExitCode()
}

func actionErr(err error, stderr io.Writer) int {
	var ue *run.UsageError
	var le interface{ Localized(string) string }
	switch {
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.Msg)
		return exitUsage
	case errors.As(err, &le):
		fmt.Fprintln(stderr, le.Localized("pt"))
		return exitUsage
	}
	fmt.Fprintln(stderr, "remessa action:", err)
	return exitInternal
}
