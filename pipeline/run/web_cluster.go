package run

// What `remessa web --db postgres://…` needs of a run over many machines
// (docs/web.md, docs/postgres.md): the web confirms a remessa in its own
// database (web.db) and then hands the run to the cluster, a step it may
// repeat after a crash. ClusterSeeded says whether a run's journal is in
// the database already (and removes one a crash left half-created),
// ContinueCluster finishes a handoff and waits for the units as `run --db`
// does, ClusterWatch reads the progress for the run page and checks a
// plan against the database's runs index, and WorkWith is `remessa
// worker` inside the web (its own runs, with their accounts' credentials).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"

	"remessa/pipeline"
	"remessa/pipeline/cluster"
	"remessa/pipeline/journal"
)

// ClusterSeeded reports whether run runID has a seeded journal in the
// database at dsn. A journal whose schema exists without the seed's
// transaction (a process killed between the two) is dropped: nothing of
// it was sent, and the run can be created again under the same id.
func ClusterSeeded(ctx context.Context, dsn, runID string) (bool, error) {
	j, err := journal.OpenPostgres(ctx, dsn, runID)
	if errors.Is(err, journal.ErrNoRun) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	metas, err := j.Meta(ctx)
	j.Close()
	if err == nil && metas["meta"] != "" {
		return true, nil
	}
	cfg, perr := pgx.ParseConfig(dsn)
	if perr != nil {
		return false, perr
	}
	db := sql.OpenDB(stdlib.GetConnector(*cfg))
	defer db.Close()
	if derr := journal.DropPostgres(ctx, db, runID); derr != nil {
		return false, fmt.Errorf("journal incompleto de %s: %w", runID, derr)
	}
	return false, nil
}

// ContinueCluster finishes the handoff of run runID, whose journal is
// seeded in the database at opts.DB, whatever step a crash interrupted:
// it records the run in the runs index (and its rows' identities) when
// missing, enqueues its units (River's uniqueness keeps those already
// enqueued; a unit that gave up or was cancelled gets a new job) and, unless opts.Detach, waits for them and writes the
// results and reports into dir as `remessa run --db` does.
func ContinueCluster(ctx context.Context, runID, dir string, opts Options) (*Outcome, error) {
	j, err := journal.OpenPostgres(ctx, opts.DB, runID)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	m, err := metaOf(ctx, j)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pasta da execução: %w", err)
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
	out := &Outcome{RunID: runID, Dir: dir}
	r, err := cluster.GetRun(ctx, db, runID)
	if err != nil {
		return nil, err
	}
	if r == nil {
		started, _ := time.Parse(time.RFC3339, m.StartedAt)
		host, _ := os.Hostname()
		if err := cluster.AddRun(ctx, db, cluster.Run{RunID: m.RunID, JobName: m.JobName, JobSHA256: m.JobSHA256, InputSHA256: m.InputSHA256,
			Kind: string(m.Kind), Service: m.Service, Dir: dir, Host: host, Units: len(us), Rows: rows, StartedAt: started}); err != nil {
			return nil, err
		}
	}
	var indexed bool
	if err := db.Pool.QueryRow(ctx, `SELECT EXISTS(SELECT 1 FROM remessa_run_rows WHERE run_id = $1)`, runID).Scan(&indexed); err != nil {
		return nil, fmt.Errorf("índice das execuções: %w", err)
	}
	if !indexed && rows > 0 {
		if w, err := repeatedRows(ctx, db, j, m); err != nil {
			return nil, err
		} else if w != "" {
			out.Warnings = append(out.Warnings, w)
		}
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{})
	if err != nil {
		return nil, err
	}
	if err := cluster.Enqueue(ctx, c, us); err != nil {
		return nil, err
	}
	if opts.Detach {
		return out, nil
	}
	return awaitCluster(ctx, db, c, j, dir, opts, m, out)
}

// ClusterWatch reads how runs in a database stand over one pool (the
// web's run page asks once a second).
type ClusterWatch struct {
	db *cluster.DB
	c  *river.Client[pgx.Tx]
}

// OpenClusterWatch connects to the database at dsn.
func OpenClusterWatch(ctx context.Context, dsn string) (*ClusterWatch, error) {
	db, err := cluster.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	c, err := cluster.NewClient(db, cluster.ClientConfig{})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &ClusterWatch{db: db, c: c}, nil
}

// Close closes the pool.
func (w *ClusterWatch) Close() { w.db.Close() }

