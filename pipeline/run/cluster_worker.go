package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/riverqueue/river"

	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// WorkerOptions tune `remessa worker`.
type WorkerOptions struct {
	DB          string        // postgres://…
	Units       int           // units worked at once (default 2)
	Concurrency int           // calls at once within a unit; 0 = the job's
	LogDir      string        // where each run's log goes (<LogDir>/<run id>/run.log); default a folder in the temporary directory
	UnitTimeout time.Duration // a unit's lease: it stops then, and a dead worker's unit goes to another after it (default cluster.DefaultUnitTimeout)
	Options     Options       // service overrides (BaseURL, Timeout, Getenv…) as for resume
	Progress    io.Writer     // one line per unit started and finished; nil = none
	Ready       func()        // called once the worker takes units (tests)
	// HealthAddr, when set, is where the worker serves GET /healthz,
	// /readyz and /metrics (docs/operations.md); its address is written to
	// Progress and given to Listening.
	HealthAddr string
	Listening  func(addr string)
}

// Work takes units of any run from the database until ctx ends, then
// stops: units in flight finish their calls, are journaled and go back to
// the queue for another worker.
func Work(ctx context.Context, o WorkerOptions) error {
	return serveUnits(ctx, o, filepath.Join(os.TempDir(), "remessa-worker"), func(db *cluster.DB, o WorkerOptions) river.Worker[cluster.UnitArgs] {
		return &unitWorker{db: db, o: o}
	})
}

// serveUnits is Work with the River worker newWorker makes over the
// database (logDir: the default of o.LogDir).
func serveUnits(ctx context.Context, o WorkerOptions, logDir string, newWorker func(*cluster.DB, WorkerOptions) river.Worker[cluster.UnitArgs]) error {
	db, err := cluster.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	if o.LogDir == "" {
		o.LogDir = logDir
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, newWorker(db, o)); err != nil {
		return err
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{Workers: workers, Units: o.Units, UnitTimeout: o.UnitTimeout})
	if err != nil {
		return err
	}
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("fila: %w", err)
	}
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "worker no banco %s: até %d unidade(s) de cada vez\n", cluster.Mask(o.DB), max(1, o.Units))
	}
	if o.HealthAddr != "" {
		addr, err := serveWorkerOps(ctx, o.HealthAddr, db, o)
		if err != nil {
			c.StopAndCancel(context.Background())
			return fmt.Errorf("--health-addr %s: %w", o.HealthAddr, err)
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "saúde e métricas em http://%s (/healthz, /readyz, /metrics)\n", addr)
		}
		if o.Listening != nil {
			o.Listening(addr)
		}
	}
	// a dead worker's unit goes to another soon after its lease, not at
	// River's next rescue (every 30 s)
	rescuing := make(chan struct{})
	go func() {
		defer close(rescuing)
		after := cluster.ClientConfig{UnitTimeout: o.UnitTimeout}.RescueAfter()
		t := time.NewTicker(cluster.RescueEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				cluster.RescueDead(ctx, db, after) // an error: the next round, or River's rescuer
			}
		}
	}()
	if o.Ready != nil {
		o.Ready()
	}
	<-ctx.Done()
	<-rescuing
	// units in flight stop sending, journal what they sent and end; they
	// are retried by River (on another worker) from their journal
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		c.StopAndCancel(context.Background())
	}
	return nil
}

type unitWorker struct {
	river.WorkerDefaults[cluster.UnitArgs]
	db *cluster.DB
	o  WorkerOptions
}

// Timeout is the unit's lease: River rescues a unit whose worker died
// only once its timeout has passed (a unit with none would never be
// rescued). A live unit goes on past it (Work).
func (w *unitWorker) Timeout(*river.Job[cluster.UnitArgs]) time.Duration {
	return cluster.ClientConfig{UnitTimeout: w.o.UnitTimeout}.Timeout()
}

// lockWait is how long a unit whose lock another worker holds waits
// before River offers it again.
const lockWait = 3 * time.Second

