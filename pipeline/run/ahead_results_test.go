package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
)

// aheadJournal journals n cobv rows, in states by i%7, with results for
// the issued and denied ones, in one transaction (the rows' chunks
// straddle the pages readAhead reads).
func aheadJournal(t *testing.T, n int) *journal.Journal {
	t.Helper()
	j, err := journal.Create(filepath.Join(t.TempDir(), journal.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	err = j.Tx(context.Background(), func(tx *journal.Tx) error {
		for i := range n {
			info, _ := json.Marshal(results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("p%05d@example.com", i),
				PayerName: fmt.Sprintf("Pagador %d", i), PayerDoc: fmt.Sprintf("%011d", 10000000000+i), AmountCents: int64(1000 + i), DueDate: "2026-12-10"})
			r := journal.Row{Index: i, Key: fmt.Sprintf("p%05d@example.com", i), State: journal.RowPending, Info: info,
				Req: json.RawMessage(fmt.Sprintf(`{"cobv":{"valor":{"original":"%d.%02d"}}}`, (1000+i)/100, (1000+i)%100))}
			if i%7 == 6 {
				r.State, r.Req = journal.RowRefused, nil
			}
			if err := tx.AddRow(r); err != nil {
				return err
			}
		}
		for i := range n {
			switch i % 7 {
			case 0, 1, 2:
				res, _ := json.Marshal(results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("p%05d@example.com", i), AmountCents: int64(1000 + i),
					Txid: fmt.Sprintf("tx%030d", i), Link: fmt.Sprintf("https://pix.example/%d", i), Location: fmt.Sprintf("pix.example/v2/%x", i*7919)})
				if err := tx.SetRow(i, journal.RowIssued, res); err != nil {
					return err
				}
			case 3:
				res, _ := json.Marshal(results.Row{Index: i, Key: fmt.Sprintf("p%05d@example.com", i), AmountCents: int64(1000 + i),
					Problems: []results.Problem{{Code: "recusada", Message: fmt.Sprintf("chave %d", i)}}})
				if err := tx.SetRow(i, journal.RowDenied, res); err != nil {
					return err
				}
			case 4:
				if err := tx.SetRow(i, journal.RowAmbiguous, nil); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// TestEachResultAhead: the rows eachResult gives (read ahead, decoded on
// several goroutines) are every row once, in input order, each the row
// the test journaled with the outcome of its state; the same rows as
// reading the journal a page at a time in turn gives.
func TestEachResultAhead(t *testing.T) {
	ctx := context.Background()
	n := 2*aheadRows + 3*128 + 5
	j := aheadJournal(t, n)
	e := &executor{j: j}
	var got []results.Row
	tot, denied, err := e.eachResult(ctx, func(r *results.Row) error { got = append(got, *r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || tot.In.Rows != n {
		t.Fatalf("%d rows (totals %d), want %d", len(got), tot.In.Rows, n)
	}
	want := map[int]results.Outcome{0: results.Issued, 1: results.Issued, 2: results.Issued, 3: results.Denied,
		4: results.Ambiguous, 5: results.Pending, 6: results.Refused}
	nDenied := 0
	for i, r := range got {
		if r.Index != i || r.Key != fmt.Sprintf("p%05d@example.com", i) || r.AmountCents != int64(1000+i) || r.Outcome != want[i%7] {
			t.Fatalf("row %d: index %d key %q amount %d outcome %s, want outcome %s", i, r.Index, r.Key, r.AmountCents, r.Outcome, want[i%7])
		}
		switch i % 7 {
		case 0, 1, 2:
			if r.Link != fmt.Sprintf("https://pix.example/%d", i) || r.Txid != fmt.Sprintf("tx%030d", i) {
				t.Fatalf("row %d: link %q txid %q", i, r.Link, r.Txid)
			}
		case 3:
			nDenied++
			if len(r.Problems) != 1 || r.Problems[0].Message != fmt.Sprintf("chave %d", i) {
				t.Fatalf("row %d: problems %+v", i, r.Problems)
			}
		case 5:
			if r.PayerName != fmt.Sprintf("Pagador %d", i) || r.Link != "" {
				t.Fatalf("row %d: payer %q link %q", i, r.PayerName, r.Link)
			}
		}
	}
	if len(denied) != nDenied {
		t.Fatalf("%d denied identities, want %d", len(denied), nDenied)
	}
	// the reference: a page at a time, in turn
	var ref []results.Row
	err = e.eachPage(ctx, journal.Page{After: -1}, decodeResult, func(rows []*jrow) (bool, error) {
		for _, jr := range rows {
			ref = append(ref, e.resultRow(jr))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ref) {
		for i := range ref {
			if !reflect.DeepEqual(got[i], ref[i]) {
				t.Fatalf("row %d read ahead:\n%+v\na page at a time:\n%+v", i, got[i], ref[i])
			}
		}
		t.Fatal("rows differ")
	}
}

// TestEachResultAheadStops: when a row cannot be written, eachResult
// returns that error, and nothing it started reads the journal after it
// returned (the journal is closed then; -race).
func TestEachResultAheadStops(t *testing.T) {
	ctx := context.Background()
	j := aheadJournal(t, 3*aheadRows+10)
	e := &executor{j: j}
	for _, at := range []int{0, 5, aheadRows - 1, aheadRows, 2*aheadRows + 7} {
		boom := fmt.Errorf("disco cheio na linha %d", at)
		k := 0
		_, _, err := e.eachResult(ctx, func(r *results.Row) error {
			if k == at {
				return boom
			}
			k++
			return nil
		})
		if !errors.Is(err, boom) || k != at {
			t.Fatalf("stop at %d: %d rows, err %v", at, k, err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
