// Package run issues a validated job through the service exactly once:
// `remessa run JOB` and `remessa resume RUN`.
//
// A run validates and plans the job (package pipeline), creates a run
// directory with a journal (package journal) holding every row's request,
// then sends: one POST per row for carnets and slips (with a deterministic
// custom_id), batches of cobv (deterministic txids and batch ids) followed
// by split links and a paged fetch of the charges. Every call is journaled as
// intended before it is sent and with its outcome after, so a run stopped at
// any point (quota, network, kill -9) is continued by Resume without
// charging anyone twice: idempotent PUTs are repeated, and a POST whose
// outcome is unknown is looked up by its custom_id before anything is sent
// again. docs/run.md describes the whole procedure.
package run

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/metrics"
	"remessa/pipeline"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/reports"
	"remessa/rules"
	"remessa/sandbox"
)

// Options tune a run. Zero values are the defaults.
type Options struct {
	RunsDir     string // where run directories go; default the job's reports.dir
	SandboxDir  string // embedded sandbox data folder; default <runs dir>/.sandbox
	Service     string // overrides the job's service (embedded, sandbox, production)
	BaseURL     string // overrides the charges API address (tests point a "remote" run at a sandbox)
	PixBaseURL  string // overrides the Pix API address; default BaseURL when that is set
	Again       bool   // run even if the same job ran on the same input before
	Yes         bool   // production: do not ask for confirmation
	Confirm     func(plan *pipeline.Plan) bool
	Concurrency int            // 0 = the job's
	Quota       int            // requests per day per route; 0 = the job's (embedded: none; remote: 15000)
	Rates       map[string]int // requests per second per route; nil = the job's
	Lang        string         // messages: pt (default) or en
	Now         func() time.Time
	Getenv      func(string) (string, bool)
	Progress    io.Writer // progress and messages; nil = none
	Terminal    bool      // Progress is a terminal (redrawn status line)
	LogJSON     bool      // Progress lines as JSON
	Quiet       bool      // only the final summary
	RunID       string    // fixed run id (tests); default a new one
	SettleDelay time.Duration
	PollMax     time.Duration // longest wait between batch polls (default 2 s)
	Timeout     time.Duration // per HTTP attempt (default 60 s)
	// Operator names who started the run in its reports; default the
	// system user (the web app gives the signed-in user).
	Operator string
	// StopAfter stops the run cleanly after that many creation calls (tests).
	StopAfter int
	// Observe, when set, is called with how the run stands: every 500 ms
	// while it goes, on every phase change, and once at the end with
	// Finished (complete or stopped, or the run returned an error). Calls
	// come one at a time, in order, from the run's goroutines, with no
	// lock of the run held; Observe should return quickly (it holds up
	// the run while it runs). Independent of Progress and Quiet.
	Observe func(Snapshot)
	// Embedded, when set, is an embedded sandbox already running (from
	// StartEmbedded, or sandbox.Server.Start) that runs and resumes on
	// the embedded service use instead of starting their own on
	// SandboxDir; the run does not close it. Several runs may share it at
	// once. It must have been created with sandbox.Config{ClientID:
	// EmbeddedClientID, ClientSecret: EmbeddedClientSecret} (connect
	// adds that application to its first account when missing). The
	// run records its data folder as the run's sandbox folder.
	Embedded *sandbox.Running
	// DB, a postgres:// URL, puts the run's journal in that database and
	// its work in River jobs that `remessa worker` processes on any
	// machine take (cluster.go, docs/postgres.md); Detach returns once
	// the run is enqueued.
	DB     string
	Detach bool
	// NotificationURL is the notification_url of the carnets and slips of
	// a job that names none, on any service ("" : none, except that an
	// embedded run gets LocalListenerURL). The desk gives its own
	// endpoint.
	NotificationURL string
	// PixWebhookURL, when set, is registered as the webhook of each Pix
	// key a cobv run receives on (PUT /v2/webhook/:chave) once the run
	// reaches its service, before its first call, and again on every
	// resume; a refusal is a warning of the run, not a stop (the desk
	// gives its own endpoint).
	PixWebhookURL string
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) getenv(k string) string {
	if o.Getenv != nil {
		v, _ := o.Getenv(k)
		return v
	}
	return os.Getenv(k)
}

// Outcome is what a run or a resume ended with.
type Outcome struct {
	RunID string
	Dir   string
	// Results is the run's identity and totals; its Rows are nil: they
	// are in results.json, written as they streamed from the journal
	// (LoadResults reads them all, reports.EachRow one at a time).
	Results  *results.Results
	Reports  []string
	Plan     *pipeline.Plan // nil on resume
	Stop     *StopError     // the run stopped before its end; resume later
	Warnings []string
}

