package run

// A run over many machines (Options.DB, `remessa worker`; docs/postgres.md).
//
// `remessa run --db postgres://…` plans and seeds the run as always, but
// into the run's journal in Postgres (journal.CreatePostgres); the run is
// cut into units — a cobv batch, or a range of carnet or slip rows — and
// each unit is one River job (pipeline/cluster). Any `remessa worker` takes
// a unit, holds its advisory lock on a connection of its own for as long
// as it works it, and runs the ordinary executor on that unit alone
// (executor.unit: runPosts reads only the unit's rows, runCobv works only
// its batch), so the posting, the look-ups of unknown outcomes and the
// batch re-asks are the same code as a run on one machine. A worker killed
// mid-unit leaves its journal as a killed run does (an intent without an
// outcome); River rescues the job once its lease (ClientConfig.UnitTimeout) is over and
// another worker resumes the unit from the journal: a row found "sending"
// is looked up by its custom_id, a batch found "sent" is asked for, before
// anything is sent again. The run process waits for every unit, then
// writes results.json and the reports from the journal as Run does.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// clusterUnitRows is how many carnet or slip rows one unit of a run in a
// cluster holds: small enough that a killed worker loses little and the
// workers share a job evenly.
const clusterUnitRows = 64

func scopeOf(a cluster.UnitArgs) *unitScope {
	return &unitScope{batch: a.Batch, first: a.First, end: a.End}
}

// createJournal makes the journal of a new run: journal.db in its folder,
// or with Options.DB the run's schema in Postgres (after checking that the
// run can go there and is not the same job on the same input again).
func createJournal(ctx context.Context, dir string, m Meta, opts Options) (*journal.Journal, error) {
	if opts.DB == "" {
		return journal.Create(filepath.Join(dir, journal.FileName))
	}
	if m.Service == "embedded" && m.BaseURL == "" {
		return nil, &UsageError{Msg: "com --db a execução é feita por workers em outras máquinas: o serviço embutido de cada uma seria outro. " +
			"Use um `remessa sandbox` (--base-url) ou o serviço real (service: sandbox ou production)"}
	}
	db, err := cluster.Open(ctx, opts.DB)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if !opts.Again {
		earlier, err := cluster.Earlier(ctx, db, m.JobSHA256, m.InputSHA256, m.Service)
		if err != nil {
			return nil, err
		}
		if earlier != nil {
			return nil, &DuplicateError{Earlier: Entry{RunID: earlier.RunID, Dir: earlier.Dir, Complete: earlier.FinishedAt != nil}}
		}
	}
	return journal.CreatePostgres(ctx, opts.DB, m.RunID)
}

// metaOf reads a journal's Meta.
func metaOf(ctx context.Context, j *journal.Journal) (Meta, error) {
	metas, err := j.Meta(ctx)
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := json.Unmarshal([]byte(metas["meta"]), &m); err != nil || m.RunID == "" {
		return Meta{}, fmt.Errorf("journal: metadados ilegíveis: %v", err)
	}
	return m, nil
}

// units cuts a seeded run into its units.
func units(ctx context.Context, j *journal.Journal, m Meta) ([]cluster.UnitArgs, int, error) {
	var out []cluster.UnitArgs
	rows := 0
	if m.Kind == results.Cobv {
		bs, err := j.Batches(ctx)
		if err != nil {
			return nil, 0, err
		}
		for _, b := range bs {
			out = append(out, cluster.UnitArgs{Run: m.RunID, Unit: b.Num, Batch: b.Num})
			rows += b.End - b.First
		}
		return out, rows, nil
	}
	p := journal.Page{After: -1, Not: []string{journal.RowRefused}, Limit: clusterUnitRows}
	for {
		page, err := j.RowsPage(ctx, p)
		if err != nil {
			return nil, 0, err
		}
		if len(page) == 0 {
			return out, rows, nil
		}
		first, last := page[0].Index, page[len(page)-1].Index
		out = append(out, cluster.UnitArgs{Run: m.RunID, Unit: len(out) + 1, First: first, End: last + 1})
		rows += len(page)
		p.After = last
	}
}

