package movements

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"remessa/pipeline"
	"remessa/pipeline/actions"
	"remessa/pipeline/run"
)

// FileName is the movements' record in the folder of the run that read
// the remessa: the plan, each group's action (its id and folder under the
// source run's acoes/), and each title's outcome.
const FileName = "movimentos.json"

// Title outcomes.
const (
	Done    = "done"    // applied
	Skipped = "skipped" // not applicable (already paid, already cancelled…): the reason says
	Failed  = "failed"  // the service refused it, or its outcome is unknown
	Pending = "pending" // not carried out yet (resume)
	Refused = "refused" // refused before any call (Plan.Refused)
)

// TitleOutcome is what became of one movement title.
type TitleOutcome struct {
	Title
	RunID  string `json:"run_id,omitempty"`
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// GroupRecord is a group with the action job that carries it out.
type GroupRecord struct {
	Group
	ActionID  string `json:"action_id"`
	ActionDir string `json:"action_dir"`
}

// Record is movimentos.json.
type Record struct {
	Plan     *Plan          `json:"plan"`
	Groups   []GroupRecord  `json:"groups"`
	Titles   []TitleOutcome `json:"titles"`
	Complete bool           `json:"complete"`
}

// Counts is how many titles ended in each state.
func (r *Record) Counts() map[string]int {
	c := map[string]int{}
	for _, t := range r.Titles {
		c[t.State]++
	}
	return c
}

// ExitCode: 0 every movement applied or not applicable, 1 some refused or
// failed, 3 some pending.
func (r *Record) ExitCode() int {
	c := r.Counts()
	switch {
	case c[Pending] > 0:
		return 3
	case c[Refused]+c[Failed] > 0:
		return 1
	}
	return 0
}

// Execute carries out the plan's groups as action jobs and records them in
// dir (the folder of the run that read the file). Each group's action has
// a fixed id (the run's id, the code and the group's number) written to
// movimentos.json before it starts, so Resume finishes the same actions
// after a crash instead of starting new ones.
func Execute(ctx context.Context, p *Plan, dir string, opts actions.Options) (*Record, error) {
	rec := &Record{Plan: p}
	base := filepath.Base(dir)
	for i, g := range p.Groups {
		id := fmt.Sprintf("mov-%s-%s-%d", base, g.Code, i+1)
		rec.Groups = append(rec.Groups, GroupRecord{Group: g, ActionID: id, ActionDir: filepath.Join(g.RunDir, "acoes", id)})
	}
	if err := rec.write(dir); err != nil {
		return nil, err
	}
	return finish(ctx, rec, dir, opts)
}

// Resume finishes the movements recorded in dir (nil, nil when the run
// read no movements).
func Resume(ctx context.Context, dir string, opts actions.Options) (*Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	if err := json.Unmarshal(b, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	if rec.Complete {
		return rec, nil
	}
	return finish(ctx, rec, dir, opts)
}

// finish runs (or resumes) each group's action and records the outcome of
// every title.
func finish(ctx context.Context, rec *Record, dir string, opts actions.Options) (*Record, error) {
	rec.Titles = rec.Titles[:0]
	complete := true
	for _, g := range rec.Groups {
		out, err := runGroup(ctx, g, dir, opts)
		if err != nil {
			complete = false
			reason := err.Error()
			for _, t := range g.Titles {
				rec.Titles = append(rec.Titles, TitleOutcome{Title: t, RunID: g.RunID, State: Pending, Reason: reason})
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		rec.Titles = append(rec.Titles, outcomes(g, out)...)
	}
	for _, r := range rec.Plan.Refused {
		rec.Titles = append(rec.Titles, TitleOutcome{Title: r.Title, State: Refused, Reason: r.Reason})
	}
	for _, t := range rec.Titles {
		complete = complete && t.State != Pending
	}
	rec.Complete = complete
	if err := rec.write(dir); err != nil {
		return rec, err
	}
	return rec, nil
}

// runGroup runs the group's action job, or resumes it when its folder
// exists (a crash after it started).
func runGroup(ctx context.Context, g GroupRecord, dir string, opts actions.Options) (*actions.Outcome, error) {
	if actions.IsActionDir(g.ActionDir) {
		return actions.Resume(ctx, g.ActionDir, opts)
	}
	spec := &actions.Spec{Version: 1, Name: fmt.Sprintf("%s: movimento %s (%s)", filepath.Base(dir), g.Code, g.Name), FromRun: g.RunDir,
		Filter: &actions.FilterSpec{}}
	switch g.Kind {
	case actions.Cancel:
		spec.Action.Cancel = &actions.CancelSpec{}
		for _, t := range g.Titles {
			spec.Filter.Keys = append(spec.Filter.Keys, t.Key)
		}
	case actions.ChangeDueDate:
		spec.Action.ChangeDueDate = &actions.DueSpec{Dates: map[string]string{}}
		for _, t := range g.Titles {
			spec.Action.ChangeDueDate.Dates[t.Key] = t.Due
		}
	case actions.Abatimento:
		// 04: the title's abatimento (P 181–195), each title its own; 05:
		// removed
		spec.Action.Abatimento = &actions.AbatimentoSpec{}
		if g.Code == "05" {
			spec.Action.Abatimento.Remove = true
			for _, t := range g.Titles {
				spec.Filter.Keys = append(spec.Filter.Keys, t.Key)
			}
		} else {
			spec.Action.Abatimento.ByKey = map[string]int64{}
			for _, t := range g.Titles {
				spec.Action.Abatimento.ByKey[t.Key] = t.Rebate
			}
		}
	default:
		return nil, fmt.Errorf("movimento %s: ação %q desconhecida", g.Code, g.Kind)
	}
	j, err := actions.FromSpec(spec, dir, actions.LoadOptions{Now: opts.Now, Getenv: opts.Run.Getenv})
	if err != nil {
		return nil, err
	}
	o := opts
	o.ID = g.ActionID
	o.Yes = true // the remessa's own run was confirmed
	return actions.RunJob(ctx, j, o)
}

// outcomes maps an action's items and skips back onto the group's titles.
func outcomes(g GroupRecord, out *actions.Outcome) []TitleOutcome {
	type st struct{ state, reason string }
	by := map[string]st{}
	worse := func(k string, s st) {
		// a title with several charges (a carnet's parcels) takes its worst
		rank := map[string]int{Done: 0, Skipped: 1, Pending: 2, Failed: 3}
		if cur, ok := by[k]; !ok || rank[s.state] > rank[cur.state] {
			by[k] = s
		}
	}
	if out.Plan != nil {
		for _, s := range out.Plan.Skipped {
			worse(s.RowKey, st{Skipped, s.Reason})
		}
	}
	for _, it := range out.Items {
		switch it.State {
		case actions.StateDone:
			worse(it.RowKey, st{Done, it.Text})
		case actions.StateSkipped:
			worse(it.RowKey, st{Skipped, it.Reason})
		case actions.StatePending, actions.StateSending, actions.StateAmbiguous:
			worse(it.RowKey, st{Pending, "ainda não concluído: remessa resume"})
		default:
			worse(it.RowKey, st{Failed, it.Reason})
		}
	}
	var ts []TitleOutcome
	for _, t := range g.Titles {
		s, ok := by[t.Key]
		if !ok {
			s = st{Skipped, "não se aplica: a execução não tem cobrança em aberto com esta chave"}
		}
		ts = append(ts, TitleOutcome{Title: t, RunID: g.RunID, State: s.state, Reason: s.reason})
	}
	return ts
}

func (r *Record) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, FileName+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, FileName))
}

// WriteSummary writes what became of the movements (Portuguese).
func (r *Record) WriteSummary(w io.Writer) {
	if r == nil || len(r.Titles) == 0 {
		return
	}
	c := r.Counts()
	fmt.Fprintf(w, "Movimentos: %d título(s): %d aplicado(s), %d não se aplica(m), %d recusado(s), %d com falha, %d pendente(s)\n",
		len(r.Titles), c[Done], c[Skipped], c[Refused], c[Failed], c[Pending])
	for _, t := range r.Titles {
		if t.State == Done {
			continue
		}
		fmt.Fprintf(w, "  %s, título %s, movimento %s: %s — %s\n", t.Where("pt"), t.Key, t.Code, stateText(t.State), t.Reason)
	}
}

func stateText(s string) string {
	return map[string]string{Skipped: "não se aplica", Refused: "recusado", Failed: "falhou", Pending: "pendente"}[s]
}

// Run issues the entries of the job at jobPath (run.Run) and then carries
// out its movements in the new run's folder: what `remessa run` and the
// desk do with a CNAB remessa. For a sheet it is run.Run. The movements
// are planned before the issuance (the runs index as it was), so a file
// refused as a whole (invalid, repeated, NSA already imported) changes
// nothing. The actions reach the service as the run did (aopts.Run is
// ropts).
func Run(ctx context.Context, jobPath string, ropts run.Options, aopts actions.Options) (*run.Outcome, *Record, error) {
	job, err := pipeline.Load(jobPath, pipeline.LoadOptions{Now: ropts.Now, Getenv: ropts.Getenv})
	if err != nil || !IsCNAB(job) {
		out, err := run.Run(ctx, jobPath, ropts)
		return out, nil, err
	}
	p, err := Scan(ctx, job, ropts.RunsDir, ropts.Service)
	if err != nil {
		// the issuance words a file's problems
		out, rerr := run.Run(ctx, jobPath, ropts)
		if rerr == nil {
			rerr = err
		}
		return out, nil, rerr
	}
	if conf := ropts.Confirm; conf != nil && p.Titles > 0 {
		// production: the person confirms the movements with the entries
		// (they run after the issuance without asking again)
		ropts.Confirm = func(pl *pipeline.Plan) bool {
			var b strings.Builder
			p.WriteText(&b)
			pl.MovementsText = b.String()
			pl.Movements, _ = json.Marshal(p)
			return conf(pl)
		}
	}
	out, err := run.Run(ctx, jobPath, ropts)
	if err != nil || out == nil || p.Titles == 0 || ropts.Detach {
		return out, nil, err
	}
	aopts.Run = ropts
	rec, err := Execute(ctx, p, out.Dir, aopts)
	return out, rec, err
}

// Summary is one line for a run's end: "" when no movements.
func (r *Record) Summary() string {
	if r == nil || len(r.Titles) == 0 {
		return ""
	}
	c := r.Counts()
	var parts []string
	for _, s := range []string{Done, Skipped, Refused, Failed, Pending} {
		if c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], map[string]string{Done: "aplicado(s)", Skipped: "não se aplica(m)", Refused: "recusado(s)", Failed: "com falha", Pending: "pendente(s)"}[s]))
		}
	}
	return fmt.Sprintf("%d movimento(s): %s", len(r.Titles), strings.Join(parts, ", "))
}