// LoadResults reads the run's whole results.json, rows included (for a
// small run; a big one is read a row at a time with reports.EachRow).
func (o *Outcome) LoadResults() (*results.Results, error) {
	return results.Load(filepath.Join(o.Dir, reports.FileJSON))
}

// ExitCode is the process exit code for the outcome: 0 every row issued,
// 1 some rows refused, denied or ambiguous (resume looks the ambiguous ones
// up again), 3 the run stopped with rows pending (resume it).
func (o *Outcome) ExitCode() int {
	t := o.Results.Totals
	if o.Stop != nil || t.Pending.Rows > 0 {
		return 3
	}
	if t.Refused.Rows+t.Denied.Rows+t.Ambiguous.Rows > 0 {
		return 1
	}
	return 0
}

// StopError says why a run stopped before its end and when it can go on.
type StopError struct {
	Reason   string    // Portuguese
	ResumeAt time.Time // zero: as soon as the cause is fixed
	Err      error
}

func (e *StopError) Error() string {
	s := "execução interrompida: " + e.Reason
	if !e.ResumeAt.IsZero() {
		s += fmt.Sprintf("; retome a partir de %s (horário de Brasília)", e.ResumeAt.In(rules.SaoPaulo).Format("02/01/2006 15:04"))
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *StopError) Unwrap() error { return e.Err }

// UsageError is a job, input or command line that cannot be used (exit 2).
type UsageError struct {
	Msg string
	Err error
}

func (e *UsageError) Error() string { return e.Msg }
func (e *UsageError) Unwrap() error { return e.Err }

// InvalidRowsError is a job whose rows have problems and that does not say
// on_invalid: skip: nothing was sent (exit 1).
type InvalidRowsError struct{ Validation *pipeline.Validation }

func (e *InvalidRowsError) Error() string {
	return fmt.Sprintf("%d linha(s) com problemas; nada foi enviado. Corrija a planilha ou use on_invalid: skip no job", e.Validation.Summary.Refused)
}

// DuplicateError is the same job on the same input run before (exit 2).
type DuplicateError struct {
	Earlier Entry
}

func (e *DuplicateError) Error() string {
	state := "concluída"
	if !e.Earlier.Complete {
		state = "não concluída: use \"remessa resume " + e.Earlier.Dir + "\" para terminá-la"
	}
	return fmt.Sprintf("este job já foi executado com esta mesma planilha na execução %s (%s; relatório em %s).\nNada foi enviado de novo. Para emitir tudo outra vez (cobranças novas, em duplicidade), use --again.",
		e.Earlier.RunID, state, e.Earlier.Dir)
}

// Run loads, validates, plans and (after confirmation in production) runs
// the job at jobPath.
func Run(ctx context.Context, jobPath string, opts Options) (*Outcome, error) {
	job, err := pipeline.Load(jobPath, pipeline.LoadOptions{Now: opts.Now, Getenv: opts.Getenv})
	if err != nil {
		return nil, &UsageError{Msg: describeLoad(jobPath, job, err, opts.Lang), Err: err}
	}
	if opts.Service != "" {
		job.Service = opts.Service
	}
	if job.Service == "" {
		job.Service = "embedded"
	}
	if job, err = withNotifications(jobPath, job, opts.NotificationURL, pipeline.LoadOptions{Now: opts.Now, Getenv: opts.Getenv}); err != nil {
		return nil, &UsageError{Msg: describeLoad(jobPath, job, err, opts.Lang), Err: err}
	}
	runsDir := opts.RunsDir
	if runsDir == "" {
		runsDir = job.Reports.Dir
	}
	runsDir, _ = filepath.Abs(runsDir)
	describe := func(err error) string { return describeLoad(jobPath, job, err, opts.Lang) }
	idx := &Index{Path: filepath.Join(runsDir, IndexFile)}
	cnabAccount, cnabNSA := cnabFile(job)
	var warnings []string
	// check stops a job whose rows have problems (on_invalid: stop) or
	// that ran before on the same input, and notes the repeated rows
	check := func(s *scan, inputSHA string) error {
		if s.sum.Refused > 0 && job.OnInvalid != "skip" {
			// the report of the problems: the notes only, not the rows
			v, err := pipeline.ValidateNotes(ctx, job)
			if err != nil {
				return &UsageError{Msg: describe(err), Err: err}
			}
			return &InvalidRowsError{Validation: v}
		}
		// same job, same input, same resolved due dates (a monthly job with
		// relative dates run again next month is a new run), unless --again
		same, w, err := idx.earlier(ctx, earlierQuery{JobSHA256: job.SHA256, InputSHA256: inputSHA, Service: job.Service, IDs: s.ids, Again: opts.Again,
			Names: func(ords map[int]bool) (map[int]string, error) { return identitiesAt(ctx, job, ords) }})
		if err != nil {
			return err
		}
		if same != nil {
			return &DuplicateError{Earlier: *same}
		}
		if !opts.Again {
			// a CNAB remessa whose NSA that account already imported
			if e, err := idx.nsaImported(ctx, cnabAccount, cnabNSA); err != nil {
				return err
			} else if e != nil {
				ne := &NSAError{NSA: cnabNSA, Account: cnabAccount, Earlier: *e}
				return &UsageError{Msg: ne.Error(), Err: ne}
			}
		}
		if w != "" {
			warnings = append(warnings, w)
		}
		return nil
	}
	// One validation pass seeds the journal and the checks run before it
	// commits, unless a person must confirm the plan first (production:
	// no transaction is held open while they answer) or the journal is in
	// PostgreSQL (a refused run leaves no schema behind): then a first
	// pass validates and plans, and the seed's pass must give its rows.
	var first *scan
	var inputSHA string
	if opts.DB != "" || job.Service == "production" && !opts.Yes {
		if first, err = scanJob(ctx, job, "", false, nil); err != nil {
			return nil, &UsageError{Msg: describe(err), Err: err}
		}
		if inputSHA, err = fileSHA256(job.InputFile); err != nil {
			return nil, &UsageError{Msg: err.Error(), Err: err}
		}
		if err := check(first, inputSHA); err != nil {
			return nil, err
		}
		if job.Service == "production" && !opts.Yes {
			if opts.Confirm == nil || !opts.Confirm(first.donePlan(jobPath)) {
				return nil, &UsageError{Msg: "execução em produção não confirmada; nada foi enviado (use --yes para confirmar sem perguntar)"}
			}
		}
	} else if inputSHA, err = fileSHA256(job.InputFile); err != nil {
		return nil, &UsageError{Msg: err.Error(), Err: err}
	}
	runID := opts.RunID
	if runID == "" {
		runID = newRunID(opts.now())
	}
	dir := filepath.Join(runsDir, runID)
	_, statErr := os.Stat(runsDir)
	newRunsDir := errors.Is(statErr, fs.ErrNotExist) // removed again when the run is refused before it starts
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pasta da execução: %w", err)
	}
	if err := copyFile(job.File, filepath.Join(dir, "job"+filepath.Ext(job.File))); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "input.sha256"), []byte(inputSHA+"  "+filepath.Base(job.InputFile)+"\n"), 0o644); err != nil {
		return nil, err
	}
	sandboxDir := opts.SandboxDir
	if opts.Embedded != nil && job.Service == "embedded" && opts.Embedded.DataDir != "" {
		sandboxDir = opts.Embedded.DataDir
	}
	if sandboxDir == "" {
		sandboxDir = sandboxDirFor(runsDir)
	}
	sandboxDir, _ = filepath.Abs(sandboxDir)
	m := Meta{RunID: runID, JobName: job.Name, JobFile: job.File, JobSHA256: job.SHA256, InputFile: job.InputFile,
		InputSheet: job.Sheet, InputSHA256: inputSHA, Kind: job.Kind, Service: job.Service, BaseURL: opts.BaseURL,
		PixBaseURL: opts.PixBaseURL, SandboxDir: sandboxDir, StartedAt: opts.now().UTC().Format(time.RFC3339),
		Formats: job.Reports.Formats, Lang: job.Reports.Lang, Concurrency: job.Concurrency, Rates: job.Rate, Quota: job.Quota,
		Operator: cmp.Or(opts.Operator, operator()), BatchDesc: batchDesc(job)}
	if m.BaseURL == "" && job.Endpoint.BaseURL != "" {
		m.BaseURL = job.Endpoint.BaseURL
	}
	if m.PixBaseURL == "" && job.Endpoint.PixBaseURL != "" {
		m.PixBaseURL = job.Endpoint.PixBaseURL
	}
	j, err := createJournal(ctx, dir, m, opts) // journal.db, or Postgres with opts.DB (cluster.go)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	sp := seedPass{want: first, describe: describe, jobPath: jobPath}
	if first == nil {
		// the one pass: the input must not change while it is read, and
		// the checks come before the journal commits
		sp.gate = func(s *scan) error {
			if seedPassHook != nil {
				seedPassHook()
			}
			if sha, err := fileSHA256(job.InputFile); err != nil || sha != inputSHA {
				return inputChanged(job)
			}
			return check(s, inputSHA)
		}
	}
	s, err := seed(ctx, j, job, &m, sp)
	if err != nil {
		// nothing was sent and the run is not in the index yet
		j.Close()
		os.RemoveAll(dir)
		if newRunsDir {
			os.Remove(runsDir) // only when empty
		}
		return nil, err
	}
	// refused rows are final once seeded: counted here, issued and
	// denied ones where they become final (progress.row)
	metrics.RowsFinished(string(m.Kind), "refused", s.sum.Refused)
	plan, ids := s.donePlan(jobPath), s.ids
	if first != nil {
		plan, ids = first.donePlan(jobPath), first.ids
	}
	if err := idx.appendIDs(Entry{RunID: runID, Dir: dir, JobSHA256: job.SHA256, InputSHA256: inputSHA, Service: job.Service,
		JobName: job.Name, StartedAt: m.StartedAt, CNABAccount: cnabAccount, CNABNSA: cnabNSA}, ids); err != nil {
		return nil, err
	}
	exec := execute
	if opts.DB != "" {
		exec = executeCluster // the units go to River, for the workers (cluster.go)
	}
	out, err := exec(ctx, j, dir, opts, warnings)
	if out != nil {
		out.Plan = plan
	}
	return out, err
}

