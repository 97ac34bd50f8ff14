package journal

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"remessa/internal/pgtest"
	"remessa/pipeline/results"
)

func TestJournalPersists(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2027, 1, 10, 2, 0, 0, 0, time.UTC) // 23:00 on the 9th in São Paulo
	j.SetClock(func() time.Time { return now })
	err = j.Tx(ctx, func(tx *Tx) error {
		if err := tx.SetMeta("meta", `{"run_id":"r1"}`); err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			if err := tx.AddRow(Row{Index: i, Key: string(rune('a' + i)), State: RowPending, Info: json.RawMessage(`{}`), Req: json.RawMessage(`{"x":1}`)}); err != nil {
				return err
			}
		}
		return tx.AddBatch(Batch{Num: 1, ID: "100001", First: 0, End: 3, State: BatchPending})
	})
	if err != nil {
		t.Fatal(err)
	}
	var seq int64
	if err := j.Tx(ctx, func(tx *Tx) error {
		var err error
		seq, err = tx.Intend("POST /v1/carnet", "rm-r1-a")
		if err != nil {
			return err
		}
		return tx.SetRow(0, RowSending, nil)
	}); err != nil {
		t.Fatal(err)
	}
	// a failing transaction leaves nothing behind
	if err := j.Tx(ctx, func(tx *Tx) error {
		tx.SetRow(1, RowIssued, json.RawMessage(`{"y":2}`))
		return context.Canceled
	}); err == nil {
		t.Fatal("error not returned")
	}
	j.Close()

	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	later := now.Add(1500 * time.Millisecond)
	j.SetClock(func() time.Time { return later })
	rows, err := j.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].State != RowSending || rows[1].State != RowPending || rows[1].Res != nil || string(rows[2].Req) != `{"x":1}` {
		t.Fatalf("rows after reopen: %+v", rows)
	}
	n, err := j.CallsOn(ctx, "POST /v1/carnet", "2027-01-09")
	if err != nil || n != 1 {
		t.Fatalf("calls on the São Paulo day: %d %v", n, err)
	}
	if n, err := j.AbandonIntended(ctx); err != nil || n != 1 {
		t.Fatalf("AbandonIntended = %d, %v; want 1", n, err)
	}
	if err := j.Tx(ctx, func(tx *Tx) error { return tx.Finish(seq, CallOK, 200, "") }); err != nil {
		t.Fatal(err)
	}
	calls, err := j.Calls(ctx)
	if err != nil || len(calls) != 1 || calls[0].Seq != seq || calls[0].Route != "POST /v1/carnet" || calls[0].Target != "rm-r1-a" ||
		calls[0].State != CallOK || calls[0].Status != 200 || !calls[0].At.Equal(now) || !calls[0].DoneAt.Equal(later) {
		t.Fatalf("Calls = %+v, %v", calls, err)
	}
	cc, _ := j.CallCounts(ctx)
	if cc["POST /v1/carnet"][CallOK] != 1 {
		t.Fatalf("call counts %v", cc)
	}
	if _, err := Create(path); err == nil {
		t.Fatal("Create over an existing journal succeeded")
	}
}

// rowsJSON is every row of j as one comparable value.
func rowsJSON(t *testing.T, j *Journal) string {
	t.Helper()
	rows, err := j.Rows(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rows)
	return string(b)
}

