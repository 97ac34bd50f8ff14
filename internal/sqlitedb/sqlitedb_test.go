package sqlitedb

import (
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/migrate"
)

func schema(steps ...string) *migrate.Schema {
	s := &migrate.Schema{Name: "x.db", Table: "x_schema_version", Dialect: migrate.SQLite}
	for _, q := range steps {
		s.Steps = append(s.Steps, migrate.Step{Name: q, SQL: q})
	}
	return s
}

// TestOpenRunsSchemaAndKeeps checks that the schema is created, that what
// was committed is there after reopening, and that a bad statement fails
// naming the file.
func TestOpenRunsSchemaAndKeeps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := Open(path, schema(`CREATE TABLE IF NOT EXISTS t (n INTEGER)`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = Open(path, schema(`CREATE TABLE IF NOT EXISTS t (n INTEGER)`))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT n FROM t`).Scan(&n); err != nil || n != 7 {
		t.Fatalf("after reopening: n=%d err=%v", n, err)
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	db.Close()
	if _, err := Open(path, schema(`CREATE TABLE IF NOT EXISTS t (n INTEGER)`, `CREATE TABLE oops (`)); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a bad schema gave %v, want an error naming %s", err, path)
	}
}
