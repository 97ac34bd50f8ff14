package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// TestRowsPage: a run reads its rows a window at a time (RowsPage, by
// index and state), counts them by state (StateCounts) and finds where
// its cobv batches lie among them (BatchRows), the same on SQLite and on
// Postgres, compressed or not: every row once, in order, decoded as Rows
// decodes it.
func TestRowsPage(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20261124-130000-def456") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			const n = 3*chunkRows + 17
			refused := func(i int) bool { return i%10 == 3 }
			var bs []Batch
			err := j.Tx(ctx, func(tx *Tx) error {
				ord := 0
				for i := 0; i < n; i++ {
					r := Row{Index: i, Key: fmt.Sprintf("K%04d", i), State: RowPending,
						Info: json.RawMessage(fmt.Sprintf(`{"index":%d,"key":"K%04d"}`, i, i)), Req: json.RawMessage(fmt.Sprintf(`{"cobv":{"txid":"t%d"}}`, i))}
					if refused(i) {
						r.State, r.Req = RowRefused, nil
					} else {
						ord++
					}
					if err := tx.AddRow(r); err != nil {
						return err
					}
				}
				for first := 0; first < ord; first += 100 {
					bs = append(bs, Batch{Num: len(bs) + 1, ID: fmt.Sprint(100000 + len(bs) + 1), First: first, End: min(first+100, ord), State: BatchPending})
					if err := tx.AddBatch(bs[len(bs)-1]); err != nil {
						return err
					}
				}
				// results for every third accepted row
				for i := 0; i < n; i += 3 {
					if !refused(i) {
						if err := tx.SetRow(i, RowIssued, json.RawMessage(fmt.Sprintf(`{"index":%d,"outcome":"issued","link":"https://x/%d"}`, i, i))); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			all, err := j.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// every row by pages of 50: the same as Rows
			var paged []Row
			for p := (Page{After: -1, Limit: 50}); ; {
				page, err := j.RowsPage(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 {
					break
				}
				if len(page) > 50 {
					t.Fatalf("page of %d rows", len(page))
				}
				paged = append(paged, page...)
				p.After = page[len(page)-1].Index
			}
			if len(paged) != n || len(all) != n {
				t.Fatalf("%d rows paged, %d read, want %d", len(paged), len(all), n)
			}
			for i := range all {
				a, b := all[i], paged[i]
				if a.Index != b.Index || a.Key != b.Key || a.State != b.State || string(a.Info) != string(b.Info) || string(a.Req) != string(b.Req) || string(a.Res) != string(b.Res) {
					t.Fatalf("row %d: paged %+v, read %+v", i, b, a)
				}
			}
			// by state, within bounds
			pend, err := j.RowsPage(ctx, Page{After: 99, Before: 200, Not: []string{RowRefused, RowIssued}})
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			for i := 100; i < 200; i++ {
				if !refused(i) && i%3 != 0 {
					want++
				}
			}
			if len(pend) != want || pend[0].Index < 100 || pend[len(pend)-1].Index >= 200 {
				t.Fatalf("pending rows 100..199: %d (first %d), want %d", len(pend), pend[0].Index, want)
			}
			for _, r := range pend {
				if r.State != RowPending {
					t.Fatalf("row %d is %s", r.Index, r.State)
				}
			}
			only, err := j.RowsPage(ctx, Page{After: -1, Only: []string{RowRefused}, Limit: 5})
			if err != nil || len(only) != 5 || only[0].Index != 3 || only[4].Index != 43 {
				t.Fatalf("refused rows: %v %v", only, err)
			}
			counts, err := j.StateCounts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if sum := counts[RowPending] + counts[RowIssued] + counts[RowRefused]; sum != n || counts[RowRefused] != (n+6)/10 {
				t.Fatalf("counts %v", counts)
			}
			// each batch's accepted rows lie in its span, in order
			spans, err := j.BatchRows(ctx, bs)
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for k, b := range bs {
				rows, err := j.RowsPage(ctx, Page{After: spans[k][0] - 1, Before: spans[k][1], Not: []string{RowRefused}})
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != b.End-b.First {
					t.Fatalf("batch %d: %d rows in %v, want %d", b.Num, len(rows), spans[k], b.End-b.First)
				}
				for _, r := range rows {
					for refused(next) {
						next++
					}
					if r.Index != next {
						t.Fatalf("batch %d: row %d, want %d", b.Num, r.Index, next)
					}
					next++
				}
			}
			if _, err := j.BatchRows(ctx, append(bs, Batch{Num: 99, First: 10_000, End: 10_100})); err == nil {
				t.Fatal("a batch past the rows was given a span")
			}
		})
	}
}
