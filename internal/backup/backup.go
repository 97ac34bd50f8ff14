// Package backup copies a remessa data folder (the desk's --data, a runs
// folder, a sandbox's --data) into one archive while the programs using
// it keep working, and brings an archive back into a folder.
//
// A backup is consistent across the folder's SQLite databases: it takes
// the write lock of every database (BEGIN IMMEDIATE on a connection of
// its own, waiting for a write in progress to commit), copies each one
// with VACUUM INTO and the folder's other files while it holds them all,
// then lets the writers go on. The copy is therefore one moment of the
// whole folder: a run's journal and the sandbox's charges agree as they
// would after kill -9 at that moment, which a run survives (resume looks
// up every call that was in flight before it sends anything again).
// Writers wait for the length of the copy (they wait up to their busy
// timeouts, 5 to 10 s); the copies go to a temporary folder and are
// compressed after the locks are released.
//
// The archive is a gzip-compressed tar whose first entry is the manifest
// (remessa-backup.json: when, which remessa, each database with the
// schema versions it holds), then the files under their paths relative to
// the folder. WAL and shared-memory files are never copied: each
// database's copy is whole in itself.
package backup

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver
)

// ManifestName is the archive's first entry.
const ManifestName = "remessa-backup.json"

// Format is the archive format this package writes and reads.
const Format = 1

// Manifest describes an archive.
type Manifest struct {
	Format    int        `json:"format"`
	Created   time.Time  `json:"created"`
	Remessa   string     `json:"remessa"` // the version of the remessa that wrote it
	Source    string     `json:"source"`  // the folder backed up
	Databases []Database `json:"databases"`
	Files     int        `json:"files"` // every file, databases included
	Bytes     int64      `json:"bytes"` // their sizes, uncompressed
	// Paused is how long the folder's writers waited for the copy.
	Paused time.Duration `json:"paused_ns"`
}

// Database is one SQLite database of an archive.
type Database struct {
	Path  string `json:"path"` // relative to the folder, with /
	Bytes int64  `json:"bytes"`
	// Versions are its schema versions: each version table's highest
	// step (web_schema_version, journal_schema_version, …, and River's
	// river_migration).
	Versions map[string]int64 `json:"versions,omitempty"`
}

// Options tune Write.
type Options struct {
	Remessa string           // the version written in the manifest
	Now     func() time.Time // the manifest's time (time.Now)
	// LockTimeout bounds the wait for each database's write lock (20 s).
	LockTimeout time.Duration
	// Exclude is a file not to copy (the archive itself, when it is
	// written inside the folder).
	Exclude string
}

var sqliteMagic = []byte("SQLite format 3\x00")

// isTransient is a file that belongs to an open database or a lock: its
// contents are in the database's copy or mean nothing in another place.
func isTransient(name string) bool {
	for _, suf := range []string{"-wal", "-shm", "-journal"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// isSQLite says whether the file at path starts with SQLite's header.
func isSQLite(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b := make([]byte, len(sqliteMagic))
	n, _ := io.ReadFull(f, b)
	return n == len(b) && bytes.Equal(b, sqliteMagic), nil
}

type entry struct {
	rel  string // with /
	path string
	db   bool
	mode fs.FileMode
}

// scan lists the folder's files to copy, sorted.
func scan(dir, exclude string) ([]entry, error) {
	var out []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), StagingPrefix) {
			return filepath.SkipDir // a restore that was cut short
		}
		if !d.Type().IsRegular() || isTransient(d.Name()) || p == exclude {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		db, err := isSQLite(p)
		if err != nil {
			return err
		}
		out = append(out, entry{rel: filepath.ToSlash(rel), path: p, db: db, mode: info.Mode().Perm()})
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, err
}

// WriteFile writes the archive of dir to out (through a temporary file
// renamed when complete, so out is never half an archive).
func WriteFile(ctx context.Context, dir, out string, o Options) (*Manifest, error) {
	abs, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(abs), ".remessa-backup-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if o.Exclude == "" {
		o.Exclude = tmp.Name()
	}
	m, err := Write(ctx, dir, tmp, o)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), abs); err != nil {
		return nil, err
	}
	return m, nil
}