func (w *unitWorker) Work(ctx context.Context, job *river.Job[cluster.UnitArgs]) error {
	a := job.Args
	lock, err := cluster.LockUnit(ctx, w.db, a.Run, a.Unit)
	if err != nil {
		return fmt.Errorf("trava da unidade %d de %s: %w", a.Unit, a.Run, err)
	}
	if lock == nil {
		// another worker is on it (a unit River rescued while its worker
		// still lives): it is not sent twice, it waits
		return river.JobSnooze(lockWait)
	}
	defer lock.Release()
	// The unit goes on past its lease (River's timeout ends ctx with
	// DeadlineExceeded): it holds the lock, so a rescued attempt on
	// another worker waits for it, and a long batch is not cut off and
	// retried over and over. It stops when the worker stops (ctx
	// cancelled) or the lock's connection fails.
	uctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		for {
			select {
			case <-lock.Lost():
				cancel() // the lock may be another worker's now: send nothing more
				return
			case <-ctx.Done():
				if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
					cancel()
					return
				}
				ctx = uctx // the lease is over: only the lock and the worker stop it now
			case <-uctx.Done():
				return
			}
		}
	}()
	j, err := journal.OpenPostgres(uctx, w.o.DB, a.Run)
	if err != nil {
		if errors.Is(err, journal.ErrNoRun) {
			return river.JobCancel(err)
		}
		return err
	}
	defer j.Close()
	// a cobv run's split configurations are sent by the first unit that
	// finds them pending; the others wait for it (lock 0 of the run), so
	// no two workers send the same configuration
	if splits, err := j.Splits(uctx); err != nil {
		return err
	} else if slices.ContainsFunc(splits, func(s journal.Split) bool { return s.State != "done" && s.State != "refused" }) {
		sl, err := cluster.LockUnit(uctx, w.db, a.Run, 0)
		if err != nil {
			return fmt.Errorf("trava das configurações de split de %s: %w", a.Run, err)
		}
		if sl == nil {
			return river.JobSnooze(lockWait)
		}
		defer sl.Release()
	}
	if w.o.Progress != nil {
		fmt.Fprintf(w.o.Progress, "unidade %d de %s (tentativa %d)\n", a.Unit, a.Run, job.Attempt)
	}
	opts := w.o.Options
	if w.o.Concurrency > 0 {
		opts.Concurrency = w.o.Concurrency
	}
	err = executeUnit(uctx, j, filepath.Join(w.o.LogDir, a.Run), opts, scopeOf(a))
	if w.o.Progress != nil {
		fmt.Fprintf(w.o.Progress, "unidade %d de %s: %v\n", a.Unit, a.Run, errText(err))
	}
	var se *StopError
	if errors.As(err, &se) && !se.ResumeAt.IsZero() {
		return river.JobSnooze(time.Until(se.ResumeAt) + time.Second) // a daily quota
	}
	return err
}

func errText(err error) string {
	if err == nil {
		return "concluída"
	}
	return err.Error()
}

// executeUnit drives one unit of a run in Postgres to its end with the
// executor of a run on one machine, scoped to the unit. It returns an
// error when the unit is not finished (a stop, rows still pending or
// ambiguous), for River to retry it.
func executeUnit(ctx context.Context, j *journal.Journal, logDir string, opts Options, u *unitScope) error {
	m, err := metaOf(ctx, j)
	if err != nil {
		return err
	}
	if m.Service == "embedded" && opts.BaseURL == "" {
		// a cluster run on "embedded" names the sandbox all workers share
		opts.BaseURL, opts.PixBaseURL = m.BaseURL, m.PixBaseURL
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return fmt.Errorf("log da unidade: %w", err)
	}
	log, lc, err := newLogger(logDir)
	if err != nil {
		return err
	}
	defer lc.Close()
	log = log.With().Str("run", m.RunID).Int("batch", u.batch).Int("first", u.first).Int("end", u.end).Logger()
	opts.Progress = nil
	e := &executor{j: j, m: m, opts: opts, log: log, crash: newCrasher(), used: map[string]int{}, unit: u}
	e.prog = newProgress(opts, m)
	defer e.prog.close()
	if err := e.load(ctx); err != nil {
		return err
	}
	e.w = newWriter(j)
	defer e.w.close()
	e.setupQuota()
	e.runStart, _ = time.Parse(time.RFC3339, m.StartedAt)
	e.window = [2]time.Time{e.runStart.Add(-24 * time.Hour), opts.now().Add(48 * time.Hour)}
	if svc, err := e.connect(ctx); err != nil {
		e.halt(&StopError{Reason: "não foi possível conectar ao serviço", Err: err})
	} else {
		defer svc.Close()
		e.svc = svc
		// a cancelled ctx (the worker stopping, its lock lost, the lease
		// over) stops new calls; calls in flight finish and are journaled
		stopped := make(chan struct{})
		go func() {
			select {
			case <-ctx.Done():
				e.halt(&StopError{Reason: "unidade interrompida", Err: ctx.Err()})
			case <-stopped:
			}
		}()
		e.drive(context.WithoutCancel(ctx))
		close(stopped)
	}
	if err := e.w.close(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if se := e.stop.Load(); se != nil {
		return se
	}
	return unitFinished(context.WithoutCancel(ctx), j, m, u)
}

// unitFinished is nil when every row of the unit is issued or denied (and
// a cobv batch done), else says what is left.
func unitFinished(ctx context.Context, j *journal.Journal, m Meta, u *unitScope) error {
	if m.Kind == results.Cobv {
		bs, err := j.Batches(ctx)
		if err != nil {
			return err
		}
		for _, b := range bs {
			if b.Num == u.batch && b.State != journal.BatchDone {
				return fmt.Errorf("lote %d ainda %s", b.Num, b.State)
			}
		}
		return nil
	}
	left, err := j.RowsPage(ctx, u.narrow(journal.Page{After: -1, Not: []string{journal.RowRefused, journal.RowIssued, journal.RowDenied}, Limit: 1}))
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("linha %d ainda %s", left[0].Index, left[0].State)
	}
	return nil
}
