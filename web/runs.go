package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"remessa/api"
	"remessa/internal/metrics"
	"remessa/pipeline"
	"remessa/pipeline/actions"
	"remessa/pipeline/movements"
	"remessa/pipeline/run"
)

// work carries one run (a River job): it starts the run, or resumes it
// through its journal when it was started before, and records how it ended.
func (s *Server) work(ctx context.Context, a RunArgs) error {
	r, err := s.loadRun(ctx, a.Run)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if a.Gen != r.Generation {
		return nil // superseded by a later job of the same run
	}
	switch r.Status {
	case "done", "problems", "failed", "cancelled":
		return nil
	}
	// the run's log lines name it and the request that started it
	log := s.log.With().Int64("execucao", r.ID).Str("run_id", r.RunID).Str("request_id", a.RequestID).Logger()
	ctx = log.WithContext(ctx)
	log.Info().Int("geracao", a.Gen).Msg("execução começou")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.cancels.Store(r.ID, cancel)
	defer s.cancels.Delete(r.ID)
	s.setRunStatus(ctx, r.ID, "running", "")
	opts, cleanup, err := s.runOptions(ctx, r)
	if err != nil {
		s.setRunStatus(ctx, r.ID, "failed", err.Error())
		return nil
	}
	defer cleanup()
	if r.Cluster {
		return s.workCluster(ctx, r, opts)
	}
	var out *run.Outcome
	var mov *movements.Record
	aopts := actions.Options{Run: opts}
	if journalReady(ctx, r.Dir) {
		out, err = run.Resume(ctx, r.Dir, opts)
		if err == nil && out != nil && out.Stop == nil {
			// a CNAB remessa's movements left by a stop or a crash
			mov, err = movements.Resume(ctx, out.Dir, aopts)
		}
	} else {
		// nothing was journaled: the run starts (again) from the job;
		// a CNAB remessa's movements follow its entries
		os.RemoveAll(r.Dir)
		out, mov, err = movements.Run(ctx, s.draftJobPath(r.DraftID), opts, aopts)
	}
	movProblems := ""
	if err == nil && out != nil && out.Stop == nil && mov != nil {
		zerolog.Ctx(ctx).Info().Str("movimentos", mov.Summary()).Msg("movimentos da remessa")
		if mov.ExitCode() == 1 {
			movProblems = mov.Summary()
		}
	}
	return s.finishRunWith(ctx, r, out, err, movProblems)
}

// finishRun records a run's outcome (finishRunWith without movements).
func (s *Server) finishRun(ctx context.Context, r *runRecord, out *run.Outcome, err error) error {
	return s.finishRunWith(ctx, r, out, err, "")
}

// finishRunWith records a run's outcome. A run stopped by a passing cause
// is handed back to River (an error retries it with River's backoff; a
// quota stop snoozes until the quota renews); one the user cancelled stays
// cancelled until resumed from its page. movProblems, when not "", is what
// went wrong with a CNAB remessa's movements: a complete run then ends
// with problems, in one write (a page never sees it done first).
func (s *Server) finishRunWith(ctx context.Context, r *runRecord, out *run.Outcome, err error, movProblems string) error {
	var ue *run.UsageError
	var ie *run.InvalidRowsError
	var de *run.DuplicateError
	defer func() {
		ev := zerolog.Ctx(ctx).Info()
		if err != nil {
			ev = ev.Str("erro", api.RedactString(err.Error()))
		}
		ev.Msg("execução parou")
	}()
	switch {
	case errors.As(err, &ie), errors.As(err, &de), errors.As(err, &ue):
		s.setRunStatus(ctx, r.ID, "failed", err.Error())
		return nil
	case out == nil && err != nil:
		if s.cancelAsked(r.ID) {
			s.setRunStatus(ctx, r.ID, "cancelled", "")
			return nil
		}
		s.setRunStatus(ctx, r.ID, "stopped", err.Error())
		return err
	}
	if out.Results != nil {
		tb, _ := json.Marshal(out.Results.Totals)
		s.db.ExecContext(context.WithoutCancel(ctx), `UPDATE runs SET totals = ? WHERE id = ?`, string(tb), r.ID)
	}
	if out.Stop != nil {
		if s.cancelAsked(r.ID) {
			s.setRunStatus(ctx, r.ID, "cancelled", out.Stop.Error())
			return nil
		}
		s.setRunStatus(ctx, r.ID, "stopped", out.Stop.Error())
		if !out.Stop.ResumeAt.IsZero() {
			return river.JobSnooze(time.Until(out.Stop.ResumeAt) + time.Second)
		}
		return fmt.Errorf("execução interrompida: %s", out.Stop.Reason)
	}
	if code := out.ExitCode(); (code == 0 || code == 1) && out.Results != nil {
		// its rows were counted by the run as they became final
		metrics.RunFinished("complete")
	}
	switch out.ExitCode() {
	case 0, 1:
		st := "done"
		if out.ExitCode() == 1 || movProblems != "" {
			st = "problems"
		}
		s.setRunStatus(ctx, r.ID, st, movProblems)
		// the notifications that came while the run was creating its
		// charges were of no run yet: the inbox indexes it and applies them
		s.kickInbox()
	default:
		s.setRunStatus(ctx, r.ID, "stopped", "")
		return errors.New("execução com linhas pendentes")
	}
	return nil
}

func (s *Server) cancelAsked(id int64) bool {
	var c int
	s.db.QueryRow(`SELECT cancel_asked FROM runs WHERE id = ?`, id).Scan(&c)
	return c != 0
}

