package store

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// The schema of the versions before the index rows moved into doc, as
// they wrote it (literal, not this version's constants).
var oldSchema = map[string][]string{
	"sqlite": {`
CREATE TABLE IF NOT EXISTS doc (
	kind       TEXT NOT NULL,
	account    TEXT NOT NULL,
	id         TEXT NOT NULL,
	json       BLOB NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS doc_key ON doc(kind, account, id);
CREATE TABLE IF NOT EXISTS seq (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS idx (
	kind    TEXT NOT NULL,
	account TEXT NOT NULL,
	id      TEXT NOT NULL,
	owner   TEXT NOT NULL,
	n       INTEGER NOT NULL,
	s1 TEXT NOT NULL, s2 TEXT NOT NULL, s3 TEXT NOT NULL, s4 TEXT NOT NULL,
	i1 INTEGER NOT NULL, i2 INTEGER NOT NULL, i3 INTEGER NOT NULL, i4 INTEGER NOT NULL,
	PRIMARY KEY (kind, account, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS idx_n ON idx(kind, account, n, id, s1, s2, s3, s4, i2, i3, i4);
CREATE INDEX IF NOT EXISTS idx_i1 ON idx(kind, account, i1, n, id);
CREATE TABLE IF NOT EXISTS alias (
	kind    TEXT NOT NULL,
	account TEXT NOT NULL,
	key     TEXT NOT NULL,
	owner   TEXT NOT NULL,
	ref     TEXT NOT NULL,
	PRIMARY KEY (kind, account, key)
) WITHOUT ROWID;`},
	"postgres": {
		`CREATE TABLE IF NOT EXISTS doc (
		kind       TEXT NOT NULL,
		account    TEXT NOT NULL,
		id         TEXT NOT NULL,
		json       BYTEA NOT NULL,
		updated_at BIGINT NOT NULL,
		PRIMARY KEY (kind, account, id))`,
		`CREATE TABLE IF NOT EXISTS seq (name TEXT PRIMARY KEY, value BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS idx (
		kind    TEXT NOT NULL,
		account TEXT NOT NULL,
		id      TEXT NOT NULL,
		owner   TEXT NOT NULL,
		n       BIGINT NOT NULL,
		s1 TEXT NOT NULL, s2 TEXT NOT NULL, s3 TEXT NOT NULL, s4 TEXT NOT NULL,
		i1 BIGINT NOT NULL, i2 BIGINT NOT NULL, i3 BIGINT NOT NULL, i4 BIGINT NOT NULL,
		PRIMARY KEY (kind, account, id))`,
		`CREATE INDEX IF NOT EXISTS idx_n ON idx(kind, account, n, id)`,
		`CREATE INDEX IF NOT EXISTS idx_i1 ON idx(kind, account, i1, n, id)`,
		`CREATE TABLE IF NOT EXISTS alias (
		kind    TEXT NOT NULL,
		account TEXT NOT NULL,
		key     TEXT NOT NULL,
		owner   TEXT NOT NULL,
		ref     TEXT NOT NULL,
		PRIMARY KEY (kind, account, key))`,
	},
}

// A database written by the versions with a table of index rows opens
// (its documents and index rows moved into doc) and serves everything it
// held: documents with and without an index row, index rows without a
// document (a carnet's parcels), aliases and sequences; then it takes
// writes, deletions and reopens as a new one.
func TestOpenOldSchemaWithIdx(t *testing.T) { forBackends(t, testOpenOldSchema) }