// executeCluster enqueues a seeded run's units and (unless
// Options.Detach) waits for the workers to finish them, then writes the
// results as execute does.
func executeCluster(ctx context.Context, j *journal.Journal, dir string, opts Options, warnings []string) (*Outcome, error) {
	m, err := metaOf(ctx, j)
	if err != nil {
		return nil, err
	}
	if err := j.ShareWriters(ctx); err != nil {
		return nil, err
	}
	us, rows, err := units(ctx, j, m)
	if err != nil {
		return nil, err
	}
	db, err := cluster.Open(ctx, opts.DB)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	started, _ := time.Parse(time.RFC3339, m.StartedAt)
	host, _ := os.Hostname()
	if err := cluster.AddRun(ctx, db, cluster.Run{RunID: m.RunID, JobName: m.JobName, JobSHA256: m.JobSHA256, InputSHA256: m.InputSHA256,
		Kind: string(m.Kind), Service: m.Service, Dir: dir, Host: host, Units: len(us), Rows: rows, StartedAt: started}); err != nil {
		return nil, err
	}
	if w, err := repeatedRows(ctx, db, j, m); err != nil {
		return nil, err
	} else if w != "" {
		warnings = append(warnings, w)
		if opts.Progress != nil { // even with Quiet
			fmt.Fprintln(opts.Progress, w)
		}
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{})
	if err != nil {
		return nil, err
	}
	if err := cluster.Enqueue(ctx, c, us); err != nil {
		return nil, err
	}
	say(opts, fmt.Sprintf("execução %s na fila (%s): %d unidade(s) para os workers (remessa worker --db …)", m.RunID, cluster.Mask(opts.DB), len(us)))
	out := &Outcome{RunID: m.RunID, Dir: dir, Warnings: warnings}
	if opts.Detach {
		out.Results = &results.Results{Version: results.FileVersion, Run: results.RunInfo{ID: m.RunID, JobName: m.JobName, Kind: m.Kind, Service: m.Service, StartedAt: m.StartedAt}}
		out.Results.Totals.Pending.Rows = rows
		return out, nil
	}
	return awaitCluster(ctx, db, c, j, dir, opts, m, out)
}

// awaitCluster waits until no unit of the run will run again (or ctx
// ends: the workers go on), then writes the results from the journal.
func awaitCluster(ctx context.Context, db *cluster.DB, c *river.Client[pgx.Tx], j *journal.Journal, dir string, opts Options, m Meta, out *Outcome) (*Outcome, error) {
	var p cluster.Progress
	last, begun := time.Time{}, time.Now()
	for {
		var err error
		if p, err = cluster.UnitProgress(ctx, c, m.RunID); err != nil && ctx.Err() == nil {
			return nil, err
		}
		if p.Done() || ctx.Err() != nil {
			break
		}
		if !opts.Quiet && time.Since(last) >= 2*time.Second {
			line := fmt.Sprintf("unidades: %d de %d concluídas, %d em execução, %d na fila", p.Completed, p.Total, p.Running, p.Waiting)
			if p.Running == 0 && p.Completed == 0 && time.Since(begun) > 10*time.Second {
				line += " (nenhum worker trabalhando: remessa worker --db …)"
			}
			if len(p.Retrying) > 0 {
				line += fmt.Sprintf("; %d a tentar de novo (%s)", len(p.Retrying), p.Retrying[0])
			}
			say(opts, line)
			last = time.Now()
		}
		sleepCtx(ctx, 300*time.Millisecond)
	}
	wctx := context.WithoutCancel(ctx)
	switch {
	case ctx.Err() != nil:
		out.Stop = &StopError{Reason: "parou de esperar (sinal recebido); os workers continuam: remessa report --db … " + m.RunID + " escreve os resultados depois", Err: ctx.Err()}
	case p.Failed > 0:
		out.Stop = &StopError{Reason: fmt.Sprintf("%d unidade(s) desistiram depois de todas as tentativas: %s", p.Failed, strings.Join(p.Errors, "; "))}
	default:
		if err := cluster.FinishRun(wctx, db, m.RunID, time.Now()); err != nil {
			return nil, err
		}
		// every unit is done: an intent still without an outcome is a
		// killed worker's, resolved when its unit ran again
		if _, err := j.AbandonIntended(wctx); err != nil {
			return nil, err
		}
	}
	res, paths, err := clusterResults(wctx, db, j, dir, opts, m, out.Stop)
	if res == nil {
		return nil, err
	}
	out.Results, out.Reports = res, paths
	if err != nil {
		return out, fmt.Errorf("relatórios: %w", err)
	}
	return out, nil
}

// clusterResults writes results.json and the reports of a run in
// Postgres into dir, as they stand in its journal, and takes the rows
// the service denied out of the database's runs index (db; nil: not):
// nothing of them was issued, so sending them again repeats nothing.
// A denied row is final, so this is right at any point of the run.
func clusterResults(ctx context.Context, db *cluster.DB, j *journal.Journal, dir string, opts Options, m Meta, stop *StopError) (*results.Results, []string, error) {
	e := &executor{j: j, m: m, opts: opts, crash: newCrasher(), used: map[string]int{}}
	if stop != nil {
		e.stop.Store(stop)
	}
	if err := e.load(ctx); err != nil {
		return nil, nil, err
	}
	res, paths, err := e.writeResults(ctx, dir)
	if res != nil && db != nil && len(e.denied) > 0 {
		if ferr := cluster.ForgetRunRows(ctx, db, m.RunID, e.denied); ferr != nil && err == nil {
			err = ferr
		}
	}
	return res, paths, err
}

func say(opts Options, s string) {
	if opts.Progress != nil && !opts.Quiet {
		fmt.Fprintln(opts.Progress, s)
	}
}

