package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"remessa/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The Postgres journal keeps what the SQLite one keeps, through the same
// API: rows (compressed), batches, splits, calls with their seq, meta;
// reopened it reads the same; two journals on one run (two workers)
// write different rows at once and each reads the other's results.
func TestPostgresJournal(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	j, err := CreatePostgres(ctx, dsn, "20261124-120000-abc123")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := CreatePostgres(ctx, dsn, "20261124-120000-abc123"); err == nil || !strings.Contains(err.Error(), "já existe") {
		t.Fatalf("a second CreatePostgres of the same run: %v, want 'já existe'", err)
	}
	const n = 300
	err = j.Tx(ctx, func(tx *Tx) error {
		if err := tx.SetMeta("meta", `{"run_id":"20261124-120000-abc123","nome":"Mensalidade \\ março"}`); err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			info := fmt.Sprintf(`{"index":%d,"key":"K%03d","payer_name":"Pagador %d"}`, i, i, i)
			if err := tx.AddRow(Row{Index: i, Key: fmt.Sprintf("K%03d", i), State: RowPending, Info: json.RawMessage(info),
				Req: json.RawMessage(fmt.Sprintf(`{"carnet":{"value":%d}}`, 1000+i))}); err != nil {
				return err
			}
		}
		if err := tx.AddSplit(Split{Key: "s1", ID: "cfg1", Body: json.RawMessage(`{"a":1}`), State: "pending"}); err != nil {
			return err
		}
		return tx.AddBatch(Batch{Num: 1, ID: "100001", First: 0, End: n, State: BatchPending})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.ShareWriters(ctx); err != nil {
		t.Fatal(err)
	}
	if c := j.codec.Load(); c == nil || len(c.dicts) != maxDicts {
		t.Fatalf("dictionaries after ShareWriters: %v, want %d", c, maxDicts)
	}
	// a second writer on the same run, as another worker would be
	j2, err := OpenPostgres(ctx, dsn, "20261124-120000-abc123")
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	var wg sync.WaitGroup
	seqs := make([][]int64, 2)
	errs := make([]error, 2)
	for w, jj := range []*Journal{j, j2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 2 {
				errs[w] = jj.Tx(ctx, func(tx *Tx) error {
					seq, err := tx.Intend("POST /v1/carnet", fmt.Sprintf("rm-K%03d", i))
					if err != nil {
						return err
					}
					seqs[w] = append(seqs[w], seq)
					if err := tx.SetRowAttempt(i, RowSending); err != nil {
						return err
					}
					if err := tx.Finish(seq, CallOK, 200, ""); err != nil {
						return err
					}
					// an answer no dictionary knows (it would add one in a lone journal)
					res := fmt.Sprintf(`{"outcome":"issued","carnet_id":%d,"link":"https://x/%s"}`, 9000+i, strings.Repeat(fmt.Sprint(i*7919), 30))
					return tx.SetRow(i, RowIssued, json.RawMessage(res))
				})
				if errs[w] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for w, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", w, err)
		}
	}
	seen := map[int64]bool{}
	for _, ss := range seqs {
		for _, s := range ss {
			if s <= 0 || seen[s] {
				t.Fatalf("call seq %d repeated or not positive", s)
			}
			seen[s] = true
		}
	}
	if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetBatch(1, BatchDone) }); err != nil {
		t.Fatal(err)
	}
	if err := j2.Tx(ctx, func(tx *Tx) error { return tx.SetSplit("s1", "done") }); err != nil {
		t.Fatal(err)
	}
	j3, err := OpenPostgres(ctx, dsn, "20261124-120000-abc123")
	if err != nil {
		t.Fatal(err)
	}
	defer j3.Close()
	for _, jj := range []*Journal{j, j3} {
		rows, err := jj.Rows(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != n {
			t.Fatalf("%d rows, want %d", len(rows), n)
		}
		for i, r := range rows {
			want := fmt.Sprintf(`"carnet_id":%d`, 9000+i)
			if r.Index != i || r.Key != fmt.Sprintf("K%03d", i) || r.State != RowIssued || r.Attempts != 1 || !strings.Contains(string(r.Res), want) ||
				string(r.Req) != fmt.Sprintf(`{"carnet":{"value":%d}}`, 1000+i) {
				t.Fatalf("row %d: %+v (res %s), want issued with %s", i, r, r.Res, want)
			}
		}
	}
	m, err := j3.Meta(ctx)
	if err != nil || !strings.Contains(m["meta"], `Mensalidade \\ março`) || len(m) != 1 {
		t.Fatalf("meta %v (%v)", m, err)
	}
	bs, err := j3.Batches(ctx)
	if err != nil || len(bs) != 1 || bs[0].State != BatchDone || bs[0].ID != "100001" {
		t.Fatalf("batches %+v (%v)", bs, err)
	}
	sp, err := j3.Splits(ctx)
	if err != nil || len(sp) != 1 || sp[0].State != "done" || string(sp[0].Body) != `{"a":1}` {
		t.Fatalf("splits %+v (%v)", sp, err)
	}
	cc, err := j3.CallCounts(ctx)
	if err != nil || cc["POST /v1/carnet"][CallOK] != n {
		t.Fatalf("call counts %v (%v), want %d ok", cc, err, n)
	}
	day, err := j3.CallsOn(ctx, "POST /v1/carnet", Day(j.now()))
	if err != nil || day != n {
		t.Fatalf("calls today %d (%v), want %d", day, err, n)
	}
	if _, err := OpenPostgres(ctx, dsn, "20261124-120000-ffffff"); err == nil {
		t.Fatal("a run that does not exist opened")
	}
	if _, err := OpenPostgres(ctx, dsn, "x'; DROP"); err == nil {
		t.Fatal("a run id with quotes accepted")
	}
}
