package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"remessa/pipeline/actions"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

// ActionArgs is the River job of a confirmed desk action: its desk_actions
// row and generation (as RunArgs: a job left running by a dead process is
// replaced on the next start by one of the next generation).
type ActionArgs struct {
	Action int64 `json:"action"`
	Gen    int   `json:"gen"`
	// RequestID is the id of the request that confirmed the action, so
	// the job's log lines can be found with the request's.
	RequestID string `json:"request_id,omitempty"`
}

// Kind is River's name for the job.
func (ActionArgs) Kind() string { return "remessa_acao" }

// InsertOpts: actions have their own queue, worked one at a time, so two
// confirmations of the same selection run one after the other and the
// second plans after the first has journaled what it did (it then finds
// nothing left to cancel, and a move by days "já feito" by the first).
func (ActionArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: actionQueue, MaxAttempts: 20}
}

const actionQueue = "acoes"

type actionWorker struct {
	river.WorkerDefaults[ActionArgs]
	s *Server
}

// Timeout: a second copy of a few thousand PDFs takes a while.
func (w *actionWorker) Timeout(*river.Job[ActionArgs]) time.Duration { return -1 }

func (w *actionWorker) Work(ctx context.Context, job *river.Job[ActionArgs]) error {
	return w.s.workAction(ctx, job.Args)
}

// deskAction is a desk_actions row.
type deskAction struct {
	ID, RunID           int64
	Kind, Spec, Plan    string
	Items, Charges      int
	Cents               int64
	Status              string
	ActionID            string
	CreatedBy           int64
	CreatedAt           string
	ConfirmedBy         int64
	ConfirmedAt         string
	FinishedAt          string
	Generation          int
	JobID               int64
	Outcome, Message    string
	By, ConfirmedByName string
}

