package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", fileURL(path)+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS t (n INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	return db
}

func maxN(t *testing.T, path string) int64 {
	t.Helper()
	db, err := sql.Open("sqlite", fileURL(path)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n sql.NullInt64
	if err := db.QueryRow(`SELECT max(n) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n.Int64
}

// TestBackupIsOneMoment writes to two databases of a folder without a
// pause (row i into a.db, then row i into sub/b.db, each its own
// transaction, as a run writes its journal and the service its charge)
// while backups are taken: in every archive b.db is at most one row
// behind a.db and never ahead, which copies taken one after the other
// would not be. The archive restores into an empty folder, its manifest
// lists both databases with their version tables, and its files (and
// no WAL) come back.
func TestBackupIsOneMoment(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	a, b := openDB(t, filepath.Join(src, "a.db")), openDB(t, filepath.Join(src, "sub", "b.db"))
	defer a.Close()
	defer b.Close()
	if _, err := a.Exec(`CREATE TABLE x_schema_version (id INTEGER PRIMARY KEY, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL); INSERT INTO x_schema_version(version_id, is_applied) VALUES (0, 1), (3, 1)`); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "sub", "results.json"), []byte(`{"ok":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; !stop.Load(); i++ {
			if _, err := a.Exec(`INSERT INTO t(n) VALUES (?)`, i); err != nil {
				werr = err
				return
			}
			if _, err := b.Exec(`INSERT INTO t(n) VALUES (?)`, i); err != nil {
				werr = err
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	var archives [][]byte
	for range 3 {
		var buf bytes.Buffer
		m, err := Write(ctx, src, &buf, Options{Remessa: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Databases) != 2 || m.Databases[0].Path != "a.db" || m.Databases[1].Path != "sub/b.db" || m.Files != 3 {
			t.Fatalf("manifest: %+v", m)
		}
		if m.Databases[0].Versions["x_schema_version"] != 3 {
			t.Fatalf("a.db's versions in the manifest: %v, want x_schema_version 3", m.Databases[0].Versions)
		}
		archives = append(archives, buf.Bytes())
		time.Sleep(50 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if werr != nil {
		t.Fatalf("the writer failed during the backups: %v", werr)
	}
	for i, arc := range archives {
		dst := filepath.Join(t.TempDir(), "restored")
		if _, err := Restore(ctx, bytes.NewReader(arc), dst, RestoreOptions{}); err != nil {
			t.Fatal(err)
		}
		na, nb := maxN(t, filepath.Join(dst, "a.db")), maxN(t, filepath.Join(dst, "sub", "b.db"))
		if na == 0 || nb > na || na-nb > 1 {
			t.Errorf("archive %d: a.db at row %d, b.db at row %d: not one moment of the folder", i, na, nb)
		}
		if got, err := os.ReadFile(filepath.Join(dst, "sub", "results.json")); err != nil || string(got) != `{"ok":true}` {
			t.Errorf("archive %d: results.json %q %v", i, got, err)
		}
		if m, _ := filepath.Glob(filepath.Join(dst, "*-wal")); len(m) > 0 {
			t.Errorf("archive %d restored WAL files %v", i, m)
		}
	}
}

// TestRestoreRefusals: a folder with files (without Force), a file that
// is no backup, an entry leaving the folder, a truncated archive; and
// Force over a folder whose database has a stale WAL.
func TestRestoreRefusals(t *testing.T) {
	ctx := context.Background()
	src := t.TempDir()
	db := openDB(t, filepath.Join(src, "a.db"))
	if _, err := db.Exec(`INSERT INTO t(n) VALUES (1), (2)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var buf bytes.Buffer
	if _, err := Write(ctx, src, &buf, Options{}); err != nil {
		t.Fatal(err)
	}
	arc := buf.Bytes()

	busy := t.TempDir()
	os.WriteFile(filepath.Join(busy, "x.txt"), []byte("x"), 0o600)
	if _, err := Restore(ctx, bytes.NewReader(arc), busy, RestoreOptions{}); !errors.Is(err, ErrNotEmpty) || !strings.Contains(err.Error(), busy) {
		t.Fatalf("restore into a folder with files: %v", err)
	}
	if _, err := Restore(ctx, strings.NewReader("não sou um backup"), t.TempDir(), RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "não é um backup do remessa") {
		t.Fatalf("restore of a text file: %v", err)
	}
	for _, cut := range []int{len(arc) / 2, len(arc) - 4} {
		empty := t.TempDir()
		if _, err := Restore(ctx, bytes.NewReader(arc[:cut]), empty, RestoreOptions{}); err == nil || cut > len(arc)/2 && !strings.Contains(err.Error(), "nada foi restaurado") {
			t.Fatalf("an archive cut at byte %d of %d: %v", cut, len(arc), err)
		}
		if ents, _ := os.ReadDir(empty); len(ents) != 0 {
			t.Fatalf("an archive cut at byte %d left %d entries in the target folder", cut, len(ents))
		}
	}
	// A truncated archive forced over a folder leaves that folder's
	// database as it was (rows 1..7), not half replaced.
	kept := t.TempDir()
	kdb := openDB(t, filepath.Join(kept, "a.db"))
	for i := 1; i <= 7; i++ {
		kdb.Exec(`INSERT INTO t(n) VALUES (?)`, i)
	}
	kdb.Close()
	if _, err := Restore(ctx, bytes.NewReader(arc[:len(arc)-4]), kept, RestoreOptions{Force: true}); err == nil {
		t.Fatal("a truncated archive forced over a folder restored without error")
	}
	if ents, _ := os.ReadDir(kept); len(ents) != 1 || ents[0].Name() != "a.db" {
		t.Fatalf("a failed forced restore left %d entries, want a.db alone", len(ents))
	}
	if n := maxN(t, filepath.Join(kept, "a.db")); n != 7 {
		t.Fatalf("after a failed forced restore a.db is at row %d, want its own 7", n)
	}
	var evil bytes.Buffer
	zw := gzip.NewWriter(&evil)
	tw := tar.NewWriter(zw)
	man := []byte(`{"format":1,"files":1}`)
	tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(man)), Typeflag: tar.TypeReg})
	tw.Write(man)
	tw.WriteHeader(&tar.Header{Name: "../fora.txt", Mode: 0o600, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("x"))
	tw.Close()
	zw.Close()
	parent := t.TempDir()
	if _, err := Restore(ctx, &evil, filepath.Join(parent, "d"), RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "fora da pasta") {
		t.Fatalf("an entry leaving the folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(parent, "fora.txt")); err == nil {
		t.Fatal("the entry was written outside the folder")
	}

	// Force over a folder whose a.db has rows 1..5 in a WAL of its own:
	// the archive's a.db (rows 1, 2) comes back, the stale WAL goes.
	over := t.TempDir()
	db = openDB(t, filepath.Join(over, "a.db"))
	for i := 1; i <= 5; i++ {
		db.Exec(`INSERT INTO t(n) VALUES (?)`, i)
	}
	// keep the WAL: copy the files as a crash would leave them
	os.WriteFile(filepath.Join(over, "keep"), nil, 0o600)
	wal, _ := os.ReadFile(filepath.Join(over, "a.db-wal"))
	db.Close()
	if len(wal) > 0 {
		os.WriteFile(filepath.Join(over, "a.db-wal"), wal, 0o600)
	}
	if _, err := Restore(ctx, bytes.NewReader(arc), over, RestoreOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if n := maxN(t, filepath.Join(over, "a.db")); n != 2 {
		t.Fatalf("after a forced restore a.db is at row %d, want the archive's 2", n)
	}
}
