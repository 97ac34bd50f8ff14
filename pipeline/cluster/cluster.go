// Package cluster is what runs spread over machines share in PostgreSQL
// (remessa run --db, remessa worker --db; docs/postgres.md): the
// connection, River's tables (migrated with rivermigrate) and client, the
// River job that carries one unit of a run's work, the runs index, and
// the per-unit advisory lock that keeps two workers off one unit.
//
// It knows nothing of how a unit is worked: pipeline/run registers the
// worker (cluster.go there) and calls Open, NewClient and Enqueue.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"remessa/internal/migrate"
	"remessa/sandbox/store"
)

// EnvDB names the variable that gives the database when --db is not given.
const EnvDB = "REMESSA_DATABASE_URL"

// Queue is River's queue of the units of runs.
const Queue = "remessa_unidades"

// DSN is the database URL of a command: its --db flag, else REMESSA_DATABASE_URL.
func DSN(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv(EnvDB)
}

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool { return store.IsPostgres(dsn) }

// Mask is dsn without its password, for messages and logs (the
// sandbox's store masks its URL the same way).
func Mask(dsn string) string {
	if !IsPostgres(dsn) {
		return "postgres://…"
	}
	return store.Redact(dsn)
}

// DB is an open cluster database.
type DB struct {
	Pool *pgxpool.Pool
	DSN  string
}

// Close closes the pool.
func (d *DB) Close() { d.Pool.Close() }

// Open connects to the database at dsn and brings its tables up to date:
// River's (rivermigrate) and the runs index, under an advisory lock so
// that workers starting together migrate once.
func Open(ctx context.Context, dsn string) (*DB, error) {
	if !IsPostgres(dsn) {
		return nil, errors.New("--db: esperado um endereço postgres://… ou postgresql://… (o recebido não é de um PostgreSQL)")
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("banco %s: %v", Mask(dsn), scrub(err, dsn))
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "remessa"
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("banco %s: %v", Mask(dsn), scrub(err, dsn))
	}
	d := &DB{Pool: pool, DSN: dsn}
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("banco %s: %v", Mask(dsn), scrub(err, dsn))
	}
	return d, nil
}

// scrub keeps the password out of an error's text.
func scrub(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New(strings.ReplaceAll(err.Error(), pw, "xxxxx"))
	}
	return err
}

const migrateLock = 0x72656d657373 // "remess": the advisory lock migrations run under

// RunsSchema is the runs index's tables (remessa_runs), step by step
// (internal/migrate); step 1 is what the binary of 8e335f2 made, frozen.
// River's tables beside them are rivermigrate's.
var RunsSchema = migrate.Schema{Name: "remessa_runs", Table: "remessa_runs_schema_version", Dialect: migrate.Postgres, Steps: []migrate.Step{
	{Name: "índice das execuções (8e335f2)", SQL: runsSchemaV1},
}}

const runsSchemaV1 = `
CREATE TABLE IF NOT EXISTS remessa_runs(
	run_id text PRIMARY KEY,
	job_name text NOT NULL,
	job_sha256 text NOT NULL,
	input_sha256 text NOT NULL,
	kind text NOT NULL,
	service text NOT NULL,
	dir text NOT NULL,
	host text NOT NULL,
	units integer NOT NULL,
	rows_total integer NOT NULL,
	started_at timestamptz NOT NULL,
	finished_at timestamptz
);
CREATE INDEX IF NOT EXISTS remessa_runs_same ON remessa_runs(job_sha256, input_sha256, service);
CREATE TABLE IF NOT EXISTS remessa_run_rows(h bigint NOT NULL, run_id text NOT NULL REFERENCES remessa_runs(run_id) ON DELETE CASCADE);
CREATE INDEX IF NOT EXISTS remessa_run_rows_h ON remessa_run_rows(h);
`

