package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"remessa/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// steps is a schema of two steps as a package would write it: step 1 the
// old CREATE TABLE IF NOT EXISTS schema, step 2 a column and a table.
func steps(d Dialect) *Schema {
	return &Schema{Name: "t.db", Table: "t_schema_version", Dialect: d, Steps: []Step{
		{Name: "tabelas iniciais", SQL: `CREATE TABLE IF NOT EXISTS people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`},
		{Name: "apelidos", Tx: func(ctx context.Context, tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `ALTER TABLE people ADD COLUMN nick TEXT NOT NULL DEFAULT ''`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`)
			return err
		}},
	}}
}

func openSQLite(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func version(t *testing.T, db *sql.DB, s *Schema) int64 {
	t.Helper()
	have, known, err := Version(context.Background(), db, s)
	if err != nil {
		t.Fatal(err)
	}
	if known != s.Latest() {
		t.Fatalf("Version known %d, want %d", known, s.Latest())
	}
	return have
}

// TestUpSQLite checks the three cases on SQLite files: a new file gets
// every step, a file of the old binary (tables, no version table) keeps
// its rows and moves on, and a file of a newer binary is refused naming
// both versions with nothing written.
func TestUpSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	fresh := openSQLite(t, filepath.Join(dir, "new.db"))
	if v := version(t, fresh, steps(SQLite)); v != 0 {
		t.Fatalf("a new file is at version %d, want 0", v)
	}
	if err := Up(ctx, fresh, steps(SQLite)); err != nil {
		t.Fatal(err)
	}
	if v := version(t, fresh, steps(SQLite)); v != 2 {
		t.Fatalf("after Up a new file is at version %d, want 2", v)
	}
	if _, err := fresh.Exec(`INSERT INTO notes(body) VALUES ('x')`); err != nil {
		t.Fatalf("step 2's table: %v", err)
	}
	// Again: nothing to do, nothing fails.
	if err := Up(ctx, fresh, steps(SQLite)); err != nil {
		t.Fatal(err)
	}

	old := openSQLite(t, filepath.Join(dir, "old.db"))
	if _, err := old.Exec(`CREATE TABLE IF NOT EXISTS people (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO people(name) VALUES ('Ana'), ('Bia')`); err != nil {
		t.Fatal(err)
	}
	if err := Up(ctx, old, steps(SQLite)); err != nil {
		t.Fatal(err)
	}
	if v := version(t, old, steps(SQLite)); v != 2 {
		t.Fatalf("the old file is at version %d, want 2", v)
	}
	var names, nicks string
	if err := old.QueryRow(`SELECT group_concat(name, ','), group_concat(nick, ',') FROM (SELECT * FROM people ORDER BY id)`).Scan(&names, &nicks); err != nil {
		t.Fatal(err)
	}
	if names != "Ana,Bia" || nicks != "," {
		t.Fatalf("the old file's rows after Up: names %q nicks %q, want Ana,Bia and two empty nicks", names, nicks)
	}

	// A binary that knows only step 1 opens the file at version 2.
	one := steps(SQLite)
	one.Steps = one.Steps[:1]
	err := Up(ctx, fresh, one)
	var ne *NewerError
	if !errors.As(err, &ne) || ne.Have != 2 || ne.Known != 1 || !errors.Is(err, ErrNewer) {
		t.Fatalf("an older binary on a newer file: %v, want a NewerError with 2 and 1", err)
	}
	for _, want := range []string{"t.db", "versão 2", "versão 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
}

// TestUpFailingStep checks that a step that fails leaves the database at
// the version before it, with nothing of the step, and says which step.
func TestUpFailingStep(t *testing.T) {
	ctx := context.Background()
	db := openSQLite(t, filepath.Join(t.TempDir(), "f.db"))
	s := steps(SQLite)
	s.Steps = append(s.Steps, Step{Name: "quebra", Tx: func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE half (n INTEGER)`); err != nil {
			return err
		}
		return fmt.Errorf("falhou de propósito")
	}})
	err := Up(ctx, db, s)
	if err == nil || !strings.Contains(err.Error(), "passo 3") || !strings.Contains(err.Error(), "quebra") || !strings.Contains(err.Error(), "falhou de propósito") {
		t.Fatalf("a failing step gave %v, want one naming step 3 (quebra) and its cause", err)
	}
	if v := version(t, db, s); v != 2 {
		t.Fatalf("after a failing step 3 the version is %d, want 2", v)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'half'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the failed step's table is there (%d, %v)", n, err)
	}
}

// TestUpPostgres checks the same on PostgreSQL, two schemas side by side
// in one database (each its version table), and processes starting
// together (the session lock: every one returns, the steps ran once).
func TestUpPostgres(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("pgx", pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	a := steps(Postgres)
	a.Steps[0].SQL = `CREATE TABLE IF NOT EXISTS people (id bigint PRIMARY KEY, name text NOT NULL)`
	a.Steps[1].Tx = func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `ALTER TABLE people ADD COLUMN nick text NOT NULL DEFAULT ''; CREATE TABLE notes (id bigint PRIMARY KEY)`)
		return err
	}
	b := &Schema{Name: "other", Table: "other_schema_version", Dialect: Postgres, Steps: []Step{{Name: "x", SQL: `CREATE TABLE IF NOT EXISTS other (n bigint)`}}}
	if _, err := db.Exec(`CREATE TABLE people (id bigint PRIMARY KEY, name text NOT NULL); INSERT INTO people VALUES (1, 'Ana')`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Up(ctx, db, a)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Up %d: %v", i, err)
		}
	}
	if err := Up(ctx, db, b); err != nil {
		t.Fatal(err)
	}
	if v := version(t, db, a); v != 2 {
		t.Fatalf("version %d, want 2", v)
	}
	if v := version(t, db, b); v != 1 {
		t.Fatalf("the second schema's version %d, want 1", v)
	}
	var name string
	var rows int
	if err := db.QueryRow(`SELECT name FROM people WHERE id = 1`).Scan(&name); err != nil || name != "Ana" {
		t.Fatalf("the old row: %q %v", name, err)
	}
	if err := db.QueryRow(`SELECT count(*) FROM t_schema_version WHERE version_id = 2`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("step 2 recorded %d times (%v), want once", rows, err)
	}
	one := steps(Postgres)
	one.Steps = one.Steps[:1]
	if err := Up(ctx, db, one); !errors.Is(err, ErrNewer) {
		t.Fatalf("an older binary on a newer schema: %v", err)
	}
}

