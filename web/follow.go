package web

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"remessa/api"
	"remessa/pipeline/remind"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
)

// The desk keeps its runs' ledgers fresh by itself and runs their régua:
// a River periodic job (FollowArgs, every Config.SyncEvery) queues one
// FollowRunArgs per finished run that still has open charges; that job
// syncs the run's ledger (pipeline/status), writes its reconciliation as
// "Atualizar situação" does, and runs one pass of the run's régua
// (pipeline/remind): its job file's reminders: section, else the one the
// desk sets for it or the desk's default (regua.go). The desk
// calls the libraries; it re-implements none of their steps.

// DefaultSyncEvery is how often the desk syncs its runs by default.
const DefaultSyncEvery = time.Hour

const followQueue = "acompanhamento"

// The follow jobs carry the start of the server that queued them (Boot,
// Server.boot): the data folder's lock says one server works them, so a
// job still marked running from an earlier start was left by a dead
// process (kill -9 in the middle of a pass). River would rescue it only
// after an hour, and while it looks running it would keep its run from
// being queued again (the jobs are unique while unfinished); with Boot in
// the unique key the new start queues its own at once, and the old job,
// when River rescues it, ends without working. The pass it was making is
// safe to repeat: what it sent or was sending is in the run's
// lembretes.db (a send left "sending" becomes uncertain, never repeated).

// FollowArgs is the periodic job that queues the syncs.
type FollowArgs struct {
	Boot int64 `json:"boot,omitempty"`
}

// Kind is River's name for the job.
func (FollowArgs) Kind() string { return "remessa_acompanhar" }

// InsertOpts: one at a time (a slow tick never piles up behind another).
func (FollowArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: followQueue, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: activeStates}}
}

// FollowRunArgs syncs one run and runs its régua.
type FollowRunArgs struct {
	Run  int64 `json:"run"`
	Boot int64 `json:"boot,omitempty"`
}

// Kind is River's name for the job.
func (FollowRunArgs) Kind() string { return "remessa_acompanhar_execucao" }

// InsertOpts: unique by run (and start) among the jobs not yet finished,
// so two syncs of one run never go at once and a tick finding one still
// queued (or snoozed after a 429) adds none.
func (FollowRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: followQueue, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: activeStates}}
}

// stale reports whether a follow job was queued by an earlier start of
// the server (0: any start, as a test's direct call).
func (s *Server) stale(boot int64) bool { return boot != 0 && boot != s.boot }

// activeStates are the states of a job not finished yet (River requires
// the first four in a unique job's states).
var activeStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateScheduled, rivertype.JobStateRetryable}

type followWorker struct {
	river.WorkerDefaults[FollowArgs]
	s *Server
}

func (w *followWorker) Work(ctx context.Context, job *river.Job[FollowArgs]) error {
	if w.s.stale(job.Args.Boot) {
		return nil
	}
	_, err := w.s.queueFollows(ctx)
	return err
}

type followRunWorker struct {
	river.WorkerDefaults[FollowRunArgs]
	s *Server
}

// Timeout: a big run's sync and pass take as long as they take.
func (w *followRunWorker) Timeout(*river.Job[FollowRunArgs]) time.Duration { return -1 }

func (w *followRunWorker) Work(ctx context.Context, job *river.Job[FollowRunArgs]) error {
	if w.s.stale(job.Args.Boot) {
		w.s.log.Info().Int64("execucao", job.Args.Run).Msg("acompanhamento de uma partida anterior do servidor: já substituído")
		return nil
	}
	_, err := w.s.followRun(ctx, job.Args.Run)
	var ae *api.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && (ae.Status == 429 || ae.Status == 503):
		// the service's quota: the client already waited what Retry-After
		// allowed (api.Client); longer waits come back here and the job
		// sleeps that long before trying again, without using an attempt
		wait := ae.RetryAfter
		if wait < time.Minute {
			wait = time.Minute
		}
		w.s.log.Warn().Int64("execucao", job.Args.Run).Dur("espera", wait).Msg("acompanhamento: cota do serviço, nova tentativa depois")
		return river.JobSnooze(wait)
	case errors.Is(err, remind.ErrBusy):
		return river.JobSnooze(time.Minute)
	}
	w.s.log.Error().Err(err).Int64("execucao", job.Args.Run).Msg("acompanhamento")
	return err
}

