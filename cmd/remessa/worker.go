package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"remessa/pipeline/cluster"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "worker",
		Summary: "trabalha as unidades das execuções de um banco Postgres (remessa run --db), em qualquer número de máquinas",
		Usage:   "--db postgres://… [--units N] [--concurrency N] [--log-dir DIR] [--unit-timeout 2m] [--base-url URL] [--pix-base-url URL] [--health-addr 127.0.0.1:9090]",
		Run:     runWorker,
	})
}

func runWorker(args []string, stdout, stderr io.Writer) int {
	c := commands["worker"]
	fs := newFlagSet(c, stdout, stderr)
	db := fs.String("db", "", "banco Postgres das execuções (padrão: $"+cluster.EnvDB+")")
	units := fs.Int("units", 2, "unidades (lotes cobv ou grupos de linhas) trabalhadas ao mesmo tempo")
	conc := fs.Int("concurrency", 0, "requisições simultâneas dentro de uma unidade (padrão: a do job)")
	logDir := fs.String("log-dir", "", "pasta dos logs das execuções (padrão: uma pasta no diretório temporário)")
	lease := fs.Duration("unit-timeout", cluster.DefaultUnitTimeout, "prazo de uma unidade: ela para ao fim dele, e a de um worker morto vai para outro depois dele")
	baseURL := fs.String("base-url", "", "endereço da API de cobranças (substitui o da execução)")
	pixURL := fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)")
	quiet := fs.Bool("quiet", false, "sem uma linha por unidade")
	healthAddr := fs.String("health-addr", "", "endereço em que serve /healthz, /readyz e /metrics (ex.: 127.0.0.1:9090; padrão: nenhum)")
	fs.StringVar(healthAddr, "metrics-addr", "", "o mesmo que --health-addr")
	pos, code, ok := parseFlags(fs, args)
	if !ok {
		return code
	}
	dsn := cluster.DSN(*db)
	if len(pos) != 0 || dsn == "" {
		fmt.Fprintf(stderr, "Uso: remessa worker %s\n", c.Usage)
		return exitUsage
	}
	if !cluster.IsPostgres(dsn) {
		fmt.Fprintln(stderr, "remessa worker: --db: esperado um endereço postgres://… ou postgresql://… (o recebido não é de um PostgreSQL)")
		return exitUsage
	}
	o := run.WorkerOptions{DB: dsn, Units: *units, Concurrency: *conc, LogDir: *logDir, UnitTimeout: *lease, HealthAddr: *healthAddr,
		Options: run.Options{BaseURL: *baseURL, PixBaseURL: *pixURL}}
	if !*quiet {
		o.Progress = stderr
	}
	run.Version = version()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run.Work(ctx, o); err != nil {
		fmt.Fprintln(stderr, "remessa worker:", err)
		return exitInternal
	}
	return 0
}

// dbOf is the database a status or report reads: its --db, else
// $REMESSA_DATABASE_URL when the argument is not a run folder.
func dbOf(flag string, pos []string) string {
	if flag != "" {
		return flag
	}
	if len(pos) == 1 {
		if st, err := os.Stat(pos[0]); err == nil && st.IsDir() {
			return ""
		}
	}
	return cluster.DSN("")
}

// reportDB writes the results and reports of a run in the database.
func reportDB(dsn string, pos []string, out string, stdout, stderr io.Writer) int {
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "remessa report --db: informe o id da execução")
		return exitUsage
	}
	if out == "" {
		out = pos[0]
	}
	o, err := run.ClusterReport(context.Background(), dsn, pos[0], out, run.Options{})
	if o == nil {
		return failDB("report", err, stderr)
	}
	for _, p := range o.Reports {
		fmt.Fprintln(stdout, p)
	}
	if err != nil {
		fmt.Fprintln(stderr, "remessa report:", err)
		return exitInternal
	}
	return o.ExitCode()
}

// statusDB shows how the runs in the database stand.
func statusDB(dsn string, pos []string, format string, stdout, stderr io.Writer) int {
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	runs, err := run.ClusterStatus(context.Background(), dsn, id)
	if err != nil {
		return failDB("status", err, stderr)
	}
	if format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(runs)
		return 0
	}
	if len(runs) == 0 {
		fmt.Fprintf(stdout, "nenhuma execução no banco %s\n", cluster.Mask(dsn))
	}
	for _, r := range runs {
		state := "em andamento"
		if r.FinishedAt != nil {
			state = "concluída " + r.FinishedAt.Format(time.RFC3339)
		}
		var parts []string
		keys := make([]string, 0, len(r.States))
		for k := range r.States {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.States[k]))
		}
		fmt.Fprintf(stdout, "%s  %s (%s, %s) — %s\n  unidades: %d de %d concluídas, %d em execução, %d na fila, %d desistidas\n  linhas: %s\n",
			r.RunID, r.JobName, r.Kind, r.Service, state, r.Units.Completed, r.Units.Total, r.Units.Running, r.Units.Waiting, r.Units.Failed,
			strings.Join(parts, ", "))
	}
	return 0
}

func failDB(cmd string, err error, stderr io.Writer) int {
	var ue *run.UsageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "remessa %s: %s\n", cmd, ue.Msg)
		return exitUsage
	}
	fmt.Fprintf(stderr, "remessa %s: %v\n", cmd, err)
	return exitInternal
}
