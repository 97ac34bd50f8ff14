package actions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"remessa/api"
	"remessa/internal/crashpoint"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Row states of an action's journal (journal rows, one per item).
const (
	StatePending   = "pending"   // not sent
	StateSending   = "sending"   // the call was journaled as intended; outcome not recorded
	StateAmbiguous = "ambiguous" // outcome unknown and the lookup failed: the next resume looks again
	StateDone      = "done"      // applied
	StateSkipped   = "skipped"   // does not apply (already paid, already cancelled, ...): never forced
	StateUncertain = "uncertain" // resend whose outcome is unknown: reported, never sent again
	StateFailed    = "failed"    // the service refused it
)

// MetaFile marks an action folder (and holds its identity).
const MetaFile = "acao.json"

// Options tune an action run.
type Options struct {
	// Run is how the source run's service is reached (Embedded, BaseURL,
	// PixBaseURL, Getenv, Timeout), as for `remessa resume`.
	Run      run.Options
	Now      func() time.Time
	Yes      bool             // production: do not ask
	Confirm  func(*Plan) bool // production: ask
	Progress io.Writer        // plan and summary lines; nil = none
	ID       string           // fixed action id (tests)
	NoSync   bool             // plan on the ledger as it is (tests)
	Backoff  func(n int) time.Duration
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// Meta is an action folder's identity.
type Meta struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	JobFile     string `json:"job_file"`
	JobSHA256   string `json:"job_sha256"`
	SourceDir   string `json:"source_dir"`
	SourceRunID string `json:"source_run_id"`
	CopyDir     string `json:"copy_dir,omitempty"`
	Concurrency int    `json:"concurrency"`
	StartedAt   string `json:"started_at"`
}

// Result is what became of one item.
type Result struct {
	State   string               `json:"state"`
	Reason  string               `json:"reason,omitempty"`
	Unknown bool                 `json:"unknown,omitempty"` // an attempt's outcome was unknown
	Obs     []status.Observation `json:"observations,omitempty"`
	Files   []string             `json:"files,omitempty"`
}

// ItemOutcome is one item with its result.
type ItemOutcome struct {
	Item
	Result
}

// Outcome is how an action run ended.
type Outcome struct {
	ID        string        `json:"id"`
	Dir       string        `json:"dir"`
	Plan      *Plan         `json:"plan"`
	Items     []ItemOutcome `json:"items"`
	Done      int           `json:"done"`
	Skipped   int           `json:"skipped"`
	Uncertain int           `json:"uncertain"`
	Failed    int           `json:"failed"`
	Pending   int           `json:"pending"`
	Zip       string        `json:"zip,omitempty"`
}

// ExitCode: 0 everything applied or not applicable, 1 some failed or
// uncertain, 3 some still pending (resume).
func (o *Outcome) ExitCode() int {
	switch {
	case o.Pending > 0:
		return 3
	case o.Failed+o.Uncertain > 0:
		return 1
	}
	return 0
}

// Prepare loads the job, brings the source run's ledger up to date (a
// status sync when the ledger is missing or last synced before now) and
// plans: what `remessa action JOB plan` shows.
//
// The plan counts days as the source run's service does: after the sync
// the job is read again with the service's clock (its "hoje", "+5d" and
// the filters' dates), and the plan says that day and, when the service's
// clock and this machine's differ by more than a minute, both times.
func Prepare(ctx context.Context, jobPath string, opts Options) (*Job, *Plan, error) {
	j, err := Load(jobPath, LoadOptions{Now: opts.Now, Getenv: opts.Run.Getenv})
	if err != nil {
		return nil, nil, usageError(err, opts.Run.Lang)
	}
	return PrepareJob(ctx, j, opts)
}

// usageError words a job's problems for the user.
func usageError(err error, lang string) error {
	var je interface{ Localized(string) string }
	if errors.As(err, &je) {
		return &run.UsageError{Msg: je.Localized(lang), Err: err}
	}
	return &run.UsageError{Msg: err.Error(), Err: err}
}