// Rows of a new journal are stored compressed (by chunks, results against
// their row) and read back as written, across a reopen; a transaction
// that rolls back leaves neither its rows nor its chunk behind.
func TestJournalCompressedRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	j, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	info := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"index":%d,"key":"pagador%d@exemplo.com.br","payer_name":"Nome %d","amount_cents":%d}`, i, i, i, 1000+i*7))
	}
	const n = 3*chunkRows + 5
	err = j.Tx(ctx, func(tx *Tx) error {
		for i := 0; i < n; i++ {
			r := Row{Index: i, Key: fmt.Sprintf("pagador%d@exemplo.com.br", i), State: RowPending, Info: info(i), Req: json.RawMessage(fmt.Sprintf(`{"cobv":{"txid":"tx%dabc","valor":"%d.00"}}`, i, i))}
			if i%50 == 7 {
				r.State, r.Req = RowRefused, nil
			}
			if err := tx.AddRow(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// rolled back: nothing of it stays, and the next chunk reuses its id
	if err := j.Tx(ctx, func(tx *Tx) error {
		if err := tx.AddRow(Row{Index: n, Key: "x", State: RowPending, Info: info(n)}); err != nil {
			return err
		}
		if err := tx.SetRow(n, RowIssued, json.RawMessage(`{"lost":true}`)); err != nil {
			return err
		}
		return context.Canceled
	}); err == nil {
		t.Fatal("error not returned")
	}
	if err := j.Tx(ctx, func(tx *Tx) error {
		return tx.AddRow(Row{Index: n, Key: "y", State: RowPending, Info: info(n + 1)})
	}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= n; i += 3 {
		res := fmt.Sprintf(`{"index":%d,"outcome":"issued","pix_copia_e_cola":"000201%032x","location":"loc/%032x"}`, i, i*7919, i*104729)
		if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetRow(i, RowIssued, json.RawMessage(res)) }); err != nil {
			t.Fatal(err)
		}
	}
	before := rowsJSON(t, j)
	rows, _ := j.Rows(ctx)
	if len(rows) != n+1 || rows[n].Key != "y" || string(rows[n].Info) != string(info(n+1)) || rows[7].Req != nil || rows[7].State != RowRefused ||
		rows[3].State != RowIssued || !strings.Contains(string(rows[3].Res), `"index":3,`) || rows[4].Res != nil || rows[5].Key != "pagador5@exemplo.com.br" {
		t.Fatalf("rows: %s", before)
	}
	if m, _ := j.Meta(ctx); len(m) != 0 {
		t.Fatalf("Meta shows the dictionaries: %v", m)
	}
	j.Close()
	j, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if after := rowsJSON(t, j); after != before {
		t.Fatalf("rows after reopen:\n%s\nwant\n%s", after, before)
	}
	// results written after the reopen read the chunks again
	if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetRow(1, RowIssued, json.RawMessage(`{"index":1,"outcome":"issued"}`)) }); err != nil {
		t.Fatal(err)
	}
	if rows, _ := j.Rows(ctx); string(rows[1].Res) != `{"index":1,"outcome":"issued"}` || string(rows[1].Info) != string(info(1)) {
		t.Fatalf("row 1: %+v", rows[1])
	}
}

// oldSchema is the journal as written before values were compressed.
const oldSchema = `
CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE rows(idx INTEGER PRIMARY KEY, key TEXT NOT NULL, state TEXT NOT NULL, info TEXT NOT NULL, req TEXT, res TEXT, attempts INTEGER NOT NULL DEFAULT 0, updated TEXT);
CREATE TABLE batches(num INTEGER PRIMARY KEY, id TEXT NOT NULL, first INTEGER NOT NULL, end_ INTEGER NOT NULL, state TEXT NOT NULL, updated TEXT);
CREATE TABLE splits(key TEXT PRIMARY KEY, id TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL);
CREATE TABLE calls(seq INTEGER PRIMARY KEY AUTOINCREMENT, route TEXT NOT NULL, target TEXT NOT NULL, day TEXT NOT NULL, state TEXT NOT NULL, status INTEGER NOT NULL DEFAULT 0, error TEXT, at TEXT NOT NULL, done_at TEXT);
CREATE INDEX calls_route_day ON calls(route, day);
INSERT INTO meta VALUES('meta','{"run_id":"r0"}');
INSERT INTO rows VALUES(0,'a','issued','{"index":0}','{"x":0}','{"index":0,"outcome":"issued"}',1,'2026-01-01T00:00:00Z');
INSERT INTO rows VALUES(1,'b','pending','{"index":1}','{"x":1}',NULL,0,'2026-01-01T00:00:00Z');
INSERT INTO rows VALUES(2,'c','refused','{"index":2}',NULL,NULL,0,'2026-01-01T00:00:00Z');
`

// A journal written before values were compressed reads and resumes as
// it is, and goes on being written as JSON text.
func TestJournalOldFormatResumes(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), FileName)
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(oldSchema); err != nil {
		t.Fatal(err)
	}
	db.Close()
	j, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := j.Rows(ctx)
	if err != nil || len(rows) != 3 || rows[0].Key != "a" || string(rows[0].Info) != `{"index":0}` || string(rows[0].Req) != `{"x":0}` ||
		string(rows[0].Res) != `{"index":0,"outcome":"issued"}` || rows[1].Res != nil || rows[2].Req != nil || rows[0].Attempts != 1 {
		t.Fatalf("old rows: %+v %v", rows, err)
	}
	if err := j.Tx(ctx, func(tx *Tx) error {
		if err := tx.SetRowAttempt(1, RowSending); err != nil {
			return err
		}
		return tx.SetRow(1, RowIssued, json.RawMessage(`{"index":1,"outcome":"issued"}`))
	}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	if j, err = Open(path); err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rows, _ = j.Rows(ctx)
	if rows[1].State != RowIssued || string(rows[1].Res) != `{"index":1,"outcome":"issued"}` || rows[1].Attempts != 1 {
		t.Fatalf("row 1 after resume: %+v", rows[1])
	}
	var typ string
	if err := j.db.QueryRow(`SELECT typeof(res) FROM rows WHERE idx=1`).Scan(&typ); err != nil || typ != "text" {
		t.Fatalf("result stored as %q (%v), want text", typ, err)
	}
	if m, _ := j.Meta(ctx); m["meta"] != `{"run_id":"r0"}` {
		t.Fatalf("meta %v", m)
	}
	// a carnet's result packed by the run (PackResult) is kept as its JSON text
	v := carnetRes(2)
	var row results.Row
	if err := json.Unmarshal(v, &row); err != nil {
		t.Fatal(err)
	}
	if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetRow(0, RowIssued, PackResult(&row, v)) }); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := j.db.QueryRow(`SELECT typeof(res) || ':' || res FROM rows WHERE idx=0`).Scan(&text); err != nil || text != "text:"+string(v) {
		t.Fatalf("packed result stored as %.60q (%v), want its JSON text", text, err)
	}
}

// TestWithdraw: an intended call withdrawn leaves the journal (not
// counted for the day's quota); a call with an outcome stays, on both
// backends.
func TestWithdraw(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20261126-120000-cafe02") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			now := time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)
			j.SetClock(func() time.Time { return now })
			var seqs [3]int64
			if err := j.Tx(ctx, func(tx *Tx) error {
				for i := range seqs {
					var err error
					if seqs[i], err = tx.Intend("POST /v1/carnet", fmt.Sprint("rm-", i)); err != nil {
						return err
					}
				}
				return tx.Finish(seqs[1], CallOK, 200, "")
			}); err != nil {
				t.Fatal(err)
			}
			if err := j.Tx(ctx, func(tx *Tx) error {
				for _, s := range seqs[:2] {
					if err := tx.Withdraw(s); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			calls, err := j.Calls(ctx)
			if err != nil || len(calls) != 2 || calls[0].Seq != seqs[1] || calls[0].State != CallOK || calls[1].Seq != seqs[2] || calls[1].State != CallIntended {
				t.Fatalf("calls after withdrawing %d and %d: %+v %v", seqs[0], seqs[1], calls, err)
			}
			if n, err := j.CallsOn(ctx, "POST /v1/carnet", Day(now)); err != nil || n != 2 {
				t.Fatalf("calls on the day: %d %v", n, err)
			}
		})
	}
}

// backends opens a new journal on each backend for a test's subtests:
// SQLite in a temporary folder, and PostgreSQL (internal/pgtest) as run
// runID.
func backends(ctx context.Context, runID string) map[string]func(t *testing.T) *Journal {
	return map[string]func(t *testing.T) *Journal{
		"sqlite": func(t *testing.T) *Journal {
			j, err := Create(filepath.Join(t.TempDir(), FileName))
			if err != nil {
				t.Fatal(err)
			}
			return j
		},
		"postgres": func(t *testing.T) *Journal {
			j, err := CreatePostgres(ctx, pgtest.DSN(t), runID)
			if err != nil {
				t.Fatal(err)
			}
			return j
		},
	}
}
