package web

// `remessa web --db postgres://…` (docs/web.md, "Runs on PostgreSQL"): a
// confirmed remessa becomes a cluster run (pipeline/run's Options.DB), its
// units River jobs in PostgreSQL that this server's own worker and any
// `remessa worker` take.
//
// The handoff crosses two databases, so it cannot be one transaction. It
// goes in three durable steps, each safe to repeat:
//
//  1. the intent, in web.db: the runs row (cluster = 1) and its River job
//     (the run's driver, on this server's SQLite River), in one
//     transaction, as for any run;
//  2. the driver creates the cluster run under the web run's own id: its
//     journal schema remessa_run_<id> (CREATE SCHEMA fails if it exists),
//     its row in remessa_runs (primary key run_id) and its units (River
//     jobs unique by run and unit). Repeated after a crash, each piece
//     that exists is kept: a seeded journal is continued, a half-created
//     one (schema without its seed) is dropped and created again, the
//     index row and units are added only when missing
//     (run.ClusterSeeded, run.ContinueCluster);
//  3. the handoff is recorded in web.db (units, handed_at).
//
// A crash anywhere leaves the driver job running or retryable in web.db,
// and recoverRuns on the next start gives it a new generation; the new
// driver finds the cluster run in whatever step the crash left it and
// finishes it. Every generation of a web run is the same cluster run (its
// id does not change), so no retry creates a second one.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/run"
)

// startCluster connects to the cluster's database (migrating River's
// tables and the runs index) and starts this server's unit worker.
func (s *Server) startCluster(ctx context.Context) error {
	if s.cfg.DB == "" {
		return nil
	}
	if !cluster.IsPostgres(s.cfg.DB) {
		return errors.New("--db: esperado um endereço postgres://… ou postgresql://… (o recebido não é de um PostgreSQL)")
	}
	cw, err := run.OpenClusterWatch(ctx, s.cfg.DB)
	if err != nil {
		return err // cluster.Open's message: the URL without its password
	}
	s.cw = cw
	if s.cfg.Units < 0 {
		return nil
	}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ready := make(chan struct{})
	s.unitStop, s.unitDone = cancel, make(chan struct{})
	go func() {
		defer close(s.unitDone)
		err := run.WorkWith(wctx, run.WorkerOptions{DB: s.cfg.DB, Units: s.cfg.Units, UnitTimeout: s.cfg.UnitTimeout,
			LogDir: filepath.Join(s.runsDir(), ".unidades"), Ready: func() { close(ready) }}, s.unitOptions)
		if err != nil {
			s.log.Error().Str("erro", err.Error()).Msg("worker das unidades")
		}
	}()
	select {
	case <-ready:
	case <-s.unitDone:
		return errors.New("o worker das unidades não começou (veja o log)")
	case <-time.After(30 * time.Second):
	}
	s.log.Info().Str("banco", cluster.Mask(s.cfg.DB)).Int("unidades", max(1, s.cfg.Units)).Msg("worker das unidades iniciado")
	return nil
}

// dbName is the cluster's database as runs record it: its URL without
// the password ("" without --db).
func (s *Server) dbName() string {
	if s.cfg.DB == "" {
		return ""
	}
	return cluster.Mask(s.cfg.DB)
}

// stopCluster stops the unit worker (units in flight finish their calls
// and go back to the queue) and closes the database.
func (s *Server) stopCluster() {
	if s.unitStop != nil {
		s.unitStop()
		<-s.unitDone
	}
	if s.cw != nil {
		s.cw.Close()
	}
}

// unitOptions are the options a unit of run runID is worked with in this
// server: those of the web run (its account's service and credentials).
// Units of runs that are not this server's are left to the workers that
// have their credentials (run.ErrNotMine).
func (s *Server) unitOptions(ctx context.Context, runID string) (run.Options, func(), error) {
	var id int64
	if err := s.db.QueryRowContext(ctx, `SELECT id FROM runs WHERE run_id = ? AND cluster = 1`, runID).Scan(&id); err != nil {
		return run.Options{}, nil, run.ErrNotMine
	}
	r, err := s.loadRun(ctx, id)
	if err != nil {
		return run.Options{}, nil, err
	}
	opts, cleanup, err := s.runOptions(ctx, r)
	if err != nil {
		return run.Options{}, nil, err
	}
	opts.Observe = nil // a unit's counters are not the run's: the driver reads them from the database
	return opts, cleanup, nil
}