// PrepareJob brings the source run's ledger up to date and plans a loaded
// job (Load or FromSpec): Prepare without the file. It returns the job as
// read again with the service's clock.
func PrepareJob(ctx context.Context, j *Job, opts Options) (*Job, *Plan, error) {
	var clk status.SyncClock
	var known bool
	if !opts.NoSync {
		sum, err := status.Sync(ctx, j.SourceDir, status.Options{Run: opts.Run, Now: opts.Now})
		if err != nil {
			return j, nil, fmt.Errorf("ação: atualizar a situação de %s antes de planejar: %w", j.SourceDir, err)
		}
		clk, known = sum.SyncClock(), true
	} else if l, err := status.OpenLedger(j.SourceDir); err == nil {
		clk, known = l.LastClock(ctx)
		l.Close()
	}
	if known && clk.Source == status.ClockService && j.reload != nil {
		nj, err := j.reload(func() time.Time { return clk.Now(opts.now()) })
		if err != nil {
			return nil, nil, usageError(err, opts.Run.Lang)
		}
		j = nj
	}
	p, err := BuildPlan(ctx, j)
	if p != nil {
		p.Today = rules.FormatISODate(j.Today)
		if known {
			p.ClockNote = status.ClockNote(clk.Reading(), opts.Run.Lang)
		}
	}
	return j, p, err
}

// Run plans the action job at jobPath, asks in production, and runs it in
// a new action folder <run>/acoes/<id>/.
func Run(ctx context.Context, jobPath string, opts Options) (*Outcome, error) {
	j, p, err := Prepare(ctx, jobPath, opts)
	if err != nil {
		return nil, err
	}
	return runPlanned(ctx, j, p, opts)
}

// RunJob plans a loaded job (Load or FromSpec) and runs it as Run does:
// the desk's confirmed selections come here.
func RunJob(ctx context.Context, j *Job, opts Options) (*Outcome, error) {
	j, p, err := PrepareJob(ctx, j, opts)
	if err != nil {
		return nil, err
	}
	return runPlanned(ctx, j, p, opts)
}

