package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"remessa/pipeline"
	"remessa/pipeline/actions"
	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/movements"
	"remessa/pipeline/run"
)

func init() {
	register(&command{
		Name:    "run",
		Summary: "emite as cobranças de um job pelo serviço, exatamente uma vez (carnês, Pix com vencimento, boletos)",
		Usage:   "JOB [--yes] [--again] [--concurrency N] [--quota N] [--base-url URL] [--pix-base-url URL] [--quiet] [--log-format text|json]",
		Run:     runRun,
	})
}

// stdin is where a production run reads its confirmation (a test's answer).
var stdin io.Reader = os.Stdin

// runFlags are the flags run and resume share.
type runFlags struct {
	concurrency      *int
	quota            *int
	baseURL, pixURL  *string
	quiet            *bool
	logFormat, lang  *string
	sandboxDir, runs *string
	service          *string
	yes, again       *bool
	db               *string // run: Postgres + River (docs/postgres.md)
	detach           *bool
}

func bindRunFlags(c *command, stdout, stderr io.Writer, isRun bool) (*runFlags, func([]string) ([]string, int, bool)) {
	fs := newFlagSet(c, stdout, stderr)
	f := &runFlags{
		concurrency: fs.Int("concurrency", 0, "requisições simultâneas (padrão: a do job, 4)"),
		quota:       fs.Int("quota", 0, "cota diária de requisições por rota (padrão: a do job; serviço remoto 15000)"),
		baseURL:     fs.String("base-url", "", "endereço da API de cobranças (ex.: um sandbox em outra porta)"),
		pixURL:      fs.String("pix-base-url", "", "endereço da API Pix (padrão: o de --base-url)"),
		quiet:       fs.Bool("quiet", false, "só o resumo final"),
		logFormat:   fs.String("log-format", "text", "progresso em text ou json"),
		lang:        fs.String("lang", "pt", "idioma das mensagens: pt ou en"),
		sandboxDir:  fs.String("sandbox-data", "", "pasta de dados do sandbox embutido (padrão <pasta dos relatórios>/.sandbox)"),
	}
	if !isRun {
		f.db = fs.String("db", "", "banco Postgres: RUN_DIR é o id de uma execução de lá; as unidades que desistiram voltam à fila dos remessa worker")
	}
	if isRun {
		f.yes = fs.Bool("yes", false, "produção: não pede confirmação")
		f.again = fs.Bool("again", false, "executa mesmo que o mesmo job já tenha rodado com a mesma planilha (emite de novo)")
		f.runs = fs.String("runs-dir", "", "pasta das execuções (padrão: reports.dir do job, remessa-out)")
		f.service = fs.String("service", "", "substitui o service do job: embedded, sandbox ou production")
		f.db = fs.String("db", "", "banco Postgres: a execução vai para os workers (remessa worker); padrão $REMESSA_DATABASE_URL")
		f.detach = fs.Bool("detach", false, "com --db: só enfileira e mostra o id da execução")
	}
	return f, func(args []string) ([]string, int, bool) { return parseFlags(fs, args) }
}

func (f *runFlags) options(stderr io.Writer) (run.Options, error) {
	if *f.logFormat != "text" && *f.logFormat != "json" {
		return run.Options{}, fmt.Errorf("--log-format deve ser text ou json")
	}
	o := run.Options{Concurrency: *f.concurrency, Quota: *f.quota, BaseURL: *f.baseURL, PixBaseURL: *f.pixURL,
		Quiet: *f.quiet, LogJSON: *f.logFormat == "json", Lang: *f.lang, SandboxDir: *f.sandboxDir, Progress: stderr}
	if fi, ok := stderr.(*os.File); ok {
		if st, err := fi.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			o.Terminal = true
		}
	}
	if f.yes != nil {
		o.Yes, o.Again, o.RunsDir, o.Service = *f.yes, *f.again, *f.runs, *f.service
		o.DB, o.Detach = cluster.DSN(*f.db), *f.detach
		if o.Detach && o.DB == "" {
			return run.Options{}, fmt.Errorf("--detach só vale com --db (ou REMESSA_DATABASE_URL)")
		}
	}
	return o, nil
}