// ClusterReport writes results.json and the reports of run runID (in the
// database at dsn) into dir, as the run stands: what `remessa report
// --db` and a detached run's owner use.
func ClusterReport(ctx context.Context, dsn, runID, dir string, opts Options) (*Outcome, error) {
	j, err := journal.OpenPostgres(ctx, dsn, runID)
	if err != nil {
		if errors.Is(err, journal.ErrNoRun) {
			return nil, &UsageError{Msg: fmt.Sprintf("a execução %s não está no banco %s", runID, cluster.Mask(dsn)), Err: err}
		}
		return nil, err
	}
	defer j.Close()
	m, err := metaOf(ctx, j)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	db, err := cluster.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	res, paths, err := clusterResults(ctx, db, j, dir, opts, m, nil)
	if res == nil {
		return nil, err
	}
	return &Outcome{RunID: runID, Dir: dir, Results: res, Reports: paths}, err
}

// ClusterRun is how a run in the database stands.
type ClusterRun struct {
	cluster.Run
	Units  cluster.Progress
	States map[string]int // rows by journal state
}

// ClusterStatus lists the runs in the database at dsn (runID: that one
// only; else the latest 20) with their units and rows.
func ClusterStatus(ctx context.Context, dsn, runID string) ([]ClusterRun, error) {
	db, err := cluster.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var runs []cluster.Run
	if runID != "" {
		r, err := cluster.GetRun(ctx, db, runID)
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, &UsageError{Msg: fmt.Sprintf("a execução %s não está no banco %s", runID, cluster.Mask(dsn))}
		}
		runs = append(runs, *r)
	} else if runs, err = cluster.Runs(ctx, db, 20); err != nil {
		return nil, err
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{})
	if err != nil {
		return nil, err
	}
	var out []ClusterRun
	for _, r := range runs {
		cr := ClusterRun{Run: r}
		if cr.Units, err = cluster.UnitProgress(ctx, c, r.RunID); err != nil {
			return nil, err
		}
		j, err := journal.OpenPostgres(ctx, dsn, r.RunID)
		if err != nil {
			return nil, err
		}
		cr.States, err = j.StateCounts(ctx)
		j.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, cr)
	}
	return out, nil
}

// ResumeCluster enqueues the units of run runID (in the database at
// opts.DB) again — River's uniqueness keeps the ones done, running or
// waiting; a unit that gave up after all its attempts gets a new job — and
// waits for them as run --db does, writing the results into the run's
// folder when it is on this machine, else into ./<run id>.
func ResumeCluster(ctx context.Context, runID string, opts Options) (*Outcome, error) {
	db, err := cluster.Open(ctx, opts.DB)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r, err := cluster.GetRun(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, &UsageError{Msg: fmt.Sprintf("a execução %s não está no banco %s", runID, cluster.Mask(opts.DB))}
	}
	dir := r.Dir
	if host, _ := os.Hostname(); host != r.Host || dir == "" {
		dir = runID
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	j, err := journal.OpenPostgres(ctx, opts.DB, runID)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	m, err := metaOf(ctx, j)
	if err != nil {
		return nil, err
	}
	us, _, err := units(ctx, j, m)
	if err != nil {
		return nil, err
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{})
	if err != nil {
		return nil, err
	}
	if err := cluster.Enqueue(ctx, c, us); err != nil {
		return nil, err
	}
	return awaitCluster(ctx, db, c, j, dir, opts, m, &Outcome{RunID: runID, Dir: dir})
}

// repeatedRows records the run's row identities (key and first due date,
// as the runs folder's index keeps them) in the database's runs index and
// returns a warning naming the earlier runs on the same service whose
// rows this run repeats ("" when none): the check of runs.db, for runs
// started on any machine.
func repeatedRows(ctx context.Context, db *cluster.DB, j *journal.Journal, m Meta) (string, error) {
	var hashes []int64
	p := journal.Page{After: -1, Not: []string{journal.RowRefused}, Limit: 1000}
	for {
		page, err := j.RowsPage(ctx, p)
		if err != nil {
			return "", err
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			var info struct {
				Key     string `json:"key"`
				DueDate string `json:"due_date"`
			}
			if err := json.Unmarshal(r.Info, &info); err != nil {
				return "", fmt.Errorf("journal: linha %d: %w", r.Index, err)
			}
			hashes = append(hashes, keyHash(info.Key+"|"+info.DueDate))
		}
		p.After = page[len(page)-1].Index
	}
	rep, err := cluster.Repeated(ctx, db, m.RunID, m.Service, hashes)
	if err != nil {
		return "", err
	}
	if err := cluster.AddRunRows(ctx, db, m.RunID, hashes); err != nil {
		return "", err
	}
	if len(rep) == 0 {
		return "", nil
	}
	ids := make([]string, 0, len(rep))
	for id := range rep {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var parts []string
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf("%d da execução %s", rep[id], id))
	}
	return fmt.Sprintf("atenção: linhas repetem chave e vencimento de execuções anteriores no banco: %s. Verifique se não são cobranças em duplicidade.", strings.Join(parts, ", ")), nil
}
