package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"remessa/pipeline/remind"
	"remessa/pipeline/run"
	"remessa/rules"
)

func init() {
	register(&command{
		Name:    "remind",
		Summary: "régua de cobrança: envia os lembretes devidos hoje às execuções de RUNS_DIR cujo job tem reminders: (para o cron)",
		Usage:   "RUNS_DIR [--dry-run] [--format text|json] [--base-url URL] [--pix-base-url URL]",
		Run:     runRemind,
	})
}

func runRemind(args []string, stdout, stderr io.Writer) int {
	c := commands["remind"]
	fs := newFlagSet(c, stdout, stderr)
	dry := fs.Bool("dry-run", false, "mostra o que seria enviado, sem enviar nem registrar nada")
	format := fs.String("format", "text", "saída: text ou json")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (ex.: um remessa sandbox servindo os dados das execuções)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") {
		fmt.Fprintf(stderr, "Uso: remessa remind %s\n", c.Usage)
		return exitUsage
	}
	if st, err := os.Stat(pos[0]); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "remessa remind: %s não é uma pasta de execuções\n", pos[0])
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := remind.Options{Run: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL}, DryRun: *dry}
	if *format == "text" {
		opts.Progress = stdout
	}
	out, err := remind.RunsDir(ctx, pos[0], opts)
	if err != nil {
		fmt.Fprintln(stderr, "remessa remind:", err)
		return exitUsage
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(stdout, string(b))
	}
	failed := false
	for _, r := range out {
		if r.Err != "" {
			failed = true
			fmt.Fprintf(stderr, "remessa remind: %s: %s\n", r.Dir, r.Err)
		}
		if *format == "text" && r.Report != nil {
			writeRemind(stdout, r.Report)
		}
		if r.Report != nil && r.Report.Uncertain+r.Report.Failed > 0 {
			failed = true
		}
	}
	if len(out) == 0 && *format == "text" {
		fmt.Fprintf(stdout, "Nenhuma execução em %s tem régua (reminders: no arquivo de job).\n", pos[0])
	}
	if failed {
		return exitProblems
	}
	return exitOK
}

func writeRemind(w io.Writer, r *remind.Report) {
	if r.Note != "" {
		fmt.Fprintf(w, "Execução %s: %s.\n", r.RunID, r.Note)
		return
	}
	var cents int64
	for _, it := range r.Items {
		cents += it.AmountCents
	}
	if r.DryRun {
		fmt.Fprintf(w, "Execução %s (simulação): %d lembrete(s) seriam enviados, %d não se aplicam, %d ficam para a próxima passada (limite por passada); %s em aberto nos lembretes.\n",
			r.RunID, r.Planned, r.Skipped, r.Deferred, rules.FormatBRL(cents))
		return
	}
	fmt.Fprintf(w, "Execução %s: %d enviado(s), %d não enviado(s), %d incerto(s), %d recusado(s), %d adiado(s), %d para a próxima passada (limite).\n",
		r.RunID, r.Sent, r.Skipped, r.Uncertain, r.Failed, r.Retry, r.Deferred)
	if r.Recovered > 0 {
		fmt.Fprintf(w, "  %d envio(s) de uma passada interrompida ficaram incertos e não foram repetidos.\n", r.Recovered)
	}
}