func testOpenOldSchema(t *testing.T, be testBackend) {
	path := be.newDB(t)
	driver, ph := "sqlite", func(q string) string { return q }
	if be.name == "postgres" {
		driver, ph = "pgx", pgBackend{}.rebind
	}
	db, err := sql.Open(driver, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range oldSchema[be.name] {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	// the old rows in one transaction (one commit, not 600)
	dtx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := dtx.Exec(ph(q), args...); err != nil {
			t.Fatal(err)
		}
	}
	const nDocs = 300
	for i := range nDocs {
		id := fmt.Sprintf("t%04d", i)
		exec(`INSERT INTO doc(kind, account, id, json, updated_at) VALUES (?, ?, ?, ?, ?)`, "charge", "acc", id, []byte(fmt.Sprintf(`{"name":"%s","cents":%d}`, id, i)), 1)
		if i%3 != 0 { // every third document has no index row
			exec(`INSERT INTO idx(kind, account, id, owner, n, s1, s2, s3, s4, i1, i2, i3, i4) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				"charge", "acc", id, "", int64(1000+i), "cobv", "ATIVA", "", "", int64(i%7), 0, 0, 0)
		}
	}
	// index rows of another kind without documents, owned by one
	for i := range 5 {
		exec(`INSERT INTO idx(kind, account, id, owner, n, s1, s2, s3, s4, i1, i2, i3, i4) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			"list", "acc", fmt.Sprintf("p%d", i), "carnet1", int64(i), "parcel", "", "", "", 0, 0, 0, 0)
	}
	exec(`INSERT INTO doc(kind, account, id, json, updated_at) VALUES (?, ?, ?, ?, ?)`, "carnet", "acc", "carnet1", []byte(`{"name":"c"}`), 1)
	exec(`INSERT INTO alias(kind, account, key, owner, ref) VALUES (?, ?, ?, ?, ?)`, "tok", "acc", "k1", "t0001", "r")
	exec(`INSERT INTO seq(name, value) VALUES (?, ?)`, "ids", 41)
	if err := dtx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	ctx := context.Background()
	check := func(s *Store, deleted bool) {
		t.Helper()
		for i := range nDocs {
			id := fmt.Sprintf("t%04d", i)
			var d doc
			ok, err := s.Get(ctx, "charge", "acc", id, &d)
			gone := deleted && i == 1
			if err != nil || ok == gone || (!gone && (d.Name != id || d.Cents != int64(i))) {
				t.Fatalf("doc %s: %v %v %+v", id, ok, err, d)
			}
			ix, ok, err := s.GetIndex(ctx, "charge", "acc", id)
			want := i%3 != 0 && !(deleted && i == 2)
			if err != nil || ok != want || (ok && (ix.N != int64(1000+i) || ix.S1 != "cobv" || ix.S2 != "ATIVA" || ix.I1 != int64(i%7) || ix.Owner != id)) {
				t.Fatalf("index %s: %v %v %+v", id, ok, err, ix)
			}
		}
		n, err := s.Count(ctx, Query{Kind: "charge", Account: "acc", Where: []Cond{Eq(ColS1, "cobv")}})
		want := nDocs - nDocs/3
		if deleted {
			want-- // t0002's
		}
		if err != nil || n != want {
			t.Fatalf("count %d (%v), want %d", n, err, want)
		}
		var ids []string
		if err := s.Find(ctx, Query{Kind: "charge", Account: "acc", Keys: true, Where: []Cond{Eq(ColI1, int64(3))}}, func(id string, _ Index) error {
			ids = append(ids, id)
			return nil
		}); err != nil || len(ids) == 0 {
			t.Fatalf("find by i1: %v %v", ids, err)
		}
		for k, id := range ids {
			var i int
			fmt.Sscanf(id, "t%04d", &i)
			if i%7 != 3 || i%3 == 0 || (k > 0 && ids[k-1] >= id) {
				t.Fatalf("find by i1: %v", ids)
			}
		}
		var parcels []string
		if err := s.Find(ctx, Query{Kind: "list", Account: "acc"}, func(id string, ix Index) error {
			parcels = append(parcels, id+"@"+ix.Owner+"/"+ix.S1)
			return nil
		}); err != nil || fmt.Sprint(parcels) != "[p0@carnet1/parcel p1@carnet1/parcel p2@carnet1/parcel p3@carnet1/parcel p4@carnet1/parcel]" {
			t.Fatalf("parcels: %v %v", parcels, err)
		}
		if ok, _ := s.Get(ctx, "list", "acc", "p0", nil); ok {
			t.Fatal("an index row read as a document")
		}
		docs := 0
		if err := s.EachIn(ctx, "charge", "acc", func(string, []byte) error { docs++; return nil }); err != nil || docs != nDocs-btoi(deleted) {
			t.Fatalf("each: %d %v", docs, err)
		}
		if a, ok, err := s.GetAlias(ctx, "tok", "acc", "k1"); err != nil || !ok || a.Owner != "t0001" || a.Ref != "r" {
			t.Fatalf("alias: %+v %v %v", a, ok, err)
		}
		if v, err := s.Seq(ctx, "ids"); err != nil || v != 41 {
			t.Fatalf("seq %d %v", v, err)
		}
		var empty int
		if err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM doc WHERE json IS NULL AND n IS NULL`).Scan(&empty); err != nil || empty != 0 {
			t.Fatalf("%d rows with neither a document nor an index row (%v)", empty, err)
		}
	}
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if be.name == "sqlite" { // the old tables' pages are given back
		var free int
		if err := s.r.QueryRowContext(ctx, `PRAGMA freelist_count`).Scan(&free); err != nil || free != 0 {
			t.Fatalf("%d free pages after the move (%v)", free, err)
		}
	}
	check(s, false)
	// Writes on the moved rows: a document deleted (its index row stays),
	// an index row deleted (its document stays), a new document with its
	// index row in one statement.
	if err := s.Tx(ctx, func(tx *Tx) error {
		if err := tx.Delete("charge", "acc", "t0001"); err != nil {
			return err
		}
		if err := tx.DeleteIndex("charge", "acc", "t0002"); err != nil {
			return err
		}
		if err := tx.PutIndex("charge", "acc", "t0001", Index{N: 1001, S1: "cobv", S2: "ATIVA", I1: 1}); err != nil {
			return err
		}
		// a row made and emptied again: deleted, not left empty
		if err := tx.Put("charge", "acc", "x", doc{}); err != nil {
			return err
		}
		if err := tx.PutIndex("charge", "acc", "x", Index{N: 1}); err != nil {
			return err
		}
		if err := tx.Delete("charge", "acc", "x"); err != nil {
			return err
		}
		if err := tx.DeleteIndex("charge", "acc", "x"); err != nil {
			return err
		}
		if err := tx.PutIndex("list", "acc", "y", Index{N: 1}); err != nil {
			return err
		}
		return tx.DeleteIndexes("list", "acc", []string{"y"})
	}); err != nil {
		t.Fatal(err)
	}
	check(s, true)
	s.Close()
	s, err = Open(path) // already moved: opens as it is
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s, true)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
