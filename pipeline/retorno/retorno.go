// Package retorno writes a run's arquivo de retorno: the CNAB file a bank
// sends back to the company's ERP, built from what remessa knows of the
// run's charges (its results and its status ledger), in FEBRABAN's CNAB
// 240 or Bradesco's or Itaú's CNAB 400. Each event of a title (entry
// confirmed or rejected, due date changed, paid, settled by hand, written
// off, refunded) goes into exactly one retorno: retornos.db in the runs
// folder records what each retorno reported and numbers an account's
// files (NSA) without gaps. `remessa retorno` and the desk's run page call
// Write; docs/cnab.md has the mapping.
package retorno

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"remessa/pipeline/results"
	"remessa/pipeline/run"
	"remessa/pipeline/status"
	"remessa/rules"
)

// Options say how a retorno is written.
type Options struct {
	// Layout is Layout240, Layout400Brad or Layout400Itau; empty: the
	// layout the run's input came in (a run from a sheet must say it).
	Layout string
	// Output is the file to write; empty: <run>/retornos/RETORNO-<NSA>.RET.
	// An existing file is never overwritten.
	Output string
	// Bank is the bank code a CNAB 240 retorno's headers name when the
	// run's input does not say it (a sheet); default 000.
	Bank string
	// Sync brings the run's ledger up to date from the service first, as
	// `remessa status` does, with Status's options.
	Sync   bool
	Status status.Options
	// Now is the generation time when there is no sync (default: the
	// ledger's last sync, else time.Now).
	Now  func() time.Time
	Lang string
}

// Tally counts events and their titles' value.
type Tally struct {
	Count int   `json:"count"`
	Cents int64 `json:"amount_cents"`
	Paid  int64 `json:"paid_cents,omitempty"`
}

// Result is what a retorno reported.
type Result struct {
	File
	// Empty: nothing new since the last retorno; no file was written and
	// no NSA taken.
	Empty bool `json:"empty"`
	// ByEvent counts the events by kind (Event* constants).
	ByEvent map[string]Tally `json:"by_event"`
	// NotInFile counts events the layout has no occurrence for: recorded
	// as reported, listed here, not in the file.
	NotInFile int `json:"not_in_file"`
	// Rejections are the first rejected rows, with their text.
	Rejections []Entry         `json:"rejections,omitempty"`
	Warnings   []string        `json:"warnings,omitempty"`
	Check      Check           `json:"check"`
	Sync       *status.Summary `json:"sync,omitempty"`
}

// maxRejections is how many rejected rows a Result lists.
const maxRejections = 50

// LayoutError says the run's layout is unknown: a run from a sheet, or a
// layout name remessa does not have.
type LayoutError struct{ Msg string }

func (e *LayoutError) Error() string { return e.Msg }

// Write writes the next retorno of the run in dir: every event of its
// titles not yet in a retorno of the run, numbered with its account's
// next NSA. When there is nothing new it writes nothing (Result.Empty).
func Write(ctx context.Context, dir string, o Options) (*Result, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return nil, &LayoutError{Msg: fmt.Sprintf("%s não é uma execução terminada (sem results.json legível): %v", dir, err)}
	}
	echo, err := readEcho(res.Run.InputFile, res.Run.InputSHA256)
	if err != nil {
		return nil, err
	}
	layout := o.Layout
	if layout == "" {
		if echo == nil || echo.Layout == "" {
			return nil, &LayoutError{Msg: fmt.Sprintf("a execução %s não veio de uma remessa CNAB (entrada: %s): diga o leiaute do retorno com --layout %s",
				res.Run.ID, filepath.Base(res.Run.InputFile), layoutsAllowed)}
		}
		layout = echo.Layout
	}
	spec, err := specOf(layout)
	if err != nil {
		return nil, &LayoutError{Msg: err.Error()}
	}
	if o.Bank != "" && (len(o.Bank) != 3 || !rules.AllDigits(o.Bank)) {
		return nil, &LayoutError{Msg: fmt.Sprintf("banco %q: use o código de 3 dígitos (ex.: 001)", o.Bank)}
	}
	if echo != nil && echo.Layout != "" && echo.Layout != layout {
		echo.Header, echo.Batch, echo.Company = nil, nil, nil // another layout's fields do not carry over; the titles' identifiers do
	}
	if o.Output != "" {
		if _, err := os.Stat(o.Output); err == nil {
			return nil, &LayoutError{Msg: fmt.Sprintf("%s já existe: o retorno nunca sobrescreve um arquivo (escolha outro -o)", o.Output)}
		}
	}
	out := &Result{ByEvent: map[string]Tally{}}
	if echo != nil && echo.Warning != "" {
		out.Warnings = append(out.Warnings, echo.Warning)
	}
	if o.Sync {
		sum, err := status.Sync(ctx, dir, o.Status)
		if err != nil {
			return nil, err
		}
		out.Sync = sum
	}
	at, err := genTime(ctx, dir, res, o, out.Sync)
	if err != nil {
		return nil, err
	}
	return write(ctx, dir, res, echo, spec, at, o, out)
}

