package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// TestReadPageDecode: pages read in turn (ReadPage) and decoded on
// goroutines of their own, at once, give every row once, in order, as
// Rows decodes it, on both backends; some of the chunks cached (read
// before), the others not; a row left NULL stays nil.
func TestReadPageDecode(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20261126-140000-abc123") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			const n = 5*chunkRows + 29
			err := j.Tx(ctx, func(tx *Tx) error {
				for i := range n {
					r := Row{Index: i, Key: fmt.Sprintf("K%05d", i), State: RowPending,
						Info: json.RawMessage(fmt.Sprintf(`{"index":%d,"key":"K%05d","payer_name":"Pagador %d"}`, i, i, i)),
						Req:  json.RawMessage(fmt.Sprintf(`{"cobv":{"txid":"t%d","valor":{"original":"%d.00"}}}`, i, 10+i))}
					if i%9 == 4 {
						r.State, r.Req = RowRefused, nil
					}
					if err := tx.AddRow(r); err != nil {
						return err
					}
				}
				for i := 0; i < n; i += 2 {
					if i%9 != 4 {
						if err := tx.SetRow(i, RowIssued, json.RawMessage(fmt.Sprintf(`{"index":%d,"key":"K%05d","outcome":"issued","link":"https://x/%d"}`, i, i, i))); err != nil {
							return err
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// a fresh journal handle: nothing cached; then chunks 2 and 3 cached
			j2 := j
			if name == "sqlite" {
				j.Close()
				if j2, err = Open(j.path); err != nil {
					t.Fatal(err)
				}
				defer j2.Close()
			}
			if _, err := j2.RowsPage(ctx, Page{After: 2*chunkRows - 1, Before: 3*chunkRows + 1}); err != nil {
				t.Fatal(err)
			}
			var datas []*PageData
			for p := (Page{After: -1, Limit: 100}); ; {
				d, err := j2.ReadPage(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if d.Len() == 0 {
					if d.Last() != -1 {
						t.Fatalf("empty page: last %d", d.Last())
					}
					break
				}
				datas = append(datas, d)
				p.After = d.Last()
			}
			pages := make([][]Row, len(datas))
			errs := make([]error, len(datas))
			var wg sync.WaitGroup
			for k, d := range datas {
				wg.Go(func() { pages[k], errs[k] = d.Decode() })
			}
			wg.Wait()
			i := 0
			for k := range pages {
				if errs[k] != nil {
					t.Fatal(errs[k])
				}
				for _, r := range pages[k] {
					wantInfo := fmt.Sprintf(`{"index":%d,"key":"K%05d","payer_name":"Pagador %d"}`, i, i, i)
					wantReq := fmt.Sprintf(`{"cobv":{"txid":"t%d","valor":{"original":"%d.00"}}}`, i, 10+i)
					wantRes := fmt.Sprintf(`{"index":%d,"key":"K%05d","outcome":"issued","link":"https://x/%d"}`, i, i, i)
					state := RowPending
					switch {
					case i%9 == 4:
						state, wantReq, wantRes = RowRefused, "", ""
					case i%2 == 0:
						state = RowIssued
					default:
						wantRes = ""
					}
					if r.Index != i || r.Key != fmt.Sprintf("K%05d", i) || r.State != state || string(r.Info) != wantInfo ||
						string(r.Req) != wantReq || (r.Req == nil) != (wantReq == "") || (r.Res == nil) != (wantRes == "") {
						t.Fatalf("row %d: %d %q %s info %s req %s res %s", i, r.Index, r.Key, r.State, r.Info, r.Req, r.Res)
					}
					if wantRes != "" {
						var a, b any
						if json.Unmarshal(r.Res, &a) != nil || json.Unmarshal([]byte(wantRes), &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
							t.Fatalf("row %d: result %s, want %s", i, r.Res, wantRes)
						}
					}
					i++
				}
			}
			if i != n {
				t.Fatalf("%d rows, want %d", i, n)
			}
			// read once (chunks not cached, their bytes reused once
			// released): the same rows, page after page
			i = 0
			for p := (Page{After: -1, Limit: 100, Once: true}); ; {
				d, err := j2.ReadPage(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if d.Len() == 0 {
					break
				}
				p.After = d.Last()
				rows, err := d.Decode()
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					w := pages[i/100][i%100]
					if r.Index != w.Index || r.Key != w.Key || r.State != w.State || string(r.Info) != string(w.Info) || string(r.Req) != string(w.Req) || string(r.Res) != string(w.Res) {
						t.Fatalf("row %d read once: %+v, want %+v", i, r, w)
					}
					i++
				}
				d.Release()
			}
			if i != n {
				t.Fatalf("%d rows read once, want %d", i, n)
			}
		})
	}
}

// TestStateCounts: the rows by state, the states no row is in left out,
// a state the run does not know counted too, on both backends.
func TestStateCounts(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20261126-150000-abc123") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			check := func(want map[string]int) {
				t.Helper()
				got, err := j.StateCounts(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("counts %v, want %v", got, want)
				}
			}
			check(map[string]int{})
			err := j.Tx(ctx, func(tx *Tx) error {
				for i := range 11 {
					r := Row{Index: i, Key: fmt.Sprint(i), State: RowPending, Info: json.RawMessage(`{}`), Req: json.RawMessage(`{}`)}
					if i >= 9 {
						r.State, r.Req = RowRefused, nil
					}
					if err := tx.AddRow(r); err != nil {
						return err
					}
				}
				for i := range 3 {
					if err := tx.SetRow(i, RowIssued, json.RawMessage(`{"outcome":"issued"}`)); err != nil {
						return err
					}
				}
				return tx.SetRow(3, RowSending, nil)
			})
			if err != nil {
				t.Fatal(err)
			}
			check(map[string]int{RowIssued: 3, RowPending: 5, RowRefused: 2, RowSending: 1})
			if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetRow(4, "estranho", nil) }); err != nil {
				t.Fatal(err)
			}
			check(map[string]int{RowIssued: 3, RowPending: 4, RowRefused: 2, RowSending: 1, "estranho": 1})
		})
	}
}