// seedPassHook, when set, is called once the seed's one pass has read the
// input (tests change the input there).
var seedPassHook func()

// Resume continues the run in dir from its journal.
func Resume(ctx context.Context, dir string, opts Options) (*Outcome, error) {
	path := filepath.Join(dir, journal.FileName)
	j, err := journal.Open(path)
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("%s não é a pasta de uma execução (sem %s)", dir, journal.FileName), Err: err}
	}
	defer j.Close()
	return execute(ctx, j, dir, opts, nil)
}

// Meta is the run's identity and settings, kept in the journal.
type Meta struct {
	RunID       string         `json:"run_id"`
	JobName     string         `json:"job_name"`
	JobFile     string         `json:"job_file"`
	JobSHA256   string         `json:"job_sha256"`
	InputFile   string         `json:"input_file"`
	InputSheet  string         `json:"input_sheet,omitempty"`
	InputSHA256 string         `json:"input_sha256"`
	Kind        results.Kind   `json:"kind"`
	Service     string         `json:"service"`
	BaseURL     string         `json:"base_url,omitempty"`
	PixBaseURL  string         `json:"pix_base_url,omitempty"`
	SandboxDir  string         `json:"sandbox_dir,omitempty"`
	PixKeys     []string       `json:"pix_keys,omitempty"`
	SplitContas []string       `json:"split_contas,omitempty"` // embedded: accounts the job's Pix split pays
	StartedAt   string         `json:"started_at"`
	Formats     []string       `json:"formats"`
	Lang        string         `json:"lang"`
	Concurrency int            `json:"concurrency"`
	Rates       map[string]int `json:"rates,omitempty"`
	Quota       map[string]int `json:"quota,omitempty"`
	Operator    string         `json:"operator,omitempty"`
	BatchDesc   string         `json:"batch_desc,omitempty"`
	Account     string         `json:"account,omitempty"`
}

