// Package sqlitedb opens the small durable SQLite files of a run folder
// (the ledger situacao.db, the notification inbox listen.db): WAL, an
// fsync on every commit, one connection, immediate write transactions.
package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"remessa/internal/migrate"
)

// Open opens (creating) the database at path and brings it to the last
// step of schema (internal/migrate: a file of a newer remessa is refused);
// an error names the path.
func Open(path string, schema *migrate.Schema) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := migrate.Up(context.Background(), db, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return db, nil
}
