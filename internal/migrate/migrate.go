// Package migrate moves each database remessa writes forward by ordered,
// numbered steps, and refuses a database written by a newer remessa.
//
// Every database (web.db, journal.db and a run's Postgres schema,
// situacao.db, listen.db, runs.db and remessa_runs, sandbox.db and the
// sandbox's Postgres store) declares a [Schema]: its name for messages,
// the table that records its version, and its steps in order (Steps[0]
// is version 1). [Up] is called by the package that owns the database
// right after opening it and before anything else touches it:
//
//   - a database at the newest version costs two small queries (does the
//     version table exist, what is its highest version), without goose;
//   - an older one is moved forward step by step, each step and its
//     version row in one transaction (goose, github.com/pressly/goose/v3,
//     keeps the version table; on PostgreSQL a session advisory lock keeps
//     two processes from migrating the same schema at once);
//   - a file written before versions existed has no version table: its
//     step 1 is the old binary's own CREATE TABLE IF NOT EXISTS schema,
//     which leaves the tables it finds and their rows as they are, so it
//     is recorded at version 1 and moves on from there;
//   - a database at a version beyond the binary's last step is refused
//     with a [*NewerError] naming both versions, before anything is
//     written to it.
//
// Step 1 of every database is frozen: it is what the binary of commit
// 8e335f2 (the last without versions) created, and must stay so. A new
// table or column is a new step at the end of the database's list.
//
// River's tables (in web.db, and the cluster's PostgreSQL) are not steps
// here: River's own migrator (rivermigrate) keeps them, with its own
// version table (river_migration), run after the database's own steps.
package migrate

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Dialect is the kind of database a schema lives in.
type Dialect string

// The dialects remessa writes.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Step is one change of a schema: SQL (one or more statements) or Tx,
// run in the transaction that also records the version, so a step is
// applied whole or not at all. (What cannot run in a transaction, a
// VACUUM, is done by the owner after Up returns.)
type Step struct {
	Name string // what the step does, for messages
	SQL  string
	Tx   func(ctx context.Context, tx *sql.Tx) error
}

// Schema is one database's ordered steps.
type Schema struct {
	// Name names the database in messages ("web.db", "remessa_runs").
	Name string
	// Table is the version table, unique among the schemas that may
	// share one PostgreSQL schema (the runs index and the sandbox's
	// store may both be in public).
	Table   string
	Dialect Dialect
	// Steps are the versions in order: Steps[0] is version 1.
	Steps []Step
}

// Latest is the version of the schema's last step.
func (s *Schema) Latest() int64 { return int64(len(s.Steps)) }

// NewerError is a database whose version is beyond the last step this
// binary knows: it was written by a newer remessa.
type NewerError struct {
	Name  string // the database
	Have  int64  // its version
	Known int64  // the binary's last step
}

func (e *NewerError) Error() string {
	return fmt.Sprintf("%s está na versão %d do esquema e este remessa conhece só até a versão %d: "+
		"ele foi gravado por um remessa mais novo; use essa versão (nada foi escrito no banco)", e.Name, e.Have, e.Known)
}

// ErrNewer matches every *NewerError with errors.Is.
var ErrNewer = errors.New("banco gravado por um remessa mais novo")

// Is makes errors.Is(err, ErrNewer) true.
func (e *NewerError) Is(target error) bool { return target == ErrNewer }

// Up brings db to the schema's last step (see the package doc). It
// returns a *NewerError, and writes nothing, when db is beyond it.
func Up(ctx context.Context, db *sql.DB, s *Schema) error {
	// The common case first, without goose: two small queries.
	have, known, err := Version(ctx, db, s)
	if err != nil {
		return fmt.Errorf("%s: ler a versão do esquema: %w", s.Name, err)
	}
	if done, err := s.settled(have, known); done {
		return err
	}
	p, err := s.provider(db)
	if err != nil {
		return err
	}
	// again through goose (it makes the version table when there is none;
	// another process may have moved the database meanwhile)
	if have, known, err = p.GetVersions(ctx); err != nil {
		return fmt.Errorf("%s: ler a versão do esquema: %w", s.Name, err)
	}
	if done, err := s.settled(have, known); done {
		return err
	}
	for try := 0; s.Dialect != Postgres && try < 3; try++ {
		// SQLite has no lock for goose to take: another connection (a
		// second open of the same file in this process, or another
		// process) may have applied the steps since the versions were
		// read. Each step sees that inside its own transaction (a BEGIN
		// IMMEDIATE holds the file's write lock) and stops; the versions
		// are read again.
		_, err := p.Up(ctx)
		if !errors.Is(err, errApplied) {
			return s.upError(err, have, known)
		}
		if have, known, err = p.GetVersions(ctx); err != nil {
			return fmt.Errorf("%s: ler a versão do esquema: %w", s.Name, err)
		}
		if done, err := s.settled(have, known); done {
			return err
		}
	}
	_, err = p.Up(ctx)
	return s.upError(err, have, known)
}