// CustomID is the deterministic metadata.custom_id of a row: the run id and
// the row key when the key is short and plain, else the run id and a hash
// of the key. It is at most 80 characters (the real limit is 255).
func CustomID(runID, key string) string {
	plain := len(key) > 0 && len(key) <= 40
	for _, c := range key {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			plain = false
			break
		}
	}
	if plain {
		return "rm-" + runID + "-" + key
	}
	h := sha256.Sum256([]byte(key))
	return "rm-" + runID + "-h" + hex.EncodeToString(h[:10])
}

// BatchID is the deterministic id of batch n (1-based) of a run: a decimal
// integer of at most 17 digits, as PUT /v2/lotecobv/:id wants.
func BatchID(runID string, n int) string {
	h := sha256.Sum256([]byte("lote:" + runID))
	var x uint64
	for _, b := range h[:8] {
		x = x<<8 | uint64(b)
	}
	return strconv.FormatUint((x%999_999_999_999+1)*100_000+uint64(n), 10)
}

// SplitConfigID is the deterministic id of a split configuration of a run.
func SplitConfigID(runID, key string) string {
	return "rm" + rules.DeriveTxid("split", runID, key)[:33]
}

func newRunID(now time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return now.In(rules.SaoPaulo).Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func batchDesc(job *pipeline.Job) string {
	if c := job.Spec.Issue.Cobv; c != nil && c.Batch != nil && c.Batch.Descricao != "" {
		return c.Batch.Descricao
	}
	return pipeline.DefaultCobvBatchLabel
}

func operator() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return ""
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("planilha: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("planilha %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("cópia do job: %w", err)
	}
	return os.WriteFile(dst, b, 0o644)
}