func runPlanned(ctx context.Context, j *Job, p *Plan, opts Options) (*Outcome, error) {
	m, err := run.ReadMeta(ctx, j.SourceDir)
	if err != nil {
		return nil, err
	}
	if opts.Progress != nil {
		p.WriteText(opts.Progress)
	}
	if m.Service == "production" && !opts.Yes && len(p.Items) > 0 {
		if opts.Confirm == nil || !opts.Confirm(p) {
			return nil, &run.UsageError{Msg: "ação em produção não confirmada; nada foi enviado (use --yes para confirmar sem perguntar)"}
		}
	}
	id := opts.ID
	if id == "" {
		var b [3]byte
		rand.Read(b[:])
		id = opts.now().In(rules.SaoPaulo).Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
	}
	dir := filepath.Join(j.SourceDir, "acoes", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if j.File != "" {
		os.WriteFile(filepath.Join(dir, "job"+filepath.Ext(j.File)), j.yaml, 0o644)
	} else {
		os.WriteFile(filepath.Join(dir, "job.yaml"), j.yaml, 0o644)
	}
	meta := Meta{ID: id, Name: j.Name, Kind: j.Kind, JobFile: j.File, JobSHA256: j.SHA256, SourceDir: j.SourceDir, SourceRunID: p.SourceRunID,
		CopyDir: j.CopyDir, Concurrency: j.Concurrency, StartedAt: opts.now().UTC().Format(time.RFC3339)}
	jn, err := journal.Create(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	mb, _ := json.Marshal(meta)
	pb, _ := json.Marshal(p)
	err = jn.Tx(ctx, func(tx *journal.Tx) error {
		if err := tx.SetMeta("action", string(mb)); err != nil {
			return err
		}
		if err := tx.SetMeta("plan", string(pb)); err != nil {
			return err
		}
		for i, it := range p.Items {
			ib, _ := json.Marshal(it)
			if err := tx.AddRow(journal.Row{Index: i, Key: it.RowKey, State: StatePending, Info: json.RawMessage(`{}`), Req: ib}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// the marker last: a folder with it has a complete journal
	if err := os.WriteFile(filepath.Join(dir, MetaFile), append(mb, '\n'), 0o644); err != nil {
		return nil, err
	}
	crashAt("acao-seed")
	return execute(ctx, jn, dir, opts)
}

// IsActionDir reports whether dir is an action folder.
func IsActionDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, MetaFile))
	return err == nil
}

// Resume continues the action in dir from its journal. Items whose outcome
// is unknown are looked up before anything is sent again; a resend whose
// outcome is unknown is reported uncertain and never sent again.
func Resume(ctx context.Context, dir string, opts Options) (*Outcome, error) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if !IsActionDir(dir) {
		return nil, &run.UsageError{Msg: fmt.Sprintf("%s não é a pasta de uma ação (sem %s)", dir, MetaFile)}
	}
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	return execute(ctx, jn, dir, opts)
}

// seenAt is when the executor saw an effect, by the service's clock (the
// Date of its answers), this machine's when the service gave none.
func (e *executor) seenAt() time.Time {
	if e.cl != nil && e.cl.Clock().Reading().Known {
		return e.cl.Clock().Now()
	}
	return e.opts.now()
}

type executor struct {
	jn     *journal.Journal
	dir    string
	meta   Meta
	plan   *Plan
	opts   Options
	cl     *api.Client // lookups (retrying)
	send   *api.Client // actions (one attempt each)
	base   string
	ledger *status.Ledger
	lmu    sync.Mutex
}

func execute(ctx context.Context, jn *journal.Journal, dir string, opts Options) (*Outcome, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, &run.UsageError{Msg: err.Error(), Err: err}
	}
	defer unlock()
	metas, err := jn.Meta(ctx)
	if err != nil {
		return nil, err
	}
	e := &executor{jn: jn, dir: dir, opts: opts}
	if err := json.Unmarshal([]byte(metas["action"]), &e.meta); err != nil {
		return nil, fmt.Errorf("ação %s: metadados ilegíveis: %w", dir, err)
	}
	e.plan = &Plan{}
	json.Unmarshal([]byte(metas["plan"]), e.plan)
	if _, err := jn.AbandonIntended(ctx); err != nil {
		return nil, err
	}
	rows, err := jn.Rows(ctx)
	if err != nil {
		return nil, err
	}
	var todo []journal.Row
	for _, r := range rows {
		if r.State == StatePending || r.State == StateSending || r.State == StateAmbiguous {
			todo = append(todo, r)
		}
	}
	e.ledger, err = status.OpenLedger(e.meta.SourceDir)
	if err != nil {
		return nil, err
	}
	defer e.ledger.Close()
	if len(todo) > 0 {
		svc, _, err := run.Connect(ctx, e.meta.SourceDir, opts.Run)
		if err != nil {
			return nil, fmt.Errorf("ação: conectar ao serviço: %w", err)
		}
		defer svc.Close()
		e.cl, e.base = svc.Client, svc.BaseURL
		if e.send, err = svc.Client.NoRetry(); err != nil {
			return nil, err
		}
		conc := max(e.meta.Concurrency, 1)
		sem := make(chan struct{}, conc)
		var wg sync.WaitGroup
		var firstErr atomic.Value
		for _, r := range todo {
			if ctx.Err() != nil {
				break
			}
			sem <- struct{}{}
			wg.Add(1)
			go func(r journal.Row) {
				defer func() { <-sem; wg.Done() }()
				if err := e.process(ctx, r); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}(r)
		}
		wg.Wait()
		if err, _ := firstErr.Load().(error); err != nil && ctx.Err() == nil {
			// journaled: the next resume goes on from here
			if opts.Progress != nil {
				fmt.Fprintln(opts.Progress, "ação:", err)
			}
		}
	}
	return e.finish(ctx)
}

// decodeRow reads a journal row's item and result.
func decodeRow(r journal.Row) (Item, Result) {
	var it Item
	var res Result
	json.Unmarshal(r.Req, &it)
	if len(r.Res) > 0 {
		json.Unmarshal(r.Res, &res)
	}
	res.State = r.State
	return it, res
}

func (e *executor) setRow(ctx context.Context, idx int, res Result, seq int64, callState string, httpStatus int, errText string) error {
	b, _ := json.Marshal(res)
	return e.jn.Tx(ctx, func(tx *journal.Tx) error {
		if seq > 0 {
			if err := tx.Finish(seq, callState, httpStatus, errText); err != nil {
				return err
			}
		}
		return tx.SetRow(idx, res.State, b)
	})
}

func (e *executor) backoff(n int) time.Duration {
	if e.opts.Backoff != nil {
		return e.opts.Backoff(n)
	}
	return min(50*time.Millisecond<<min(n, 6), 2*time.Second)
}

// lookupTries bounds the look-ups of one unknown outcome in one attempt.
const lookupTries = 4

// maxAttempts bounds the calls one item makes in one process before it is
// left pending for the next resume.
const maxAttempts = 12

func (e *executor) process(ctx context.Context, r journal.Row) error {
	it, res := decodeRow(r)
	if it.Kind == SecondCopy {
		return e.secondCopy(ctx, r.Index, it)
	}
	if res.State == StateSending || res.State == StateAmbiguous {
		// a killed process (or a lost answer) left the outcome unknown:
		// look it up before anything is sent again
		res.Unknown = true
		if it.Kind == Resend {
			res.State, res.Reason = StateUncertain, "incerto: o reenvio pode ter sido feito; não foi enviado de novo"
			return e.setRow(ctx, r.Index, res, 0, "", 0, "")
		}
		done, err := e.settleUnknown(ctx, r.Index, it, &res, 0)
		if done || err != nil {
			return err
		}
	}
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var seq int64
		err := e.jn.Tx(ctx, func(tx *journal.Tx) error {
			if err := tx.SetRowAttempt(r.Index, StateSending); err != nil {
				return err
			}
			var err error
			seq, err = tx.Intend(route(it), target(it))
			return err
		})
		if err != nil {
			return err
		}
		crashAt("acao-intent")
		err = e.call(ctx, it)
		crashAt("acao-sent")
		var ae *api.Error
		switch {
		case err == nil:
			res.State, res.Reason = StateDone, ""
			if it.Kind != Resend {
				if lk, lerr := e.lookup(ctx, it); lerr == nil {
					res.Obs = lk.obs
				} else {
					res.Obs = expected(it)
				}
			}
			crashAt("acao-lookup")
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallOK, 200, ""); err != nil {
				return err
			}
			crashAt("acao-done")
			return e.apply(ctx, res.Obs)
		case errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusServiceUnavailable):
			// not processed: again, later
			res.State = StatePending
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error()); err != nil {
				return err
			}
			wait := e.backoff(attempt)
			if ae.RetryAfter > wait && ae.RetryAfter <= 5*time.Second {
				wait = ae.RetryAfter
			}
			time.Sleep(wait)
			continue
		case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500:
			// refused: was it done already (an earlier attempt whose
			// answer was lost), or does it no longer apply?
			if it.Kind == Resend {
				res.State, res.Reason = StateSkipped, "não se aplica: "+ae.Description
				return e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error())
			}
			lk, lerr := e.lookup(ctx, it)
			switch {
			case lerr != nil:
				res.State, res.Reason = StateFailed, ae.Error()
			case lk.applied && res.Unknown:
				res.State, res.Reason, res.Obs = StateDone, "", lk.obs
			case lk.applied:
				res.State, res.Reason, res.Obs = StateSkipped, alreadyReason(it.Kind), lk.obs
			case lk.reason != "":
				res.State, res.Reason, res.Obs = StateSkipped, lk.reason, lk.obs
			default:
				res.State, res.Reason = StateFailed, "recusada pelo serviço: "+ae.Error()
			}
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallFailed, ae.Status, ae.Error()); err != nil {
				return err
			}
			return e.apply(ctx, res.Obs)
		default:
			// 500/502/504 or a lost connection: the outcome is unknown
			status := 0
			if ae != nil {
				status = ae.Status
			}
			res.Unknown = true
			if it.Kind == Resend {
				res.State, res.Reason = StateUncertain, "incerto: o reenvio pode ter sido feito; não foi enviado de novo"
				return e.setRow(ctx, r.Index, res, seq, journal.CallUnknown, status, err.Error())
			}
			res.State = StateSending
			if err := e.setRow(ctx, r.Index, res, seq, journal.CallUnknown, status, err.Error()); err != nil {
				return err
			}
			done, err := e.settleUnknown(ctx, r.Index, it, &res, attempt)
			if done || err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("ação: %s de %s ficou pendente depois de %d tentativas; rode resume", it.Kind, it.RowKey, maxAttempts)
}