// settled says whether a database at version have needs no step of a
// schema whose last is known: at it (nil), or beyond it (*NewerError).
func (s *Schema) settled(have, known int64) (bool, error) {
	switch {
	case have > known:
		return true, &NewerError{Name: s.Name, Have: have, Known: known}
	case have == known:
		return true, nil
	}
	return false, nil
}

// errApplied is what a step returns when the version table already has it:
// another connection applied it after this one read the versions.
var errApplied = errors.New("migrate: step applied by another connection")

// upError words goose's error of an Up from version have to known.
func (s *Schema) upError(err error, have, known int64) error {
	if err != nil {
		var pe *goose.PartialError
		if errors.As(err, &pe) && pe.Failed != nil && pe.Failed.Source != nil {
			v := pe.Failed.Source.Version
			return fmt.Errorf("%s: passo %d da migração (%s), da versão %d para a %d: %w",
				s.Name, v, s.Steps[v-1].Name, have, known, pe.Err)
		}
		return fmt.Errorf("%s: migrar da versão %d para a %d: %w", s.Name, have, known, err)
	}
	return nil
}

// applied says whether step v is in the version table, read inside tx.
func (s *Schema) applied(ctx context.Context, tx *sql.Tx, v int64) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+s.Table+` WHERE version_id = ? AND is_applied`, v).Scan(&n)
	return n > 0, err
}

// Version returns db's version (0 when it has no version table yet) and
// the schema's last step, without writing anything.
func Version(ctx context.Context, db *sql.DB, s *Schema) (have, known int64, err error) {
	var exists bool
	switch s.Dialect {
	case Postgres:
		err = db.QueryRowContext(ctx, `SELECT to_regclass($1) IS NOT NULL`, s.Table).Scan(&exists)
	default:
		err = db.QueryRowContext(ctx, `SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?`, s.Table).Scan(&exists)
	}
	if err != nil || !exists {
		return 0, s.Latest(), err
	}
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version_id) FROM `+s.Table).Scan(&v); err != nil {
		return 0, s.Latest(), fmt.Errorf("%s: ler a versão do esquema: %w", s.Name, err)
	}
	return v.Int64, s.Latest(), nil
}

// provider is the goose provider of s on db: its steps as Go
// migrations, no global registry, no log.
func (s *Schema) provider(db *sql.DB) (*goose.Provider, error) {
	if len(s.Steps) == 0 || s.Table == "" {
		return nil, fmt.Errorf("migrate: schema %q without steps or version table", s.Name)
	}
	ms := make([]*goose.Migration, len(s.Steps))
	for i, st := range s.Steps {
		var up *goose.GoFunc
		switch {
		case st.SQL != "":
			q := st.SQL
			up = &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
				_, err := tx.ExecContext(ctx, q)
				return err
			}}
		case st.Tx != nil:
			up = &goose.GoFunc{RunTx: st.Tx}
		default:
			return nil, fmt.Errorf("migrate: %s step %d (%s) does nothing", s.Name, i+1, st.Name)
		}
		if s.Dialect != Postgres { // Postgres: goose's session lock
			run, v := up.RunTx, int64(i+1)
			up = &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
				if done, err := s.applied(ctx, tx, v); err != nil || done {
					return cmp.Or(err, errApplied)
				}
				return run(ctx, tx)
			}}
		}
		ms[i] = goose.NewGoMigration(int64(i+1), up, nil)
	}
	dialect := goose.DialectSQLite3
	opts := []goose.ProviderOption{
		goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(ms...),
		goose.WithLogger(goose.NopLogger()),
		goose.WithTableName(s.Table),
	}
	if s.Dialect == Postgres {
		dialect = goose.DialectPostgres
		// Instances starting together (sandboxes, workers) take turns;
		// only Up takes the lock, the version check does not.
		h := fnv.New64a()
		h.Write([]byte("remessa migrate " + s.Table))
		l, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 600))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	return goose.NewProvider(dialect, db, nil, opts...)
}