func (d *DB) migrate(ctx context.Context) error {
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, int64(migrateLock)); err != nil {
		return err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(migrateLock))
	// The runs index first: a database of a newer remessa is refused
	// before River's migrator writes to it.
	sdb := stdlib.OpenDBFromPool(d.Pool)
	defer sdb.Close()
	if err := migrate.Up(ctx, sdb, &RunsSchema); err != nil {
		return fmt.Errorf("índice das execuções: %w", err)
	}
	m, err := rivermigrate.New(riverpgxv5.New(d.Pool), nil)
	if err != nil {
		return fmt.Errorf("migrações do River: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrações do River: %w", err)
	}
	return nil
}

// UnitArgs is the River job of one unit of a run: a cobv batch (Batch,
// its number) or a range of carnet or slip rows (input indexes First ≤
// idx < End).
type UnitArgs struct {
	Run   string `json:"run" river:"unique"`
	Unit  int    `json:"unit" river:"unique"`
	Batch int    `json:"batch,omitempty"`
	First int    `json:"first,omitempty"`
	End   int    `json:"end,omitempty"`
}

// Kind is River's name for the job.
func (UnitArgs) Kind() string { return "remessa_unidade" }

// InsertOpts: the units' queue; one job per unit of a run, whatever
// enqueues it again (River's uniqueness by run and unit); many attempts
// (a unit stopped by the service's quota or an outage is retried).
func (UnitArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 50, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// retryPolicy retries a unit soon: its journal says where it stopped.
type retryPolicy struct{}

func (retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(min(time.Duration(job.Attempt)*time.Second, 30*time.Second))
}

// DefaultUnitTimeout is how long a unit may run (a batch of 1000 cobv
// or 64 carnets takes seconds).
const DefaultUnitTimeout = 2 * time.Minute

// ClientConfig tunes a River client of the cluster.
type ClientConfig struct {
	Workers *river.Workers // nil: a client that only enqueues
	Units   int            // units worked at once by this process (default 2)
	// UnitTimeout is the lease of a unit (default DefaultUnitTimeout): a
	// unit whose worker died is taken as abandoned once it has been
	// running that long (plus a second, RescueAfter), and the workers'
	// RescueDead (every RescueEvery) or else River's rescuer (every 30 s,
	// on the leader) gives it to another worker. A unit still alive then
	// goes on (pipeline/run's worker ignores the timeout) and is protected
	// by its advisory lock: the rescued attempt waits for it.
	UnitTimeout time.Duration
}

// Timeout is the unit lease of c.
func (c ClientConfig) Timeout() time.Duration {
	if c.UnitTimeout <= 0 {
		return DefaultUnitTimeout
	}
	return c.UnitTimeout
}

// RescueAfter is how long a unit runs before it is taken as abandoned
// when its lock is free (RescueDead), or at all (River's rescuer).
func (c ClientConfig) RescueAfter() time.Duration { return c.Timeout() + time.Second }

// NewClient is a River client on the cluster's database.
func NewClient(d *DB, c ClientConfig) (*river.Client[pgx.Tx], error) {
	cfg := &river.Config{
		JobTimeout:                  c.Timeout(),
		RescueStuckJobsAfter:        c.RescueAfter(),
		RetryPolicy:                 retryPolicy{},
		FetchPollInterval:           200 * time.Millisecond,
		FetchCooldown:               20 * time.Millisecond,
		CompletedJobRetentionPeriod: 7 * 24 * time.Hour,
	}
	if c.Workers != nil {
		cfg.Workers = c.Workers
		cfg.Queues = map[string]river.QueueConfig{Queue: {MaxWorkers: max(1, c.Units)}}
		if c.Units <= 0 {
			cfg.Queues[Queue] = river.QueueConfig{MaxWorkers: 2}
		}
	}
	return river.NewClient(riverpgxv5.New(d.Pool), cfg)
}

// meta is what a unit's job carries in River's metadata: its run, so a
// run's jobs are listed by it.
func meta(runID string) []byte {
	b, _ := json.Marshal(map[string]string{"remessa_run": runID})
	return b
}

// Enqueue inserts the jobs of a run's units, in one transaction. A unit
// already enqueued (a run enqueued again) is not inserted twice.
func Enqueue(ctx context.Context, c *river.Client[pgx.Tx], units []UnitArgs) error {
	params := make([]river.InsertManyParams, len(units))
	for i, u := range units {
		opts := u.InsertOpts()
		opts.Metadata = meta(u.Run)
		params[i] = river.InsertManyParams{Args: u, InsertOpts: &opts}
	}
	for len(params) > 0 {
		n := min(len(params), 1000)
		if _, err := c.InsertMany(ctx, params[:n]); err != nil {
			return fmt.Errorf("fila: %w", err)
		}
		params = params[n:]
	}
	return nil
}

// Progress is how a run's units stand in River.
type Progress struct {
	Total, Completed, Running, Waiting, Failed int
	Errors                                     []string // the last error of each discarded unit
	Retrying                                   []string // the last error of each unit waiting to be tried again
}

// Done reports whether no unit will run again.
func (p Progress) Done() bool { return p.Running == 0 && p.Waiting == 0 }

// UnitProgress counts the units of run runID by the state of their
// latest job: a unit enqueued again after it gave up or was cancelled
// (remessa resume --db, the web's Retomar) counts as its new job does.
func UnitProgress(ctx context.Context, c *river.Client[pgx.Tx], runID string) (Progress, error) {
	var p Progress
	type unitJob struct {
		unit int
		job  *rivertype.JobRow
	}
	latest := map[int]*rivertype.JobRow{}
	params := river.NewJobListParams().Kinds(UnitArgs{}.Kind()).Metadata(string(meta(runID))).First(10000)
	for {
		res, err := c.JobList(ctx, params)
		if err != nil {
			return p, fmt.Errorf("fila: %w", err)
		}
		for _, j := range res.Jobs {
			var a UnitArgs
			json.Unmarshal(j.EncodedArgs, &a)
			if prev, ok := latest[a.Unit]; !ok || j.ID > prev.ID {
				latest[a.Unit] = j
			}
		}
		if len(res.Jobs) < 10000 || res.LastCursor == nil {
			break
		}
		params = params.After(res.LastCursor)
	}
	units := make([]unitJob, 0, len(latest))
	for u, j := range latest {
		units = append(units, unitJob{u, j})
	}
	slices.SortFunc(units, func(a, b unitJob) int { return a.unit - b.unit })
	for _, u := range units {
		j := u.job
		p.Total++
		switch j.State {
		case rivertype.JobStateCompleted:
			p.Completed++
		case rivertype.JobStateRunning:
			p.Running++
		case rivertype.JobStateDiscarded, rivertype.JobStateCancelled:
			p.Failed++
			if n := len(j.Errors); n > 0 {
				p.Errors = append(p.Errors, j.Errors[n-1].Error)
			}
		case rivertype.JobStateRetryable:
			p.Waiting++
			if n := len(j.Errors); n > 0 {
				p.Retrying = append(p.Retrying, fmt.Sprintf("unidade %d, tentativa %d: %s", u.unit, j.Attempt, j.Errors[n-1].Error))
			}
		default:
			p.Waiting++
		}
	}
	return p, nil
}

// Lock is a unit's advisory lock, held by a connection of its own for as
// long as the unit is worked: a worker that dies loses its connection and
// with it the lock.
type Lock struct {
	conn *pgxpool.Conn
	key  int64
	lost chan struct{}
	stop chan struct{}
	done chan struct{} // closed when watch has returned (it no longer uses conn)
}

// unitKey is the advisory lock key of a run's unit.
func unitKey(runID string, unit int) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "remessa:%s:%d", runID, unit)
	return int64(h.Sum64())
}