func runRun(args []string, stdout, stderr io.Writer) int {
	c := commands["run"]
	f, parse := bindRunFlags(c, stdout, stderr, true)
	pos, code, ok := parse(args)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintf(stderr, "Uso: remessa run %s\n", c.Usage)
		return exitUsage
	}
	opts, err := f.options(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "remessa run:", err)
		return exitUsage
	}
	opts.Confirm = func(p *pipeline.Plan) bool {
		p.WriteText(stderr, *f.lang)
		q := "\nEmitir estas cobranças em PRODUÇÃO? Digite \"sim\" para confirmar: "
		if p.MovementsText != "" {
			fmt.Fprint(stderr, p.MovementsText)
			q = "\nEmitir estas cobranças e aplicar estes movimentos em PRODUÇÃO? Digite \"sim\" para confirmar: "
		}
		fmt.Fprint(stderr, q)
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		return strings.EqualFold(strings.TrimSpace(line), "sim") || strings.EqualFold(strings.TrimSpace(line), "yes")
	}
	run.Version = version()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, mov, err := movements.Run(ctx, pos[0], opts, actions.Options{Run: opts, Progress: movProgress(opts, stderr)})
	if opts.Detach && err == nil && out != nil {
		fmt.Fprintln(stdout, out.RunID) // in the queue: remessa status/report --db
		return 0
	}
	return finishMovements(finishRun(out, err, stdout, stderr, *f.lang), mov, stdout)
}

// movProgress is where a CNAB remessa's movements write their actions'
// plans: nowhere with --quiet.
func movProgress(o run.Options, stderr io.Writer) io.Writer {
	if o.Quiet {
		return nil
	}
	return stderr
}

// finishMovements prints what became of a remessa's movements and folds
// their exit code into the run's.
func finishMovements(code int, mov *movements.Record, stdout io.Writer) int {
	if mov == nil {
		return code
	}
	mov.WriteSummary(stdout)
	return max(code, mov.ExitCode())
}

// finishRun prints where the results are and picks the exit code.
func finishRun(out *run.Outcome, err error, stdout, stderr io.Writer, lang string) int {
	var ue *run.UsageError
	var ie *run.InvalidRowsError
	var de *run.DuplicateError
	switch {
	case errors.As(err, &ie):
		rep := pipeline.NewValidationReport(ie.Validation.Job.File, ie.Validation.Job, ie.Validation, nil)
		rep.WriteText(stderr, lang)
		fmt.Fprintln(stderr, "remessa run:", ie.Error())
		return exitProblems
	case errors.As(err, &de):
		fmt.Fprintln(stderr, "remessa run:", de.Error())
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, ue.Msg)
		return exitUsage
	case out == nil:
		fmt.Fprintln(stderr, "remessa:", err)
		return exitInternal
	}
	if err != nil {
		fmt.Fprintln(stderr, "remessa:", err)
	}
	fmt.Fprintf(stdout, "Execução %s: resultados em %s\n", out.RunID, out.Dir)
	if out.Stop != nil {
		fmt.Fprintln(stderr, "remessa:", out.Stop.Error())
		if _, err := os.Stat(filepath.Join(out.Dir, journal.FileName)); err != nil {
			// a run in Postgres (--db): its journal is in the database
			fmt.Fprintf(stderr, "Nada foi perdido: rode \"remessa resume --db … %s\" para continuar de onde parou.\n", out.RunID)
		} else {
			fmt.Fprintf(stderr, "Nada foi perdido: rode \"remessa resume %s\" para continuar de onde parou.\n", out.Dir)
		}
	}
	if err != nil && out.Stop == nil {
		return exitInternal
	}
	return out.ExitCode()
}
