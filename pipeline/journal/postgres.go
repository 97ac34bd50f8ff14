package journal

// A run's journal in PostgreSQL (remessa run --db postgres://…, docs/postgres.md).
//
// Every run has its own schema, remessa_run_<run id>, holding the same
// tables as journal.db; the journal's connections have it as their
// search_path, so the journal's SQL (written for SQLite) is the same for
// both, through a small dialect seam: a database/sql connector wrapping
// pgx's that numbers the placeholders ($1 for ?), spells ifnull coalesce
// and the BLOB of a CAST bytea,
// gives an INSERT into calls its seq back (RETURNING: Postgres has no
// LastInsertId) and passes text arguments as bytes (the value columns are
// bytea: compressed values are binary).
//
// Several processes write one Postgres journal at once (each on its own
// rows: the cluster gives each unit of work to one worker at a time under
// an advisory lock). What they share is safe under Postgres's row locks:
// the calls table (a sequence), the meta row, the split configurations
// (idempotent). The one thing a writer would otherwise add to shared state
// — a new compression dictionary for the first answer it stores — is
// settled before any worker starts: ShareWriters fills the dictionaries,
// so no writer ever adds one.

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"remessa/internal/migrate"
)

// SchemaPostgres is a run's journal schema in Postgres: journal.db's
// steps with Postgres types; its version table is in the run's schema.
var SchemaPostgres = migrate.Schema{Name: "journal", Table: Schema.Table, Dialect: migrate.Postgres, Steps: []migrate.Step{
	{Name: Schema.Steps[0].Name, SQL: pgSchemaV1},
}}

// pgSchemaV1 is the journal's tables in Postgres as 8e335f2 made them.
const pgSchemaV1 = `
CREATE TABLE IF NOT EXISTS meta(k text PRIMARY KEY, v bytea NOT NULL);
CREATE TABLE IF NOT EXISTS rows(
	idx integer PRIMARY KEY,
	key text NOT NULL,
	state text NOT NULL,
	info bytea NOT NULL,
	req bytea,
	res bytea,
	attempts integer NOT NULL DEFAULT 0,
	updated bigint
);
CREATE INDEX IF NOT EXISTS rows_state ON rows(state, idx);
CREATE TABLE IF NOT EXISTS batches(
	num integer PRIMARY KEY,
	id text NOT NULL,
	first integer NOT NULL,
	end_ integer NOT NULL,
	state text NOT NULL,
	updated text
);
CREATE TABLE IF NOT EXISTS splits(key text PRIMARY KEY, id text NOT NULL, body text NOT NULL, state text NOT NULL);
CREATE TABLE IF NOT EXISTS calls(
	seq bigserial PRIMARY KEY,
	route text NOT NULL,
	target text NOT NULL,
	day text NOT NULL,
	state text NOT NULL,
	status integer NOT NULL DEFAULT 0,
	error text,
	at text NOT NULL,
	done_at text
);
CREATE INDEX IF NOT EXISTS calls_route_day ON calls(route, day);
CREATE TABLE IF NOT EXISTS chunks(id bigint PRIMARY KEY, data bytea NOT NULL);
`

var runIDChars = regexp.MustCompile(`^[0-9A-Za-z_-]{1,40}$`)

// PostgresSchema is the schema holding run runID's journal.
func PostgresSchema(runID string) (string, error) {
	if !runIDChars.MatchString(runID) {
		return "", fmt.Errorf("journal: id de execução inválido para o Postgres: %q", runID)
	}
	return "remessa_run_" + strings.ToLower(strings.ReplaceAll(runID, "-", "_")), nil
}

// CreatePostgres makes the journal of run runID in the database at dsn: a
// new schema (it must not exist yet).
func CreatePostgres(ctx context.Context, dsn, runID string) (*Journal, error) {
	return openPostgres(ctx, dsn, runID, true)
}

// OpenPostgres opens the journal of run runID in the database at dsn.
func OpenPostgres(ctx context.Context, dsn, runID string) (*Journal, error) {
	return openPostgres(ctx, dsn, runID, false)
}

func openPostgres(ctx context.Context, dsn, runID string, create bool) (*Journal, error) {
	schema, err := PostgresSchema(runID)
	if err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("journal: endereço do Postgres: %w", err)
	}
	cfg.RuntimeParams["search_path"] = schema
	cfg.RuntimeParams["application_name"] = "remessa journal"
	db := sql.OpenDB(pgConnector{inner: stdlib.GetConnector(*cfg)})
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	what := "Postgres " + schema
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM pg_namespace WHERE nspname = ?)`, schema).Scan(&exists); err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: %s: %w", what, err)
	}
	switch {
	case create && exists:
		db.Close()
		return nil, fmt.Errorf("journal: %s já existe", what)
	case !create && !exists:
		db.Close()
		return nil, fmt.Errorf("journal: %s: %w", what, ErrNoRun)
	case create:
		tx, err := db.BeginTx(ctx, nil)
		if err == nil {
			if _, err = tx.ExecContext(ctx, `CREATE SCHEMA `+schema); err == nil {
				err = tx.Commit()
			} else {
				tx.Rollback()
			}
		}
		if err != nil {
			db.Close()
			return nil, fmt.Errorf("journal: %s: %w", what, err)
		}
	}
	// A schema whose creation stopped after CREATE SCHEMA has no tables
	// yet: Up makes them as for a new one.
	ps := SchemaPostgres
	ps.Name = what
	if err := migrate.Up(ctx, db, &ps); err != nil {
		db.Close()
		return nil, fmt.Errorf("journal: %w", err)
	}
	return newJournal(db, what)
}

// ErrNoRun is a run the database has no journal of.
var ErrNoRun = errors.New("a execução não existe neste banco")

// DropPostgres removes run runID's journal from the database (tests,
// and a run whose seeding failed).
func DropPostgres(ctx context.Context, db interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, runID string) error {
	schema, err := PostgresSchema(runID)
	if err != nil {
		return err
	}
	_, err = db.ExecContext(ctx, `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
	return err
}