// genTime is the retorno's time: the sync's (the service's clock), else
// the ledger's last sync, else o.Now. The ledger gets the run's charges
// (once) so a retorno without a sync still confirms the entries.
func genTime(ctx context.Context, dir string, res *results.Results, o Options, sum *status.Summary) (time.Time, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	l, err := status.OpenLedger(dir)
	if err != nil {
		return time.Time{}, err
	}
	defer l.Close()
	at := now()
	c, synced := l.LastClock(ctx)
	if sum != nil {
		if t, err := time.Parse(time.RFC3339Nano, sum.SyncedAt); err == nil {
			at = t
		}
	} else if synced && o.Now == nil {
		at = c.Service
	}
	if sum == nil && !synced { // a sync seeds the ledger before anything else
		have, err := l.Count(ctx)
		if err != nil {
			return time.Time{}, err
		}
		if have < issuedCharges(res) {
			if _, err := l.Seed(ctx, res, at); err != nil {
				return time.Time{}, err
			}
		}
	}
	return at, nil
}

// issuedCharges counts the charges a run's results say it issued (a
// carnet's parcels each).
func issuedCharges(res *results.Results) int {
	n := 0
	for i := range res.Rows {
		r := &res.Rows[i]
		switch {
		case r.Outcome != results.Issued:
		case len(r.Parcels) > 0:
			n += len(r.Parcels)
		default:
			n++
		}
	}
	return n
}