// settleUnknown looks up an item whose outcome is unknown: applied ⇒
// done; no longer applicable ⇒ skipped; still to do ⇒ pending (the
// caller sends it again); the lookup failed ⇒ ambiguous (the next resume
// looks again). It reports whether the item is settled.
func (e *executor) settleUnknown(ctx context.Context, idx int, it Item, res *Result, attempt int) (bool, error) {
	time.Sleep(e.backoff(attempt))
	// A look-up only reads, so one that fails (an outage, a dropped
	// answer) is tried again a few times before the item is left ambiguous
	// for the next resume.
	lk, err := e.lookup(ctx, it)
	for try := 1; err != nil && try < lookupTries && ctx.Err() == nil; try++ {
		time.Sleep(e.backoff(attempt + try))
		lk, err = e.lookup(ctx, it)
	}
	crashAt("acao-lookup")
	switch {
	case err != nil:
		res.State, res.Reason = StateAmbiguous, "incerto: não foi possível verificar ("+err.Error()+"); resume verifica de novo"
		return true, e.setRow(ctx, idx, *res, 0, "", 0, "")
	case lk.applied:
		res.State, res.Reason, res.Obs = StateDone, "", lk.obs
	case lk.reason != "":
		res.State, res.Reason, res.Obs = StateSkipped, lk.reason, lk.obs
	default:
		res.State = StatePending
		return false, e.setRow(ctx, idx, *res, 0, "", 0, "")
	}
	if err := e.setRow(ctx, idx, *res, 0, "", 0, ""); err != nil {
		return true, err
	}
	crashAt("acao-done")
	return true, e.apply(ctx, res.Obs)
}