func describeLoad(jobPath string, job *pipeline.Job, err error, lang string) string {
	var sb strings.Builder
	rep := pipeline.NewValidationReport(jobPath, job, nil, err)
	rep.WriteText(&sb, lang)
	s := strings.TrimSpace(sb.String())
	if s == "" {
		s = err.Error()
	}
	return s
}

// RowIdentity is how rows of different runs are compared (the runs index,
// the repeated-rows warning): "key|first due date".
func RowIdentity(it *pipeline.Item) string { return rowIdentity(it) }

func rowIdentity(it *pipeline.Item) string {
	d := ""
	if !it.DueDate.IsZero() {
		d = it.DueDate.Format("2006-01-02")
	} else if len(it.Parcels) > 0 {
		d = it.Parcels[0].DueDate.Format("2006-01-02")
	}
	return it.Key + "|" + d
}

// newLogger opens the run's JSON log file.
func newLogger(dir string) (zerolog.Logger, io.Closer, error) {
	f, err := os.OpenFile(filepath.Join(dir, "run.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return zerolog.Nop(), nil, fmt.Errorf("log da execução: %w", err)
	}
	return zerolog.New(redactWriter{f}).Hook(preciseTime{}).Level(zerolog.InfoLevel), f, nil
}

// redactWriter keeps secrets and payers' documents out of run.log: every
// event (one Write) goes through api.RedactString, which also masks what
// reads as a valid CPF or CNPJ (a key column of documents makes custom_ids
// carry one).
type redactWriter struct{ w io.Writer }

func (r redactWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, api.RedactString(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeResults writes results.json (atomically, streaming the rows from
// the journal) and the reports (streaming from results.json), and returns
// the run's results without their rows (Run and Totals: the rows are in
// results.json). A nil result comes with the error that prevented it.
func (e *executor) writeResults(ctx context.Context, dir string) (*results.Results, []string, error) {
	// the first pages are read and decoded while head counts the rows
	// by state
	ahead := e.readAhead(ctx, journal.Page{After: -1}, decodeResult)
	defer ahead.close()
	head, err := e.head(ctx)
	if err != nil {
		return nil, nil, err
	}
	// results.json first and on its own: the other reports are written
	// again from it (remessa report) if one of them fails
	var denied []int64
	paths, res, err := reports.WriteStream(dir, head, func(yield func(*results.Row) error) (results.Totals, error) {
		t, d, err := e.eachResultOf(ahead, yield)
		denied = d
		return t, err
	}, reports.Options{Formats: []string{reports.FormatJSON}})
	ahead.close()
	if res == nil {
		return nil, nil, fmt.Errorf("results.json: %w", err)
	}
	if err != nil && !errors.Is(err, reports.ErrRowsNotTotals) {
		return res, nil, fmt.Errorf("results.json: %w", err)
	}
	noteResults(dir, res.Run.Complete, denied)
	e.denied = denied
	formats := []string{}
	for _, f := range e.m.Formats {
		if f != reports.FormatJSON {
			formats = append(formats, f)
		}
	}
	if len(formats) == 0 {
		return res, paths, err
	}
	ps, _, err := reports.WriteFromFile(dir, filepath.Join(dir, reports.FileJSON), reports.Options{Formats: formats, Lang: e.m.Lang,
		Input: &reports.InputInfo{Path: e.m.InputFile, Sheet: e.m.InputSheet}})
	return res, append(paths, ps...), err
}

// preciseTime stamps log events with RFC 3339 nanosecond times (without
// touching zerolog's global time format).
type preciseTime struct{}

func (preciseTime) Run(e *zerolog.Event, _ zerolog.Level, _ string) {
	e.Str("time", time.Now().UTC().Format(time.RFC3339Nano))
}

// withCustomID returns a copy of md (a new one when nil) whose custom_id is
// the row's own or, when it has none, the one the run derives from its key.
func withCustomID(md *pipeline.Metadata, runID, key string) *pipeline.Metadata {
	out := pipeline.Metadata{}
	if md != nil {
		out = *md
	}
	if out.CustomID == "" {
		out.CustomID = CustomID(runID, key)
	}
	return &out
}
