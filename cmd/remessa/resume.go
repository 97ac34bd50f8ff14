package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"remessa/pipeline/actions"
	"remessa/pipeline/movements"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "resume",
		Summary: "continua uma execução interrompida a partir do seu journal (cota, queda, kill -9)",
		Usage:   "RUN_DIR|RUN_ID [--db postgres://…] [--concurrency N] [--quota N] [--base-url URL] [--pix-base-url URL] [--quiet] [--log-format text|json]",
		Run:     runResume,
	})
}

func runResume(args []string, stdout, stderr io.Writer) int {
	c := commands["resume"]
	f, parse := bindRunFlags(c, stdout, stderr, false)
	pos, code, ok := parse(args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "Uso: remessa resume %s\n", c.Usage)
		return exitUsage
	}
	opts, err := f.options(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "remessa resume:", err)
		return exitUsage
	}
	run.Version = version()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var out *run.Outcome
	if dsn := dbOf(*f.db, pos); dsn != "" {
		opts.DB = dsn
		out, err = run.ResumeCluster(ctx, pos[0], opts) // worker.go
	} else {
		out, err = run.Resume(ctx, pos[0], opts)
	}
	code = finishRun(out, err, stdout, stderr, *f.lang)
	if err != nil || out == nil || out.Stop != nil {
		return code
	}
	// a CNAB remessa's movements, carried out after its entries
	mov, err := movements.Resume(ctx, out.Dir, actions.Options{Run: opts, Progress: movProgress(opts, stderr)})
	if err != nil {
		fmt.Fprintln(stderr, "remessa: movimentos:", err)
		return max(code, exitProblems)
	}
	return finishMovements(code, mov, stdout)
}