func write(ctx context.Context, dir string, res *results.Results, echo *Echo, spec *layoutSpec, at time.Time, o Options, out *Result) (*Result, error) {
	db, err := openStore(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	account := res.Run.Account
	done, err := reported(ctx, tx, res.Run.ID)
	if err != nil {
		return nil, err
	}
	nsa, err := nextNSA(ctx, tx, account)
	if err != nil {
		return nil, err
	}
	path := o.Output
	if path == "" {
		path = filepath.Join(dir, "retornos", fmt.Sprintf("RETORNO-%s.RET", itoa6(nsa)))
	}
	path, err = filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("retorno: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("retorno: %w", err)
	}
	defer func() {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	fw := newFileWriter(spec, tmp, echo, nsa, at, o.Bank)
	if err := fw.header(); err != nil {
		return nil, err
	}
	rec := &recorder{ctx: ctx, tx: tx, runID: res.Run.ID, account: account, nsa: nsa}
	n := 0
	col := newCollector(res, echo, spec, o.Lang)
	today := rules.Today(at)
	produce := func(ctx context.Context, fn func(*Entry) error) error { return col.run(ctx, dir, today, fn) }
	err = pipelined(ctx, produce, func(e *Entry) error {
		if done[e.Key] {
			return nil
		}
		n++
		if err := rec.add(e); err != nil {
			return err
		}
		out.count(e)
		return fw.entry(e)
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		out.Empty = true
		out.Account, out.RunID, out.Layout = account, res.Run.ID, spec.name
		return out, nil
	}
	if err := fw.finish(); err != nil {
		return nil, err
	}
	if err := rec.close(); err != nil {
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		return nil, fmt.Errorf("retorno: %w", err)
	}
	echoJSON, _ := json.Marshal(echo)
	f := File{Account: account, NSA: nsa, RunID: res.Run.ID, Layout: spec.name, CreatedAt: at.UTC().Format(time.RFC3339), Path: path,
		Events: n, Titles: fw.titles, Cents: fw.cents}
	if _, err := tx.ExecContext(ctx, `INSERT INTO retornos (account, nsa, run_id, layout, created_at, path, events, titles, cents, bank, echo) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.Account, f.NSA, f.RunID, f.Layout, f.CreatedAt, f.Path, f.Events, f.Titles, f.Cents, o.Bank, string(echoJSON)); err != nil {
		return nil, err
	}
	// the file is complete and on disk before the events are recorded as
	// reported; a crash between the commit and the rename leaves the NSA
	// recorded, and `remessa retorno --nsa N` writes it again
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("retorno: registrar o retorno %d: %w", nsa, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, fmt.Errorf("retorno: NSA %d registrado, mas o arquivo não pôde ser gravado em %s (%v): escreva-o de novo com --nsa %d", nsa, path, err, nsa)
	}
	tmp = nil
	syncDir(filepath.Dir(path))
	out.File = f
	out.NotInFile = fw.skipped
	out.Check, err = CheckFile(path, spec.name)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (r *Result) count(e *Entry) {
	t := r.ByEvent[e.Event]
	t.Count++
	t.Cents += e.Value
	t.Paid += e.Paid
	r.ByEvent[e.Event] = t
	if e.Event == EventRejeicao && len(r.Rejections) < maxRejections {
		r.Rejections = append(r.Rejections, *e)
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// List returns the retornos written for the run in dir, in NSA order.
func List(ctx context.Context, dir string) ([]File, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), FileName)); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	id, err := runID(ctx, dir)
	if err != nil {
		return nil, err
	}
	db, err := openStore(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return files(ctx, db, id)
}

// runID is the id of the run in dir: from its journal (a few bytes), else
// its results.json.
func runID(ctx context.Context, dir string) (string, error) {
	if m, err := run.ReadMeta(ctx, dir); err == nil {
		return m.RunID, nil
	}
	res, err := results.Load(filepath.Join(dir, "results.json"))
	if err != nil {
		return "", err
	}
	return res.Run.ID, nil
}

// ErrNoSuchRetorno is returned for an NSA the run has no retorno with.
var ErrNoSuchRetorno = errors.New("retorno: a execução não tem retorno com esse NSA")

// Render writes again retorno nsa of the run in dir to w, byte for byte
// as it was first written (from what retornos.db recorded), and returns
// it.
func Render(ctx context.Context, dir string, nsa int, w io.Writer) (*File, error) {
	fs, err := List(ctx, dir)
	if err != nil {
		return nil, err
	}
	dir, _ = filepath.Abs(dir)
	for i := range fs {
		f := &fs[i]
		if f.NSA != nsa {
			continue
		}
		spec, err := specOf(f.Layout)
		if err != nil {
			return nil, err
		}
		var echo Echo
		if f.echo != "" && f.echo != "null" {
			if err := json.Unmarshal([]byte(f.echo), &echo); err != nil {
				return nil, fmt.Errorf("retorno %d: cabeçalho gravado ilegível: %w", nsa, err)
			}
		}
		at, err := time.Parse(time.RFC3339, f.CreatedAt)
		if err != nil {
			return nil, err
		}
		db, err := openStore(filepath.Dir(dir))
		if err != nil {
			return nil, err
		}
		defer db.Close()
		fw := newFileWriter(spec, w, &echo, nsa, at, f.bank)
		if err := fw.header(); err != nil {
			return nil, err
		}
		if err := eachStored(ctx, db, f.Account, nsa, fw.entry); err != nil {
			return nil, err
		}
		return f, fw.finish()
	}
	return nil, ErrNoSuchRetorno
}

// Rewrite writes retorno nsa of the run in dir again to path (never over
// an existing file).
func Rewrite(ctx context.Context, dir string, nsa int, path string) (*File, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, &LayoutError{Msg: fmt.Sprintf("%s já existe: o retorno nunca sobrescreve um arquivo (escolha outro -o)", path)}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	f, err := Render(ctx, dir, nsa, tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return nil, err
	}
	f.Path = path
	return f, nil
}