// finish applies every recorded effect to the ledger again (a process
// killed between the journal and the ledger left it behind; applying is
// idempotent), writes the zip of second copies and the reports.
func (e *executor) finish(ctx context.Context) (*Outcome, error) {
	rows, err := e.jn.Rows(ctx)
	if err != nil {
		return nil, err
	}
	out := &Outcome{ID: e.meta.ID, Dir: e.dir, Plan: e.plan}
	var all []status.Observation
	var files []string
	for _, r := range rows {
		it, res := decodeRow(r)
		out.Items = append(out.Items, ItemOutcome{Item: it, Result: res})
		switch res.State {
		case StateDone:
			out.Done++
		case StateSkipped:
			out.Skipped++
		case StateUncertain, StateAmbiguous:
			out.Uncertain++
		case StateFailed:
			out.Failed++
		default:
			out.Pending++
		}
		all = append(all, res.Obs...)
		files = append(files, res.Files...)
	}
	if err := e.apply(ctx, all); err != nil {
		return nil, err
	}
	crashAt("acao-ledger")
	if e.meta.Kind == SecondCopy && len(files) > 0 && out.Pending == 0 {
		sort.Strings(files)
		out.Zip = e.meta.CopyDir + ".zip"
		if err := writeZip(filepath.Join(e.dir, out.Zip), e.dir, files); err != nil {
			return nil, err
		}
	}
	if err := out.write(); err != nil {
		return nil, err
	}
	if e.opts.Progress != nil {
		out.WriteSummary(e.opts.Progress)
	}
	return out, nil
}

// crashAt is a crash point of the tests (internal/crashpoint): acao-seed,
// acao-intent, acao-sent, acao-lookup, acao-done, acao-ledger.
func crashAt(phase string) { crashpoint.At(phase) }
