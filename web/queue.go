package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"remessa/pipeline/journal"
	"remessa/pipeline/run"
	"remessa/sandbox"
)

// RunArgs is the River job that carries a run: the web run's id and its
// generation (a run taken over after a crash gets a new job with the next
// generation; a job of an older generation finds it superseded and ends).
type RunArgs struct {
	Run int64 `json:"run"`
	Gen int   `json:"gen"`
	// RequestID is the id of the request that started the run (X-Request-Id),
	// named by the run's log lines.
	RequestID string `json:"request_id,omitempty"`
}

// Kind is River's name for the job.
func (RunArgs) Kind() string { return "remessa_run" }

// InsertOpts: runs have their own queue; a run that stops for a passing
// cause (service unreachable) is retried by River with its backoff.
func (RunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: runQueue, MaxAttempts: 20}
}

const runQueue = "execucoes"

type runWorker struct {
	river.WorkerDefaults[RunArgs]
	s *Server
}

// Timeout: a run takes as long as it takes (a 100,000-row run, quota
// pauses are snoozes, not waits).
func (w *runWorker) Timeout(*river.Job[RunArgs]) time.Duration { return -1 }

func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) error {
	return w.s.work(ctx, job.Args)
}

// riverStartTries is how many times startRiver starts River when its
// start only timed out.
const riverStartTries = 3

// startRiver starts the River client c. River gives each queue's first
// fetch of its settings 10 s, and the desk's River has one connection to
// web.db: on a machine busy enough (a desk's tests under -race sharing two
// cores with others) that ran out and the desk did not start. A start
// that only timed out leaves nothing started (River stops what it began),
// so it is tried again, riverStartTries times in all; retrying is told
// each timeout. Any other error ends it at once.
func startRiver(ctx context.Context, c *river.Client[*sql.Tx], retrying func(err error, try int)) error {
	for try := 1; ; try++ {
		err := c.Start(context.WithoutCancel(ctx))
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || try == riverStartTries || ctx.Err() != nil {
			return err
		}
		retrying(err, try)
	}
}

func (s *Server) startQueue(ctx context.Context) error {
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &runWorker{s: s}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &actionWorker{s: s}); err != nil {
		return err
	}
	// Each queue's producer asks web.db for work when River's listener
	// (riversqlite's: a table of notifications it reads every 50 ms) says a
	// job was inserted, in a transaction or not, and every
	// FetchPollInterval besides: a backstop for jobs that become available
	// without a notification (snoozed, retried). That poll is a statement
	// SQLite parses anew each time (13-25 ms of CPU under -race), on the
	// desk's one River connection: every 200 ms for each of the four
	// queues, it kept an idle desk's River busy. Once a second is River's
	// default.
	rc := &river.Config{
		Queues:            map[string]river.QueueConfig{runQueue: {MaxWorkers: s.cfg.Workers}, actionQueue: {MaxWorkers: 1, FetchCooldown: 250 * time.Millisecond}},
		Workers:           workers,
		FetchPollInterval: time.Second,
		FetchCooldown:     50 * time.Millisecond,
		JobTimeout:        -1,
		Logger:            nil,
		// the runs table is the app's record; River keeps finished jobs a day
		CompletedJobRetentionPeriod: 24 * time.Hour,
	}
	if err := s.addFollowWorkers(workers, rc); err != nil {
		return err
	}
	if err := s.addInboxWorkers(workers, rc); err != nil {
		return err
	}
	c, err := river.NewClient(riversqlite.New(s.rdb), rc)
	if err != nil {
		return fmt.Errorf("fila de execuções: %w", err)
	}
	s.river = c
	if err := s.recoverRuns(ctx); err != nil {
		return err
	}
	if err := s.recoverActions(ctx); err != nil {
		return err
	}
	if err := startRiver(ctx, c, func(err error, try int) {
		s.log.Warn().Err(err).Int("tentativa", try).Msg("fila de execuções demorou a começar; de novo")
	}); err != nil {
		return fmt.Errorf("fila de execuções: %w", err)
	}
	// what the inbox kept before a stop (a kill -9 between a 200 and its
	// apply included) is applied now
	s.kickInbox()
	return nil
}

// recoverRuns takes over the runs that were under way when the server
// last stopped (recoverLeft): each gets a new job of the next generation,
// which resumes it through its journal.
func (s *Server) recoverRuns(ctx context.Context) error {
	return s.recoverLeft(ctx, "runs", s.enqueueRun, "execucao", "execução retomada após parada do servidor")
}