// Status is run runID's units by River's states and rows by journal
// state (what `remessa status --db RUN_ID` shows); the run's index entry
// is empty while the run is not in the index yet.
func (w *ClusterWatch) Status(ctx context.Context, runID string) (ClusterRun, error) {
	var cr ClusterRun
	r, err := cluster.GetRun(ctx, w.db, runID)
	if err != nil {
		return cr, err
	}
	if r != nil {
		cr.Run = *r
	}
	if cr.Units, err = cluster.UnitProgress(ctx, w.c, runID); err != nil {
		return cr, err
	}
	j, err := journal.OpenPostgres(ctx, w.db.DSN, runID)
	if errors.Is(err, journal.ErrNoRun) {
		return cr, nil
	}
	if err != nil {
		return cr, err
	}
	defer j.Close()
	cr.States, err = j.StateCounts(ctx)
	return cr, err
}

// Cancel cancels the units of run runID that may still run
// (cluster.CancelUnits) and returns how many.
func (w *ClusterWatch) Cancel(ctx context.Context, runID string) (int, error) {
	return cluster.CancelUnits(ctx, w.c, runID)
}

// ErrNotMine is what WorkWith's options function returns for a run the
// process does not work (another web's, or a `remessa run --db`'s): its
// unit goes back to the queue for the workers (and webs) that do.
var ErrNotMine = errors.New("execução de outro processo")

// foreignWait is how long a unit of a run that is not this process's
// waits before River offers it again.
const foreignWait = 2 * time.Second

// WorkWith is Work with each unit's options (credentials, service
// address) given by optsFor for its run: `remessa web --db` works the
// units of its own runs with their accounts' credentials. A run optsFor
// answers ErrNotMine for is left to others (its unit is snoozed).
// cleanup, when not nil, is called after the unit.
func WorkWith(ctx context.Context, o WorkerOptions, optsFor func(ctx context.Context, runID string) (Options, func(), error)) error {
	return serveUnits(ctx, o, os.TempDir(), func(db *cluster.DB, o WorkerOptions) river.Worker[cluster.UnitArgs] {
		return &ownUnitWorker{db: db, o: o, optsFor: optsFor}
	})
}

type ownUnitWorker struct {
	river.WorkerDefaults[cluster.UnitArgs]
	db      *cluster.DB
	o       WorkerOptions
	optsFor func(context.Context, string) (Options, func(), error)
}

func (w *ownUnitWorker) Timeout(*river.Job[cluster.UnitArgs]) time.Duration {
	return cluster.ClientConfig{UnitTimeout: w.o.UnitTimeout}.Timeout()
}

func (w *ownUnitWorker) Work(ctx context.Context, job *river.Job[cluster.UnitArgs]) error {
	opts, cleanup, err := w.optsFor(ctx, job.Args.Run)
	if errors.Is(err, ErrNotMine) {
		return river.JobSnooze(foreignWait)
	}
	if err != nil {
		return err
	}
	if cleanup != nil {
		defer cleanup()
	}
	o := w.o
	o.Options = opts
	return (&unitWorker{db: w.db, o: o}).Work(ctx, job)
}

// PlanNotes is what the database's runs index says of a job about to
// run (the plan's Earlier lines of a run with --db): the same job on the
// same input and service already ran, or rows repeat an earlier run's key
// and due date.
func (w *ClusterWatch) PlanNotes(ctx context.Context, job *pipeline.Job) ([]string, error) {
	inputSHA, err := fileSHA256(job.InputFile)
	if err != nil {
		return nil, err
	}
	db, dsn := w.db, w.db.DSN
	service := job.Service
	if service == "" {
		service = "embedded"
	}
	var notes []string
	earlier, err := cluster.Earlier(ctx, db, job.SHA256, inputSHA, service)
	if err != nil {
		return nil, err
	}
	if earlier != nil {
		notes = append(notes, fmt.Sprintf("este job já rodou com esta mesma planilha na execução %s (banco %s): \"remessa run --db\" recusa repeti-lo sem --again", earlier.RunID, cluster.Mask(dsn)))
	}
	var hashes []int64
	if _, err := pipeline.ValidateStream(ctx, job, pipeline.Handler{Item: func(it *pipeline.Item) error {
		hashes = append(hashes, keyHash(rowIdentity(it)))
		return nil
	}}); err != nil {
		return nil, err
	}
	rep, err := cluster.Repeated(ctx, db, "", service, hashes)
	if err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(rep)) {
		if earlier != nil && id == earlier.RunID {
			continue
		}
		notes = append(notes, fmt.Sprintf("atenção: %d linha(s) repetem chave e vencimento da execução %s no banco. Verifique se não são cobranças em duplicidade.", rep[id], id))
	}
	return notes, nil
}
