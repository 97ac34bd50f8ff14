package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

func init() {
	register(&command{
		Name:    "status",
		Summary: "atualiza a situação das cobranças de uma execução (pagas, em aberto, vencidas, canceladas) com poucas chamadas ao serviço",
		Usage:   "RUN_DIR [--format text|json] [--watch 30s] [--full] [--base-url URL] [--pix-base-url URL] [--lang pt|en]",
		Run:     runStatus,
	})
}

func runStatus(args []string, stdout, stderr io.Writer) int {
	c := commands["status"]
	fs := newFlagSet(c, stdout, stderr)
	format := fs.String("format", "text", "saída: text ou json")
	watch := fs.Duration("watch", 0, "atualiza a cada intervalo até Ctrl+C (ex.: 30s)")
	full := fs.Bool("full", false, "lista tudo de novo em vez de só o que mudou desde a última vez")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (ex.: um remessa sandbox servindo os dados da execução)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	lang := fs.String("lang", "pt", "idioma: pt ou en")
	noReport := fs.Bool("no-report", false, "não escreve a conciliação (conciliacao.xlsx, .csv, .html, .json)")
	db := fs.String("db", "", "banco Postgres (remessa run --db): as execuções de lá (RUN_DIR é então um id, ou nada: as últimas)")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	if dsn := dbOf(*db, pos); dsn != "" && len(pos) <= 1 {
		return statusDB(dsn, pos, *format, stdout, stderr)
	}
	if len(pos) != 1 || (*format != "text" && *format != "json") || *watch < 0 || (*watch > 0 && *watch < time.Second) {
		fmt.Fprintf(stderr, "Uso: remessa status %s\n", c.Usage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := status.Options{Run: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL}, Full: *full}
	for {
		if *format == "text" {
			if n, first, err := status.Estimate(ctx, pos[0], opts.Full); err == nil {
				what := "só o que mudou desde a última consulta"
				if first {
					what = "todas as cobranças da execução"
				}
				fmt.Fprintf(stderr, "Consultando %s: pelo menos %d chamada(s) à API (cada uma traz até 1.000 cobranças; a cota do serviço real é de 15.000 chamadas por rota por dia).\n", what, n)
			}
		}
		sum, err := status.Sync(ctx, pos[0], opts)
		if err != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			fmt.Fprintln(stderr, "remessa status:", err)
			var ue *run.UsageError
			if errors.As(err, &ue) {
				return exitUsage
			}
			return exitInternal
		}
		if !*noReport {
			_, rec, err := conciliacao.WriteRun(ctx, pos[0], sum.Today(), *lang)
			if err != nil {
				fmt.Fprintln(stderr, "remessa status: conciliação:", err)
				return exitInternal
			}
			if !rec.Reconcile.OK {
				fmt.Fprintln(stderr, "remessa status: a conciliação NÃO confere:", strings.Join(rec.Reconcile.Problems, "; "))
				return exitProblems
			}
		}
		if *format == "json" {
			b, _ := json.Marshal(sum)
			fmt.Fprintln(stdout, string(b))
			if note := status.ClockNote(sum.ClockReading(), *lang); note != "" {
				fmt.Fprintln(stderr, note)
			}
		} else {
			writeStatus(stdout, sum, *lang)
		}
		if *watch == 0 {
			return exitOK
		}
		opts.Full = false
		select {
		case <-ctx.Done():
			return exitOK
		case <-time.After(*watch):
		}
	}
}

// writeStatus prints a sync's summary for people.
func writeStatus(w io.Writer, s *status.Summary, lang string) {
	brl := rules.FormatBRL
	at := s.SyncedAt
	if t, err := time.Parse(time.RFC3339Nano, s.SyncedAt); err == nil {
		at = t.In(rules.SaoPaulo).Format("02/01/2006 15:04")
	}
	line := func(label string, t status.Tally) {
		fmt.Fprintf(w, "  %-22s %7d  %18s\n", label, t.Count, brl(t.Cents))
	}
	defer func() {
		if note := status.ClockNote(s.ClockReading(), lang); note != "" {
			fmt.Fprintln(w, note)
		}
	}()
	if lang == "en" {
		fmt.Fprintf(w, "Run %s (%s) as of %s — %d charges; %d changed, %d calls\n", s.RunID, s.Kind, at, s.Charges, s.Changed, s.Calls)
		line("issued", s.Issued)
		line("received", s.Received)
		line("  of which by hand", s.Settled)
		line("open (not yet due)", s.Open)
		line("overdue", s.Overdue)
		line("cancelled", s.Cancel)
		line("refunded", s.Refunded)
		if s.Rebate.Count > 0 {
			line("rebate changed (cobv)", s.Rebate)
		}
		return
	}
	kinds := map[string]string{"carnets": "carnês", "cobv": "Pix com vencimento", "boletos": "boletos"}
	fmt.Fprintf(w, "Execução %s (%s) em %s — %d cobranças; %d mudaram, %d chamadas\n", s.RunID, kinds[string(s.Kind)], at, s.Charges, s.Changed, s.Calls)
	line("emitidas", s.Issued)
	line("recebidas", s.Received)
	line("  das quais por fora", s.Settled)
	line("a vencer", s.Open)
	line("vencidas", s.Overdue)
	line("canceladas", s.Cancel)
	line("devolvidas", s.Refunded)
	if s.Rebate.Count > 0 {
		line("abatimento alterado", s.Rebate) // cobv, at the abatimento each has now
	}
}
