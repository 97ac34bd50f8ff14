package web

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"remessa/internal/migrate"
)

// TestNewerWebDBRefused checks that a web.db written by a newer remessa
// (a version beyond the last step this binary knows) stops the server
// with a message naming both versions, and that nothing is written to it.
func TestNewerWebDBRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv, err := New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, AdminPassword: testAdminPassword})
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	path := filepath.Join(dir, DBFile)
	db, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	next := Schema.Latest() + 1
	if _, err := db.Exec(`INSERT INTO `+Schema.Table+`(version_id, is_applied) VALUES (?, 1)`, next); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM audit) + (SELECT count(*) FROM sessions) + (SELECT count(*) FROM users)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	_, err = New(context.Background(), Config{Addr: "127.0.0.1:0", DataDir: dir, AdminPassword: testAdminPassword})
	if !errors.Is(err, migrate.ErrNewer) {
		t.Fatalf("opening a newer web.db: %v, want the newer-version refusal", err)
	}
	for _, want := range []string{"web.db", "versão " + strconv.FormatInt(next, 10), "versão " + strconv.FormatInt(Schema.Latest(), 10)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if after := count(); after != before {
		t.Fatalf("rows in web.db went from %d to %d after the refusal", before, after)
	}
	db.Close()
}