// crashAt kills the process at a point of the handoff named by
// REMESSA_WEB_CRASH_AT (tests of the crash window).
func crashAt(point string) {
	if os.Getenv("REMESSA_WEB_CRASH_AT") == point {
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill()
			select {}
		}
	}
}

// workCluster drives a cluster run: it hands the run to the cluster (or
// finishes a handoff a crash interrupted), shows its progress as the
// database has it, and when no unit will run again writes the results
// and reports into the run folder.
func (s *Server) workCluster(ctx context.Context, r *runRecord, opts run.Options) error {
	if s.cw == nil || r.DB != s.dbName() {
		// in another database (or none) the run would be created again
		// from its job: its rows sent twice
		s.setRunStatus(ctx, r.ID, "stopped", fmt.Sprintf("esta execução está no banco PostgreSQL %s: inicie o remessa web com esse --db (ou REMESSA_DATABASE_URL) para continuá-la", r.DB))
		return nil
	}
	opts.DB, opts.Observe = s.cfg.DB, nil
	crashAt("handoff")
	seeded, err := run.ClusterSeeded(ctx, s.cfg.DB, r.RunID)
	if err != nil {
		return s.finishRun(ctx, r, nil, err)
	}
	if !seeded {
		// nothing of the run is in the database: it is created (again)
		os.RemoveAll(r.Dir)
		d := opts
		d.Detach = true
		if out, err := run.Run(ctx, s.draftJobPath(r.DraftID), d); err != nil {
			return s.finishRun(ctx, r, out, err)
		}
	}
	crashAt("handoff-pg")
	// the handoff is complete: recorded in web.db (the driver after a
	// crash continues the same cluster run either way)
	st, err := s.cw.Status(ctx, r.RunID)
	if err == nil && st.Run.RunID != "" {
		s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE runs SET units = ?, handed_at = CASE WHEN handed_at = '' THEN ? ELSE handed_at END WHERE id = ?`,
			st.Run.Units, nowText(), r.ID)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		s.watchCluster(wctx, r)
	}()
	out, err := run.ContinueCluster(ctx, r.RunID, r.Dir, opts)
	stopWatch()
	<-watched
	if s.cancelAsked(r.ID) {
		// cancelled: the units being worked stop after their calls in
		// flight; the run is cancelled once they have (so that Retomar
		// finds every unit final and gives the cancelled ones new jobs)
		s.settleUnits(context.WithoutCancel(ctx), r)
	}
	st = s.storeClusterProgress(context.WithoutCancel(ctx), r, true)
	if err == nil && out != nil && out.Stop != nil && ctx.Err() == nil && st.Units.Failed > 0 && !s.cancelAsked(r.ID) {
		// units gave up after all their attempts: the run waits for
		// Retomar (which enqueues them again) rather than for River to
		// retry its driver
		if out.Results != nil {
			tb, _ := json.Marshal(out.Results.Totals)
			s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE runs SET totals = ? WHERE id = ?`, string(tb), r.ID)
		}
		s.setRunStatus(ctx, r.ID, "stopped", out.Stop.Error())
		return nil
	}
	return s.finishRun(ctx, r, out, err)
}