// LockUnit takes unit's advisory lock without waiting; nil, nil when
// another worker holds it.
func LockUnit(ctx context.Context, d *DB, runID string, unit int) (*Lock, error) {
	key := unitKey(runID, unit)
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, err
	}
	if !ok {
		conn.Release()
		return nil, nil
	}
	l := &Lock{conn: conn, key: key, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// watch checks the lock's connection every second; Lost is closed when it
// fails (the lock may then be another worker's: stop sending).
func (l *Lock) watch() {
	defer close(l.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := l.conn.Ping(ctx)
			cancel()
			if err != nil {
				close(l.lost)
				return
			}
		}
	}
}

// Lost is closed when the lock's connection failed.
func (l *Lock) Lost() <-chan struct{} { return l.lost }

// Release gives the lock back.
func (l *Lock) Release() {
	close(l.stop)
	<-l.done // a ping in flight ends first: a connection is not for two goroutines at once
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, l.key); err != nil {
		// the session's locks go with the connection
		l.conn.Hijack().Close(ctx)
		return
	}
	l.conn.Release()
}

// Run is a run in the runs index.
type Run struct {
	RunID, JobName, JobSHA256, InputSHA256, Kind, Service, Dir, Host string
	Units, Rows                                                      int
	StartedAt                                                        time.Time
	FinishedAt                                                       *time.Time
}