// runOptions are the pipeline's options for a web run: its fixed id and
// runs folder, the shared embedded sandbox or the account's credentials
// (a certificate is written to a private temporary file for the run and
// removed after it), and an observer that stores and publishes progress.
func (s *Server) runOptions(ctx context.Context, r *runRecord) (run.Options, func(), error) {
	acc, err := s.account(ctx, r.AccountID)
	if err != nil {
		return run.Options{}, nil, fmt.Errorf("conta de serviço %d: %w", r.AccountID, err)
	}
	cleanup := func() {}
	opts := run.Options{RunsDir: s.runsDir(), RunID: r.RunID, Service: acc.Service, Yes: true, Again: r.Again,
		BaseURL: acc.BaseURL, PixBaseURL: acc.PixBaseURL, Lang: "pt", Observe: s.observer(r.ID), Now: s.cfg.Now,
		Getenv: noEnv, Operator: r.By + " (remessa web)"}
	if base := s.notifyBase(acc); base != "" && acc.NotifyToken != "" {
		// the service tells the desk of its charges (inbox.go)
		opts.NotificationURL, opts.PixWebhookURL = notifyURLs(base, acc.NotifyToken)
	}
	if acc.Service == "embedded" {
		rn, err := s.embedded()
		if err != nil {
			return run.Options{}, nil, err
		}
		opts.Embedded = rn
		return opts, cleanup, nil
	}
	c, err := s.credentials(ctx, acc.ID)
	if err != nil {
		return run.Options{}, nil, err
	}
	env := map[string]string{"REMESSA_CLIENT_ID": c.ClientID, "REMESSA_CLIENT_SECRET": c.ClientSecret, "REMESSA_CERT_PASSWORD": c.P12Password}
	if len(c.P12) > 0 {
		f, err := os.CreateTemp(s.cfg.DataDir, ".cert-*.p12")
		if err != nil {
			return run.Options{}, nil, err
		}
		f.Chmod(0o600)
		f.Write(c.P12)
		f.Close()
		env["REMESSA_CERT"] = f.Name()
		cleanup = func() { os.Remove(f.Name()) }
	}
	opts.Getenv = func(k string) (string, bool) { v, ok := env[k]; return v, ok && v != "" }
	return opts, cleanup, nil
}

// observer stores a run's progress (at most once a second) and publishes
// every snapshot to the browsers watching.
func (s *Server) observer(id int64) func(run.Snapshot) {
	var last time.Time
	return func(sn run.Snapshot) {
		ev := progressOf(sn)
		b, _ := json.Marshal(ev)
		if sn.Finished || time.Since(last) >= time.Second {
			last = time.Now()
			s.db.Exec(`UPDATE runs SET progress = ? WHERE id = ?`, string(b), id)
		}
		r, err := s.loadRun(context.Background(), id)
		if err != nil {
			return
		}
		msg, _ := json.Marshal(s.runEventWith(r, ev))
		s.hub.publish(id, msg)
	}
}

// Progress is a run's progress as stored and sent to browsers.
type Progress struct {
	Phase       string  `json:"phase,omitempty"`
	Total       int     `json:"total"`
	Done        int     `json:"done"`
	Issued      int     `json:"issued"`
	Denied      int     `json:"denied"`
	Ambiguous   int     `json:"ambiguous"`
	Batches     int     `json:"batches"`
	BatchesDone int     `json:"batches_done"`
	Rate        float64 `json:"rate"`
	ETASeconds  int     `json:"eta_seconds"`
	At          string  `json:"at,omitempty"`
	// Cluster is a cluster run's units and rows as the database has them
	Cluster *ClusterProgress `json:"cluster,omitempty"`
}

func progressOf(sn run.Snapshot) Progress {
	return Progress{Phase: sn.Phase, Total: sn.Total, Done: sn.Done, Issued: sn.Issued, Denied: sn.Denied, Ambiguous: sn.Ambiguous,
		Batches: sn.Batches, BatchesDone: sn.BatchesDone, Rate: sn.Rate, ETASeconds: int(sn.ETA.Seconds()), At: sn.At.UTC().Format(time.RFC3339Nano)}
}

// RunEvent is what the run page's event stream carries.
type RunEvent struct {
	Status   string   `json:"status"`
	Label    string   `json:"label"`
	Finished bool     `json:"finished"`
	Message  string   `json:"message,omitempty"`
	Progress Progress `json:"progress"`
}

func (s *Server) runEvent(r *runRecord) RunEvent {
	var p Progress
	json.Unmarshal([]byte(r.Progress), &p)
	return s.runEventWith(r, p)
}

func (s *Server) runEventWith(r *runRecord, p Progress) RunEvent {
	if p.Total == 0 {
		p.Total = r.Rows
	}
	return RunEvent{Status: r.Status, Label: tr("pt", "status."+r.Status), Finished: runFinished(r.Status), Message: r.Message, Progress: p}
}

func runFinished(status string) bool {
	switch status {
	case "done", "problems", "failed", "cancelled":
		return true
	}
	return false
}

// draftDir is the folder of a remessa in preparation.
func (s *Server) draftDir(id int64) string {
	return filepath.Join(s.draftsDir(), strconv.FormatInt(id, 10))
}

// draftJobPath is the job file the pipeline runs for a remessa.
func (s *Server) draftJobPath(id int64) string { return filepath.Join(s.draftDir(id), "job.yaml") }

var _ = pipeline.Load