// addFollowWorkers registers the follow jobs with the desk's River client
// configuration: the workers, their queue (one at a time: the syncs share
// the service's quota with the runs) and the periodic job.
func (s *Server) addFollowWorkers(workers *river.Workers, cfg *river.Config) error {
	if err := river.AddWorkerSafely(workers, &followWorker{s: s}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &followRunWorker{s: s}); err != nil {
		return err
	}
	cfg.Queues[followQueue] = river.QueueConfig{MaxWorkers: 1}
	s.boot = time.Now().UnixNano()
	if s.cfg.SyncEvery > 0 {
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(s.cfg.SyncEvery),
			func() (river.JobArgs, *river.InsertOpts) { return FollowArgs{Boot: s.boot}, nil }, &river.PeriodicJobOpts{ID: "acompanhar"}))
	}
	return nil
}

// queueFollows queues a FollowRunArgs for every finished run that still
// has open charges (or was never synced) and returns how many it queued.
func (s *Server) queueFollows(ctx context.Context) (int, error) {
	// a run on PostgreSQL (cluster = 1) is not followed: its journal is in
	// the database and the sync and the régua read the run folder's
	rows, err := s.db.QueryContext(ctx, `SELECT id, dir FROM runs WHERE status IN ('done', 'problems') AND cluster = 0 ORDER BY id`)
	if err != nil {
		return 0, err
	}
	type due struct {
		id  int64
		dir string
	}
	var list []due
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.id, &d.dir); err != nil {
			rows.Close()
			return 0, err
		}
		list = append(list, d)
	}
	rows.Close()
	n := 0
	for _, d := range list {
		open, err := hasOpenCharges(ctx, d.dir)
		if err != nil {
			s.log.Error().Err(err).Int64("execucao", d.id).Msg("acompanhamento")
			continue
		}
		if !open {
			continue
		}
		res, err := s.river.Insert(ctx, FollowRunArgs{Run: d.id, Boot: s.boot}, nil)
		if err != nil {
			return n, fmt.Errorf("acompanhamento da execução %d: %w", d.id, err)
		}
		if !res.UniqueSkippedAsDuplicate {
			n++
		}
	}
	return n, nil
}

// hasOpenCharges reports whether the run in dir still has charges to
// follow: its ledger has an open one, or it was never synced.
func hasOpenCharges(ctx context.Context, dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, "results.json")); err != nil {
		return false, nil
	}
	if _, err := os.Stat(filepath.Join(dir, status.FileName)); err != nil {
		return true, nil
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		return false, err
	}
	defer l.Close()
	errFound := errors.New("found")
	err = l.EachCharge(ctx, func(c *status.Charge) error {
		if c.State == status.StateOpen {
			return errFound
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// followRun syncs the run's ledger, writes its reconciliation and runs
// its régua once (reguaFor); the pass's report is nil without a régua.
func (s *Server) followRun(ctx context.Context, id int64) (*remind.Report, error) {
	rec, err := s.loadRun(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("execução %d: %w", id, err)
	}
	if !runFinished(rec.Status) {
		return nil, nil
	}
	ro, cleanup, err := s.runOptions(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	ro.Observe = nil
	sum, err := status.Sync(ctx, rec.Dir, status.Options{Run: ro, Now: s.cfg.Now})
	if err != nil {
		return nil, err
	}
	if _, _, err := conciliacao.WriteRun(ctx, rec.Dir, sum.Today(), "pt"); err != nil {
		return nil, err
	}
	// the régua: the job file's, else the run's own or the desk's
	// default (regua.go); one that cannot be used is logged (and shown on
	// the run page), the sync stands
	r, src, err := s.reguaFor(ctx, rec, ro.Getenv)
	if err != nil {
		s.log.Error().Err(err).Int64("execucao", id).Str("regua", src).Msg("régua de cobrança")
		return nil, nil
	}
	if r == nil {
		return nil, nil
	}
	// the ledger was just synced: the pass decides by the service's time
	// of that sync (or the desk's own clock when it has one, in tests)
	now := s.cfg.Now
	if now == nil {
		t := sum.Today()
		if at, err := time.Parse(time.RFC3339Nano, sum.SyncedAt); err == nil {
			t = at
		}
		now = func() time.Time { return t }
	}
	rep, err := remind.Pass(ctx, rec.Dir, r, remind.Options{Run: ro, Now: now, NoSync: true})
	if err != nil {
		return rep, err
	}
	s.log.Info().Int64("execucao", id).Str("regua", src).Int("enviados", rep.Sent).Int("incertos", rep.Uncertain).Str("nota", rep.Note).Msg("régua de cobrança")
	return rep, nil
}