// AddRun records a run in the index.
func AddRun(ctx context.Context, d *DB, r Run) error {
	_, err := d.Pool.Exec(ctx, `INSERT INTO remessa_runs(run_id,job_name,job_sha256,input_sha256,kind,service,dir,host,units,rows_total,started_at)
		VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`, r.RunID, r.JobName, r.JobSHA256, r.InputSHA256, r.Kind, r.Service, r.Dir, r.Host, r.Units, r.Rows, r.StartedAt)
	if err != nil {
		return fmt.Errorf("índice das execuções: %w", err)
	}
	return nil
}

// FinishRun records that a run's units are all done.
func FinishRun(ctx context.Context, d *DB, runID string, at time.Time) error {
	_, err := d.Pool.Exec(ctx, `UPDATE remessa_runs SET finished_at=$2 WHERE run_id=$1 AND finished_at IS NULL`, runID, at)
	return err
}

// Earlier is the latest run of the same job on the same input and service, if any.
func Earlier(ctx context.Context, d *DB, jobSHA, inputSHA, service string) (*Run, error) {
	rs, err := listRuns(ctx, d, `WHERE job_sha256=$1 AND input_sha256=$2 AND service=$3 ORDER BY started_at DESC LIMIT 1`, jobSHA, inputSHA, service)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}

// GetRun is run runID from the index.
func GetRun(ctx context.Context, d *DB, runID string) (*Run, error) {
	rs, err := listRuns(ctx, d, `WHERE run_id=$1`, runID)
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	return &rs[0], nil
}

// Runs lists the index's runs, the latest first.
func Runs(ctx context.Context, d *DB, limit int) ([]Run, error) {
	return listRuns(ctx, d, `ORDER BY started_at DESC LIMIT $1`, limit)
}