// Write writes the archive of dir to w.
func Write(ctx context.Context, dir string, w io.Writer, o Options) (*Manifest, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 20 * time.Second
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s não é uma pasta", dir)
	}
	if o.Exclude != "" {
		if o.Exclude, err = filepath.Abs(o.Exclude); err != nil {
			return nil, err
		}
	}
	stage, err := os.MkdirTemp("", "remessa-backup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)

	m := &Manifest{Format: Format, Remessa: o.Remessa, Source: dir}
	files, paused, err := snapshot(ctx, dir, stage, o)
	if err != nil {
		return nil, err
	}
	m.Created = o.Now().UTC()
	m.Paused = paused
	for _, f := range files {
		st, err := os.Stat(filepath.Join(stage, filepath.FromSlash(f.rel)))
		if err != nil {
			return nil, err
		}
		m.Files++
		m.Bytes += st.Size()
		if f.db {
			v, err := versions(ctx, filepath.Join(stage, filepath.FromSlash(f.rel)))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.rel, err)
			}
			m.Databases = append(m.Databases, Database{Path: f.rel, Bytes: st.Size(), Versions: v})
		}
	}

	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Name: ManifestName, Mode: 0o600, Size: int64(len(man)), ModTime: m.Created, Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(man); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := addFile(tw, filepath.Join(stage, filepath.FromSlash(f.rel)), f.rel, f.mode, m.Created); err != nil {
			return nil, fmt.Errorf("%s: %w", f.rel, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

func addFile(tw *tar.Writer, path, name string, mode fs.FileMode, at time.Time) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: int64(mode), Size: st.Size(), ModTime: at, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// snapshot copies dir's files into stage while holding every database's
// write lock, and says how long the locks were held.
func snapshot(ctx context.Context, dir, stage string, o Options) ([]entry, time.Duration, error) {
	files, err := scan(dir, o.Exclude)
	if err != nil {
		return nil, 0, err
	}
	var locks []*sql.Tx
	var dbs []*sql.DB
	defer func() {
		for _, tx := range locks {
			tx.Rollback()
		}
		for _, db := range dbs {
			db.Close()
		}
	}()
	open := func(path, pragmas string) (*sql.DB, error) {
		db, err := sql.Open("sqlite", fileURL(path)+"?"+pragmas)
		if err != nil {
			return nil, err
		}
		db.SetMaxOpenConns(1)
		dbs = append(dbs, db)
		return db, nil
	}
	busy := fmt.Sprintf("_pragma=busy_timeout(%d)", o.LockTimeout.Milliseconds())
	// The write lock of every database, in path order (a writer holding
	// one while it waits for another would wait for us at most its busy
	// timeout).
	for _, f := range files {
		if !f.db {
			continue
		}
		db, err := open(f.path, busy+"&_txlock=immediate")
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.rel, err)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("trancar %s para a cópia: %w", f.rel, err)
		}
		locks = append(locks, tx)
	}
	start := time.Now()
	for _, f := range files {
		to := filepath.Join(stage, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, 0, err
		}
		if !f.db {
			if err := copyFile(f.path, to); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed since the scan (a lock file, a temporary report)
				}
				return nil, 0, fmt.Errorf("%s: %w", f.rel, err)
			}
			continue
		}
		db, err := open(f.path, busy)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f.rel, err)
		}
		if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, to); err != nil {
			return nil, 0, fmt.Errorf("copiar %s: %w", f.rel, err)
		}
	}
	paused := time.Since(start)
	kept := files[:0]
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(stage, filepath.FromSlash(f.rel))); err == nil {
			kept = append(kept, f)
		}
	}
	return kept, paused, nil
}

// fileURL is the SQLite address of path.
func fileURL(path string) string { return "file:" + (&url.URL{Path: path}).EscapedPath() }

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// versions reads the schema versions a database copy holds.
func versions(ctx context.Context, path string) (map[string]int64, error) {
	db, err := sql.Open("sqlite", fileURL(path)+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE '%\_schema\_version' ESCAPE '\' OR name = 'river_migration')`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, n := range names {
		col := "version_id"
		if n == "river_migration" {
			col = "version"
		}
		var v sql.NullInt64
		if err := db.QueryRowContext(ctx, `SELECT max(`+col+`) FROM "`+n+`"`).Scan(&v); err != nil {
			return nil, err
		}
		out[n] = v.Int64
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
