package migrate_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"remessa/internal/migrate"
	"remessa/pipeline/journal"
	"remessa/pipeline/listen"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/web"
)

// BenchmarkOpenCheck measures what the version check adds to opening each
// database at its last step: Up on a database already there (the case of
// every open but the first), beside the step-1 statements run again (what
// opening cost before versions: CREATE TABLE IF NOT EXISTS on every open).
// go test -run '^$' -bench BenchmarkOpenCheck -benchtime 2000x ./internal/migrate/
func BenchmarkOpenCheck(b *testing.B) {
	ctx := context.Background()
	for _, s := range []*migrate.Schema{&web.Schema, &journal.Schema, &status.LedgerSchema, &listen.Schema, &run.IndexSchema} {
		path := filepath.Join(b.TempDir(), "x.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		if err := migrate.Up(ctx, db, s); err != nil {
			b.Fatal(err)
		}
		b.Run(s.Name+"/check", func(b *testing.B) {
			for b.Loop() {
				if err := migrate.Up(ctx, db, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		if s.Steps[0].SQL != "" {
			b.Run(s.Name+"/create-if-not-exists", func(b *testing.B) {
				for b.Loop() {
					if _, err := db.Exec(s.Steps[0].SQL); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		db.Close()
	}
}