// recoverLeft takes over the rows of table (runs, desk_actions: an id, a
// status, the generation and the River job_id of each) under way when the
// server last stopped. The data folder's lock says no other process works
// on them, so a River job still marked running (or gone) was left by a
// dead process (kill -9, power loss): such a row gets a job of the next
// generation through enqueue, logged under key with msg. River would
// rescue the old job only after an hour; the old job, when it comes, finds
// itself superseded by its generation. A job River still has queued or
// retrying is left to River.
func (s *Server) recoverLeft(ctx context.Context, table string, enqueue func(ctx context.Context, id int64, gen int) error, key, msg string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, generation, job_id FROM `+table+` WHERE status IN ('queued', 'running')`)
	if err != nil {
		return err
	}
	type orphan struct {
		id    int64
		gen   int
		jobID int64
	}
	var list []orphan
	for rows.Next() {
		var o orphan
		if err := rows.Scan(&o.id, &o.gen, &o.jobID); err != nil {
			rows.Close()
			return err
		}
		list = append(list, o)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, o := range list {
		j, err := s.river.JobGet(ctx, o.jobID)
		if err == nil && j.State != rivertype.JobStateRunning {
			continue // River still has it queued or retrying
		}
		if err != nil && !errors.Is(err, river.ErrNotFound) {
			return err
		}
		if err := enqueue(ctx, o.id, o.gen+1); err != nil {
			return err
		}
		s.log.Info().Int64(key, o.id).Msg(msg)
	}
	return nil
}

// enqueueRun inserts the River job of a run's generation gen and records it.
func (s *Server) enqueueRun(ctx context.Context, runID int64, gen int) error {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := s.river.InsertTx(ctx, tx, RunArgs{Run: runID, Gen: gen}, nil)
	if err != nil {
		return fmt.Errorf("enfileirar a execução: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET generation = ?, job_id = ?, status = CASE WHEN status IN ('running','stopped','cancelled','failed') THEN 'queued' ELSE status END WHERE id = ?`,
		gen, res.Job.ID, runID); err != nil {
		return err
	}
	return tx.Commit()
}

// embedded returns the app's embedded sandbox, starting it on first use.
// It serves every run on the embedded account and the documents (PDFs)
// their results link to.
func (s *Server) embedded() (*sandbox.Running, error) {
	s.embedMu.Lock()
	defer s.embedMu.Unlock()
	if s.embed != nil {
		return s.embed, nil
	}
	rn, err := run.StartEmbedded(s.sandboxDir())
	if err != nil {
		return nil, err
	}
	s.embed = rn
	s.log.Info().Str("url", rn.URL).Str("dados", s.sandboxDir()).Msg("serviço embutido iniciado")
	return rn, nil
}

// journalReady reports whether dir holds a seeded journal (the run was
// created, so it is resumed rather than started again).
func journalReady(ctx context.Context, dir string) bool {
	p := filepath.Join(dir, journal.FileName)
	if _, err := os.Stat(p); err != nil {
		return false
	}
	j, err := journal.Open(p)
	if err != nil {
		return false
	}
	defer j.Close()
	m, err := j.Meta(ctx)
	return err == nil && m["meta"] != ""
}

// runRecord is the web's row of a run.
type runRecord struct {
	ID, DraftID, AccountID int64
	Kind, Name, RunID, Dir string
	Status                 string
	Rows                   int
	Cents                  int64
	StartedBy              int64
	Created, Finished      string
	Progress, Totals       string
	Message                string
	Generation             int
	JobID                  int64
	Again                  bool
	Cluster                bool // a run of the cluster (--db): its units are in PostgreSQL
	Units                  int  // its units, once handed to the cluster
	HandedAt               string
	DB                     string // the cluster's database (cluster.Mask)
	Account                string
	By                     string
	Service                string
}

func (s *Server) loadRun(ctx context.Context, id int64) (*runRecord, error) {
	var r runRecord
	var again, clu int
	err := s.db.QueryRowContext(ctx, `SELECT r.id, r.draft_id, r.account_id, r.kind, r.name, r.run_id, r.dir, r.status, r.rows, r.amount_cents,
		r.started_by, r.created_at, r.finished_at, r.progress, r.totals, r.message, r.generation, r.job_id, r.again, r.cluster, r.units, r.handed_at, r.db,
		a.name, a.service, u.username
		FROM runs r JOIN accounts a ON a.id = r.account_id JOIN users u ON u.id = r.started_by WHERE r.id = ?`, id).
		Scan(&r.ID, &r.DraftID, &r.AccountID, &r.Kind, &r.Name, &r.RunID, &r.Dir, &r.Status, &r.Rows, &r.Cents, &r.StartedBy,
			&r.Created, &r.Finished, &r.Progress, &r.Totals, &r.Message, &r.Generation, &r.JobID, &again, &clu, &r.Units, &r.HandedAt, &r.DB,
			&r.Account, &r.Service, &r.By)
	if err != nil {
		return nil, err
	}
	r.Again, r.Cluster = again != 0, clu != 0
	// A run's folder is execucoes/<run id> under this server's data
	// folder, whatever path the row recorded when it was made: a data
	// folder moved, or restored from a backup elsewhere, keeps its runs.
	r.Dir = filepath.Join(s.runsDir(), r.RunID)
	return &r, nil
}

func (s *Server) setRunStatus(ctx context.Context, id int64, status, message string) {
	fin := ""
	switch status {
	case "done", "problems", "failed", "cancelled":
		fin = nowText()
	}
	s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE runs SET status = ?, message = ?, finished_at = ? WHERE id = ?`, status, message, fin, id)
	s.publishRun(context.WithoutCancel(ctx), id)
}

// publishRun sends a run's stored state to its watchers.
func (s *Server) publishRun(ctx context.Context, id int64) {
	r, err := s.loadRun(ctx, id)
	if err != nil {
		return
	}
	b, _ := json.Marshal(s.runEvent(r))
	s.hub.publish(id, b)
}

var _ = sql.ErrNoRows