// TestUpTwoOpensAtOnce: two connections open a file of version 1 at the
// same moment; both read version 1 before either applies step 2 (the
// first holds its step's transaction open a while). The second must not
// run step 2 again: before, it failed with "duplicate column name: nick"
// (the desk's situacao.db, opened twice at once after an upgrade).
func TestUpTwoOpensAtOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	one := steps(SQLite)
	one.Steps = one.Steps[:1]
	if err := Up(context.Background(), openSQLite(t, path), one); err != nil {
		t.Fatal(err)
	}
	slow := steps(SQLite)
	inner := slow.Steps[1].Tx
	slow.Steps[1].Tx = func(ctx context.Context, tx *sql.Tx) error {
		if err := inner(ctx, tx); err != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond) // the other open reads version 1 meanwhile
		return nil
	}
	open := func() *sql.DB {
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	a, b := open(), open()
	for _, db := range []*sql.DB{a, b} {
		if v := version(t, db, slow); v != 1 {
			t.Fatalf("version %d before, want 1", v)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, db := range []*sql.DB{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 1 {
				time.Sleep(50 * time.Millisecond) // a begins step 2 first
			}
			errs[i] = Up(context.Background(), db, slow)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("open %d: %v", i+1, err)
		}
	}
	if v := version(t, a, slow); v != 2 {
		t.Errorf("version %d after, want 2", v)
	}
	var rows int
	a.QueryRow(`SELECT count(*) FROM t_schema_version WHERE version_id = 2`).Scan(&rows)
	if rows != 1 {
		t.Errorf("step 2 recorded %d times, want once", rows)
	}
}
