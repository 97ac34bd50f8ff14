package web

import (
	"context"
	"database/sql"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"remessa/internal/migrate"
	"remessa/internal/migrate/migratetest"
)

// TestUpgradeDeskFrom8e335f2 opens the desk's data folder written by the
// binary of 8e335f2 (no version table in web.db) with this code: web.db
// moves to the last step with its rows as they were, both users sign in
// with their old passwords, the finished run's page and reports are
// there, its carnet PDF is served by the embedded sandbox from the old
// sandbox.db, and the sealed credentials of the second account open.
func TestUpgradeDeskFrom8e335f2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(migratetest.Unpack(t, "desk"), "desk")
	counts := func(db *sql.DB) (users, accounts, runs int) {
		t.Helper()
		if err := db.QueryRow(`SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM accounts), (SELECT count(*) FROM runs)`).Scan(&users, &accounts, &runs); err != nil {
			t.Fatal(err)
		}
		return
	}
	old, err := sql.Open("sqlite", dsn(filepath.Join(dir, DBFile), false))
	if err != nil {
		t.Fatal(err)
	}
	if have, _, err := migrate.Version(ctx, old, &Schema); err != nil || have != 0 {
		t.Fatalf("the fixture's web.db is at version %d (%v), want 0: no version table", have, err)
	}
	u0, a0, r0 := counts(old)
	old.Close()
	if u0 != 2 || a0 != 2 || r0 != 1 {
		t.Fatalf("the fixture has %d users, %d accounts, %d runs; want 2, 2, 1", u0, a0, r0)
	}

	srv, err := New(ctx, Config{Addr: "127.0.0.1:0", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if have, known, err := migrate.Version(ctx, srv.db, &Schema); err != nil || have != known {
		t.Fatalf("web.db after opening: version %d of %d (%v)", have, known, err)
	}
	if u, a, r := counts(srv.db); u != 2 || a != 2 || r != 1 {
		t.Fatalf("after the upgrade: %d users, %d accounts, %d runs; want 2, 2, 1", u, a, r)
	}
	if srv.AdminCreated {
		t.Fatal("the server made a new administrator over the old one")
	}

	admin := login(t, srv, "admin", "Fixture-Admin-8e335f2")
	sec := login(t, srv, "secretaria", "kmch-a4E7-y2FB-FEh6")
	if r := sec.get("/"); r.Status != http.StatusOK || !sec.signedIn() {
		t.Fatalf("the old operator's home: %d", r.Status)
	}
	r := admin.get("/execucoes/1")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `data-status="done"`) || !strings.Contains(r.Body, "Mensalidades 2027") {
		t.Fatalf("the old run's page: %d\n%.1500s", r.Status, r.Body)
	}
	r = admin.get("/execucoes/1/documento/0")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "%PDF") {
		t.Fatalf("the old run's first carnet from the old sandbox: %d %.80q", r.Status, r.Body)
	}
	r = admin.get("/execucoes/1/arquivos/relatorio.xlsx")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Body, "PK") {
		t.Fatalf("the old run's report: %d", r.Status)
	}
	c, err := srv.credentials(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c.ClientID != "Client_Id_fixture" || c.ClientSecret != "Client_Secret_fixture" {
		t.Fatalf("the old account's credentials: %q %q", c.ClientID, c.ClientSecret)
	}
}