func (s *Server) loadAction(ctx context.Context, id int64) (*deskAction, error) {
	var a deskAction
	err := s.db.QueryRowContext(ctx, `SELECT a.id, a.run_id, a.kind, a.spec, a.plan, a.items, a.charges, a.amount_cents, a.status, a.action_id,
		a.created_by, a.created_at, coalesce(a.confirmed_by, 0), a.confirmed_at, a.finished_at, a.generation, a.job_id, a.outcome, a.message,
		u.username, coalesce(c.username, '')
		FROM desk_actions a JOIN users u ON u.id = a.created_by LEFT JOIN users c ON c.id = a.confirmed_by WHERE a.id = ?`, id).
		Scan(&a.ID, &a.RunID, &a.Kind, &a.Spec, &a.Plan, &a.Items, &a.Charges, &a.Cents, &a.Status, &a.ActionID,
			&a.CreatedBy, &a.CreatedAt, &a.ConfirmedBy, &a.ConfirmedAt, &a.FinishedAt, &a.Generation, &a.JobID, &a.Outcome, &a.Message,
			&a.By, &a.ConfirmedByName)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// actionDir is the action's folder under its run (the journal's).
func actionDir(rec *runRecord, a *deskAction) string {
	return filepath.Join(rec.Dir, "acoes", a.ActionID)
}

// actionUploads is where a desk action keeps what its selection uploaded
// (a sheet of keys): the spec's relative paths are taken from here.
func (s *Server) actionUploads(id int64) string {
	return filepath.Join(s.cfg.DataDir, "acoes", fmt.Sprint(id))
}

func (s *Server) setActionStatus(ctx context.Context, id int64, status, message string) {
	fin := ""
	switch status {
	case "done", "problems", "failed":
		fin = nowText()
	}
	s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE desk_actions SET status = ?, message = ?, finished_at = ? WHERE id = ?`, status, message, fin, id)
}

// actionSummary is what the desk keeps of an action's outcome (the whole
// is resultado.json in its folder).
type actionSummary struct {
	Done      int    `json:"done"`
	Skipped   int    `json:"skipped"`
	Uncertain int    `json:"uncertain"`
	Failed    int    `json:"failed"`
	Pending   int    `json:"pending"`
	Zip       string `json:"zip,omitempty"`
}

// workAction runs a confirmed desk action as `remessa action` would: the
// first time actions.RunJob (plans again on the ledger synced now, then the
// calls through the journal in <run>/acoes/<action_id>/), after a stop or a
// crash actions.Resume of that folder (unknown outcomes looked up before
// anything is sent again). A folder without its marker was left before the
// first call and is made again.
func (s *Server) workAction(ctx context.Context, args ActionArgs) error {
	a, err := s.loadAction(ctx, args.Action)
	if err != nil {
		return fmt.Errorf("ação %d: %w", args.Action, err)
	}
	if a.Generation != args.Gen {
		return nil // superseded by a newer job
	}
	log := s.log.With().Int64("acao", a.ID).Str("request_id", args.RequestID).Logger()
	switch a.Status {
	case "done", "problems", "failed", "planned":
		return nil
	}
	rec, err := s.loadRun(ctx, a.RunID)
	if err != nil {
		return fmt.Errorf("ação %d: execução %d: %w", a.ID, a.RunID, err)
	}
	s.setActionStatus(ctx, a.ID, "running", "")
	ro, cleanup, err := s.runOptions(ctx, rec)
	if err != nil {
		s.setActionStatus(ctx, a.ID, "running", err.Error())
		return err
	}
	defer cleanup()
	ro.Observe = nil
	opts := actions.Options{Run: ro, Now: s.cfg.Now, Yes: true, ID: a.ActionID}
	dir := actionDir(rec, a)
	var out *actions.Outcome
	if actions.IsActionDir(dir) {
		out, err = actions.Resume(ctx, dir, opts)
	} else {
		os.RemoveAll(dir) // no marker: stopped before its first call
		var spec actions.Spec
		if err := json.Unmarshal([]byte(a.Spec), &spec); err != nil {
			s.setActionStatus(ctx, a.ID, "failed", "seleção ilegível")
			return nil
		}
		j, lerr := actions.FromSpec(&spec, s.actionUploads(a.ID), actions.LoadOptions{Now: s.cfg.Now, Getenv: noEnv})
		if lerr != nil {
			s.setActionStatus(ctx, a.ID, "failed", lerr.Error())
			return nil
		}
		out, err = actions.RunJob(ctx, j, opts)
	}
	if err != nil {
		var ue *run.UsageError
		if errors.As(err, &ue) && ctx.Err() == nil {
			s.setActionStatus(ctx, a.ID, "failed", ue.Msg)
			s.audit(context.WithoutCancel(ctx), a.ConfirmedBy, "acao_falhou", fmt.Sprintf("ação %d (%s) de %s: %s", a.ID, a.Kind, a.ConfirmedByName, ue.Msg))
			return nil
		}
		// a passing cause (the service unreachable, the server stopping):
		// River tries again with its backoff; the journal keeps what was done
		s.setActionStatus(ctx, a.ID, "running", err.Error())
		return err
	}
	sum := actionSummary{Done: out.Done, Skipped: out.Skipped, Uncertain: out.Uncertain, Failed: out.Failed, Pending: out.Pending, Zip: out.Zip}
	sb, _ := json.Marshal(sum)
	wctx := context.WithoutCancel(ctx)
	s.db.ExecContext(wctx, `UPDATE desk_actions SET outcome = ? WHERE id = ?`, string(sb), a.ID)
	// the run page's situation includes what the action changed
	if _, _, err := conciliacao.WriteRun(wctx, rec.Dir, rules.Today(status.ServiceNow(wctx, rec.Dir, s.now())), "pt"); err != nil {
		log.Error().Err(err).Msg("conciliação depois da ação")
	}
	if out.Pending > 0 {
		msg := fmt.Sprintf("%d item(ns) pendente(s); tentando de novo", out.Pending)
		s.setActionStatus(ctx, a.ID, "running", msg)
		return errors.New(msg)
	}
	st := "done"
	if out.Failed+out.Uncertain > 0 {
		st = "problems"
	}
	s.setActionStatus(ctx, a.ID, st, "")
	s.audit(wctx, a.ConfirmedBy, "acao_concluida", fmt.Sprintf("ação %d (%s) confirmada por %s na execução %s: %d feitas, %d não se aplicam, %d incertas, %d recusadas",
		a.ID, a.Kind, a.ConfirmedByName, rec.RunID, out.Done, out.Skipped, out.Uncertain, out.Failed))
	return nil
}

// enqueueAction inserts the River job of an action's generation gen and
// records it (the confirmation's own insert is in its transaction).
func (s *Server) enqueueAction(ctx context.Context, id int64, gen int) error {
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := s.river.InsertTx(ctx, tx, ActionArgs{Action: id, Gen: gen}, nil)
	if err != nil {
		return fmt.Errorf("enfileirar a ação: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE desk_actions SET generation = ?, job_id = ?, status = 'queued' WHERE id = ?`, gen, res.Job.ID, id); err != nil {
		return err
	}
	return tx.Commit()
}

// recoverActions takes over the actions under way when the server last
// stopped, as recoverRuns does for runs (recoverLeft): each gets a job of
// the next generation, which resumes it from its journal.
func (s *Server) recoverActions(ctx context.Context) error {
	return s.recoverLeft(ctx, "desk_actions", s.enqueueAction, "acao", "ação retomada após parada do servidor")
}