// ShareWriters prepares a seeded journal to be written by several
// processes at once: it fills its compression dictionaries up to the
// most a journal keeps (copies of the first), so that no writer adds one
// (two writers adding the same dictionary number would conflict, and one
// that did not know of the other's could not read its values). Results
// then compress against the first dictionary and their row.
func (j *Journal) ShareWriters(ctx context.Context) error {
	return j.Tx(ctx, func(tx *Tx) error {
		c := tx.codec()
		if c == nil {
			return nil // no rows, or a journal written before: values stay as they are
		}
		for len(c.dicts) < maxDicts {
			var err error
			if c, err = tx.addDict(c, c.dicts[0].b); err != nil {
				return wrap("dicionário", err)
			}
		}
		return nil
	})
}

// ---- the dialect seam: SQLite's SQL on pgx ----

type pgConnector struct{ inner driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := cn.(*stdlib.Conn)
	if !ok {
		cn.Close()
		return nil, fmt.Errorf("journal: conexão inesperada do pgx: %T", cn)
	}
	return &pgConn{c: pc}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.inner.Driver() }

// pgQuery is a query as Postgres reads it.
type pgQuery struct {
	sql       string
	returning bool // an INSERT INTO calls: its seq comes back as LastInsertId
}

var pgQueries sync.Map // SQLite text -> pgQuery

// rebind turns the journal's SQLite SQL into Postgres's.
func rebind(q string) pgQuery {
	if v, ok := pgQueries.Load(q); ok {
		return v.(pgQuery)
	}
	var b strings.Builder
	n, quoted := 0, false
	for i := 0; i < len(q); i++ {
		ch := q[i]
		switch {
		case ch == '\'':
			quoted = !quoted
			b.WriteByte(ch)
		case ch == '?' && !quoted:
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(ch)
		}
	}
	out := pgQuery{sql: strings.ReplaceAll(strings.ReplaceAll(b.String(), "ifnull(", "coalesce("), " AS BLOB)", " AS bytea)")}
	if strings.HasPrefix(strings.TrimSpace(out.sql), "INSERT INTO calls(") {
		out.sql += " RETURNING seq"
		out.returning = true
	}
	pgQueries.Store(q, out)
	return out
}

// pgArgs passes text as bytes: into a text column as it is, into a
// bytea column (meta's values, which hold dictionaries too) unescaped.
func pgArgs(args []driver.NamedValue) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		if s, ok := a.Value.(string); ok {
			a.Value = []byte(s)
		}
		out[i] = a
	}
	return out
}

type pgConn struct{ c *stdlib.Conn }

func (c *pgConn) Prepare(q string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), q)
}

func (c *pgConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	pq := rebind(q)
	st, err := c.c.PrepareContext(ctx, pq.sql)
	if err != nil {
		return nil, err
	}
	return &pgStmt{inner: st, conn: c, q: pq}, nil
}

func (c *pgConn) Close() error { return c.c.Close() }
func (c *pgConn) Begin() (driver.Tx, error) {
	return c.c.BeginTx(context.Background(), driver.TxOptions{})
}
func (c *pgConn) BeginTx(ctx context.Context, o driver.TxOptions) (driver.Tx, error) {
	return c.c.BeginTx(ctx, o)
}
func (c *pgConn) Ping(ctx context.Context) error             { return c.c.Ping(ctx) }
func (c *pgConn) ResetSession(ctx context.Context) error     { return c.c.ResetSession(ctx) }
func (c *pgConn) CheckNamedValue(v *driver.NamedValue) error { return c.c.CheckNamedValue(v) }
func (c *pgConn) IsValid() bool                              { return !c.c.Conn().IsClosed() }
func (c *pgConn) exec(ctx context.Context, pq pgQuery, args []driver.NamedValue) (driver.Result, error) {
	if !pq.returning {
		return c.c.ExecContext(ctx, pq.sql, pgArgs(args))
	}
	rs, err := c.c.QueryContext(ctx, pq.sql, pgArgs(args))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	v := make([]driver.Value, 1)
	if err := rs.Next(v); err != nil {
		return nil, fmt.Errorf("INSERT sem RETURNING: %w", err)
	}
	id, ok := v[0].(int64)
	if !ok {
		return nil, fmt.Errorf("RETURNING seq: %T", v[0])
	}
	return pgResult(id), nil
}

func (c *pgConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.exec(ctx, rebind(q), args)
}

func (c *pgConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.c.QueryContext(ctx, rebind(q).sql, pgArgs(args))
}

type pgStmt struct {
	inner driver.Stmt
	conn  *pgConn
	q     pgQuery
}

func (s *pgStmt) Close() error  { return s.inner.Close() }
func (s *pgStmt) NumInput() int { return s.inner.NumInput() }
func (s *pgStmt) Exec([]driver.Value) (driver.Result, error) {
	return nil, errors.New("journal: Stmt.Exec sem contexto")
}
func (s *pgStmt) Query([]driver.Value) (driver.Rows, error) {
	return nil, errors.New("journal: Stmt.Query sem contexto")
}
func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.conn.exec(ctx, s.q, args)
}
func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.conn.c.QueryContext(ctx, s.q.sql, pgArgs(args))
}

// pgResult is an INSERT's result with the seq it made.
type pgResult int64

func (r pgResult) LastInsertId() (int64, error) { return int64(r), nil }
func (r pgResult) RowsAffected() (int64, error) { return 1, nil }