// settleUnits waits (at most a unit's lease and River's rescue, 2 min)
// until no unit of the run is being worked.
func (s *Server) settleUnits(ctx context.Context, r *runRecord) {
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st, err := s.cw.Status(ctx, r.RunID)
		if err != nil || st.Units.Running == 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// watchCluster stores and publishes the run's progress from the database
// once a second until ctx ends.
func (s *Server) watchCluster(ctx context.Context, r *runRecord) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		s.storeClusterProgress(ctx, r, false)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// storeClusterProgress reads the run's units and rows from the database,
// stores them as the run's progress and sends them to its watchers.
func (s *Server) storeClusterProgress(ctx context.Context, r *runRecord, final bool) run.ClusterRun {
	st, err := s.cw.Status(ctx, r.RunID)
	if err != nil {
		return st
	}
	p := clusterProgressOf(st, r.Rows)
	if final {
		p.Phase = ""
	}
	b, _ := json.Marshal(p)
	s.db.ExecContext(ctx, `UPDATE runs SET progress = ? WHERE id = ?`, string(b), r.ID)
	if cur, err := s.loadRun(ctx, r.ID); err == nil {
		msg, _ := json.Marshal(s.runEventWith(cur, p))
		s.hub.publish(r.ID, msg)
	}
	return st
}

// ClusterProgress is a cluster run's units by River's state and rows by
// journal state, as `remessa status --db RUN_ID` shows them.
type ClusterProgress struct {
	Units     int          `json:"units"`
	Completed int          `json:"completed"`
	Running   int          `json:"running"`
	Waiting   int          `json:"waiting"`
	Failed    int          `json:"failed"`
	Rows      []StateCount `json:"rows"`
	Retrying  string       `json:"retrying,omitempty"` // the first unit waiting to be tried again, and why
}

// StateCount is how many rows are in a journal state.
type StateCount struct {
	State string `json:"state"`
	N     int    `json:"n"`
}

func clusterProgressOf(st run.ClusterRun, accepted int) Progress {
	return clusterProgressAt(st, accepted, time.Now())
}

// clusterProgressAt is clusterProgressOf as of now: the rate is the rows
// finished per second since the run started (until it finished, if it
// has), and the time left is what is left at that rate.
func clusterProgressAt(st run.ClusterRun, accepted int, now time.Time) Progress {
	issued, denied, amb := st.States[journal.RowIssued], st.States[journal.RowDenied], st.States[journal.RowAmbiguous]
	total := accepted
	if total == 0 {
		total = st.Run.Rows
	}
	cp := &ClusterProgress{Units: st.Units.Total, Completed: st.Units.Completed, Running: st.Units.Running, Waiting: st.Units.Waiting, Failed: st.Units.Failed}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range st.States {
			if k != journal.RowRefused && !yield(k) {
				return
			}
		}
	}) {
		cp.Rows = append(cp.Rows, StateCount{State: k, N: st.States[k]})
	}
	if len(st.Units.Retrying) > 0 {
		cp.Retrying = st.Units.Retrying[0]
	}
	// the unit counters say how the units stand; the phase line says only
	// why one waits to be tried again, if one does
	p := Progress{Phase: cp.Retrying,
		Total: total, Done: issued + denied, Issued: issued, Denied: denied, Ambiguous: amb,
		Batches: st.Units.Total, BatchesDone: st.Units.Completed, At: now.UTC().Format(time.RFC3339Nano), Cluster: cp}
	if start := st.Run.StartedAt; !start.IsZero() {
		end := now
		if f := st.Run.FinishedAt; f != nil {
			end = *f
		}
		if el := end.Sub(start).Seconds(); el > 0 {
			p.Rate = float64(p.Done) / el
		}
		if p.Rate > 0 && p.Total > p.Done {
			p.ETASeconds = int(float64(p.Total-p.Done) / p.Rate)
		}
	}
	return p
}

// cancelUnits cancels a cluster run's units (the run's page's Cancelar).
func (s *Server) cancelUnits(ctx context.Context, r *runRecord) {
	if s.cw == nil || !r.Cluster {
		return
	}
	if n, err := s.cw.Cancel(ctx, r.RunID); err != nil {
		s.log.Error().Str("erro", err.Error()).Str("execucao", r.RunID).Msg("cancelar as unidades")
	} else {
		s.log.Info().Int("unidades", n).Str("execucao", r.RunID).Msg("unidades canceladas")
	}
}