func listRuns(ctx context.Context, d *DB, where string, args ...any) ([]Run, error) {
	rows, err := d.Pool.Query(ctx, `SELECT run_id,job_name,job_sha256,input_sha256,kind,service,dir,host,units,rows_total,started_at,finished_at FROM remessa_runs `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("índice das execuções: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		if err := rows.Scan(&r.RunID, &r.JobName, &r.JobSHA256, &r.InputSHA256, &r.Kind, &r.Service, &r.Dir, &r.Host, &r.Units, &r.Rows, &r.StartedAt, &r.FinishedAt); err != nil {
			return nil, fmt.Errorf("índice das execuções: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// AddRunRows records the 64-bit hashes of a run's row identities (key
// and first due date), for the repeated-rows warning of later runs.
func AddRunRows(ctx context.Context, d *DB, runID string, hashes []int64) error {
	rows := make([][]any, len(hashes))
	for i, h := range hashes {
		rows[i] = []any{h, runID}
	}
	if _, err := d.Pool.CopyFrom(ctx, pgx.Identifier{"remessa_run_rows"}, []string{"h", "run_id"}, pgx.CopyFromRows(rows)); err != nil {
		return fmt.Errorf("índice das execuções: %w", err)
	}
	return nil
}

// Repeated counts, for each earlier run on service (other than runID),
// how many of hashes it holds: rows that repeat its key and due date.
func Repeated(ctx context.Context, d *DB, runID, service string, hashes []int64) (map[string]int, error) {
	out := map[string]int{}
	for len(hashes) > 0 {
		n := min(len(hashes), 10000)
		rows, err := d.Pool.Query(ctx, `SELECT r.run_id, count(*) FROM remessa_run_rows x JOIN remessa_runs r ON r.run_id = x.run_id
			WHERE x.h = ANY($1) AND r.run_id <> $2 AND r.service = $3 GROUP BY r.run_id`, hashes[:n], runID, service)
		if err != nil {
			return nil, fmt.Errorf("índice das execuções: %w", err)
		}
		for rows.Next() {
			var id string
			var c int
			if err := rows.Scan(&id, &c); err != nil {
				rows.Close()
				return nil, fmt.Errorf("índice das execuções: %w", err)
			}
			out[id] += c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("índice das execuções: %w", err)
		}
		hashes = hashes[n:]
	}
	return out, nil
}

// RescueEvery is how often each worker looks for units whose worker died
// (RescueDead).
const RescueEvery = 2 * time.Second

// RescueDead gives back to the queue the units whose worker died: a unit
// job running for longer than rescueAfter (its lease and a second, when
// River's own rescuer would take it) whose lock no one holds (a live
// worker holds it from the unit's start to its end; a dead one's went
// with its connection). River's rescuer does the same for any job stuck
// that long, but only every 30 s, on a timer River does not let a client
// shorten: each worker calls RescueDead every RescueEvery, so a dead
// worker's unit goes to another soon after its lease. A unit is put back
// as River's rescuer puts it (retryable at the retry policy's time;
// discarded after its last attempt; cancelled when a cancel was asked),
// only if it is still running since before the horizon. It returns how
// many units it gave back.
func RescueDead(ctx context.Context, d *DB, rescueAfter time.Duration) (int, error) {
	exec := riverpgxv5.New(d.Pool).GetExecutor()
	horizon := time.Now().Add(-rescueAfter)
	stuck, err := exec.JobGetStuck(ctx, &riverdriver.JobGetStuckParams{Max: 1000, StuckHorizon: horizon})
	if err != nil {
		return 0, fmt.Errorf("fila: %w", err)
	}
	p := riverdriver.JobRescueManyParams{StuckHorizon: horizon}
	now := time.Now().UTC()
	for _, job := range stuck {
		var a UnitArgs
		if job.Kind != a.Kind() || job.Queue != Queue || json.Unmarshal(job.EncodedArgs, &a) != nil {
			continue
		}
		free, err := lockFree(ctx, d, unitKey(a.Run, a.Unit))
		if err != nil {
			return 0, err
		}
		if !free {
			continue // its worker lives: the unit goes on past its lease
		}
		e, _ := json.Marshal(rivertype.AttemptError{At: now, Attempt: max(job.Attempt, 0),
			Error: "unidade resgatada: o worker que a tinha morreu (sua trava estava livre após o prazo da unidade)"})
		var m struct {
			CancelAttemptedAt time.Time `json:"cancel_attempted_at"`
		}
		json.Unmarshal(job.Metadata, &m)
		state, fin, at := rivertype.JobStateRetryable, (*time.Time)(nil), retryPolicy{}.NextRetry(job)
		switch {
		case !m.CancelAttemptedAt.IsZero():
			state, fin, at = rivertype.JobStateCancelled, &now, job.ScheduledAt
		case job.Attempt >= job.MaxAttempts:
			state, fin, at = rivertype.JobStateDiscarded, &now, job.ScheduledAt
		}
		p.ID, p.Error, p.FinalizedAt = append(p.ID, job.ID), append(p.Error, e), append(p.FinalizedAt, fin)
		p.ScheduledAt, p.State = append(p.ScheduledAt, at), append(p.State, string(state))
	}
	if len(p.ID) == 0 {
		return 0, nil
	}
	if _, err := exec.JobRescueMany(ctx, &p); err != nil {
		return 0, fmt.Errorf("fila: %w", err)
	}
	return len(p.ID), nil
}

// lockFree says whether no one holds the advisory lock key (taking it
// and giving it back at once).
func lockFree(ctx context.Context, d *DB, key int64) (bool, error) {
	conn, err := d.Pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
		conn.Release()
		return false, err
	}
	if ok {
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key); err != nil {
			conn.Hijack().Close(ctx) // the session's locks go with the connection
			return true, nil
		}
	}
	conn.Release()
	return ok, nil
}
