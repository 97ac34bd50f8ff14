package listen

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"remessa/pipeline/results"
)

// Kinds of ids in the index.
const (
	idCharge = "charge"
	idCarnet = "carnet"
	idTxid   = "txid"
)

// scan brings the index of the runs under the runs folder up to date:
// every */results.json new or changed since the last scan is read, and
// its charge ids, carnet ids and txids are mapped to its folder. It
// returns how many run folders were new or changed.
func (l *Listener) scan(ctx context.Context) (int, error) {
	l.scanMu.Lock()
	defer l.scanMu.Unlock()
	paths, err := filepath.Glob(filepath.Join(l.dir, "*", "results.json"))
	if err != nil {
		return 0, err
	}
	sort.Strings(paths)
	n := 0
	for _, p := range paths {
		name := filepath.Base(filepath.Dir(p))
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		var mtime, size int64
		err = l.db.QueryRowContext(ctx, `SELECT results_mtime, results_size FROM runs WHERE name = ?`, name).Scan(&mtime, &size)
		if err == nil && mtime == fi.ModTime().UnixNano() && size == fi.Size() {
			continue
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return n, err
		}
		res, err := results.Load(p)
		if err != nil {
			continue // being written, or not a run: the next scan sees it again
		}
		if err := l.indexRun(ctx, name, res, fi); err != nil {
			return n, err
		}
		l.forget(name)
		n++
	}
	return n, nil
}

func (l *Listener) indexRun(ctx context.Context, name string, res *results.Results, fi os.FileInfo) error {
	tx, err := l.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO ids (kind, id, run) VALUES (?, ?, ?) ON CONFLICT(kind, id) DO UPDATE SET run = excluded.run`)
	if err != nil {
		return err
	}
	defer ins.Close()
	add := func(kind, id string) error {
		if id == "" || id == "0" {
			return nil
		}
		_, err := ins.ExecContext(ctx, kind, id, name)
		return err
	}
	for i := range res.Rows {
		row := &res.Rows[i]
		if err := add(idCarnet, strconv.FormatInt(row.CarnetID, 10)); err != nil {
			return err
		}
		if err := add(idTxid, row.Txid); err != nil {
			return err
		}
		for _, id := range row.ChargeIDs {
			if err := add(idCharge, strconv.FormatInt(id, 10)); err != nil {
				return err
			}
		}
		for _, p := range row.Parcels {
			if err := add(idCharge, strconv.FormatInt(p.ChargeID, 10)); err != nil {
				return err
			}
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs (name, run_id, kind, results_mtime, results_size) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(name) DO UPDATE SET run_id = excluded.run_id, kind = excluded.kind, results_mtime = excluded.results_mtime, results_size = excluded.results_size`,
		name, res.Run.ID, string(res.Run.Kind), fi.ModTime().UnixNano(), fi.Size()); err != nil {
		return err
	}
	return tx.Commit()
}

// runOf returns the run folder (its name under the runs folder) an id
// belongs to, "" when none.
func (l *Listener) runOf(ctx context.Context, kind, id string) (string, error) {
	var name string
	err := l.db.QueryRowContext(ctx, `SELECT run FROM ids WHERE kind = ? AND id = ?`, kind, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return name, err
}

// runNames lists the runs of the index, newest folder name last.
func (l *Listener) runNames(ctx context.Context) ([]string, error) {
	rows, err := l.db.QueryContext(ctx, `SELECT name FROM runs ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
