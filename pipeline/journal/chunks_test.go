package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
)

// TestChunksCompressedAside: a transaction adding more chunks than may be
// pending at once, and journaling results of rows whose chunk is still
// being compressed or being filled, reads back every row as written, on
// both backends; one that fails with chunks pending leaves none of them
// behind, and the next one goes on from the same chunk id.
func TestChunksCompressedAside(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20270101-000000-c0ffee") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			info := func(i int) string {
				return fmt.Sprintf(`{"index":%d,"key":"k%d@exemplo.com.br","payer_name":"Pagador %d","amount_cents":%d}`, i, i, i, 500+i)
			}
			req := func(i int) string {
				return fmt.Sprintf(`{"cobv":{"txid":"tx%05dabcdefghijklmnopqrstu","valor":"%d.00"}}`, i, i)
			}
			res := func(i int) string { return fmt.Sprintf(`{"index":%d,"outcome":"issued","location":"loc/%d"}`, i, i*31) }
			const n = (maxPendChunks+3)*chunkRows + 17
			set := map[int]bool{3: true, chunkRows + 1: true, 5*chunkRows + 2: true, n - 1: true}
			err := j.Tx(ctx, func(tx *Tx) error {
				for i := 0; i < n; i++ {
					if err := tx.AddRow(Row{Index: i, Key: fmt.Sprintf("k%d@exemplo.com.br", i), State: RowPending, Info: json.RawMessage(info(i)), Req: json.RawMessage(req(i))}); err != nil {
						return err
					}
					// a result in the same transaction: of an early row
					// (its chunk pending or inserted) and of the last
					// (its chunk being filled)
					if i == 6*chunkRows || i == n-1 {
						for k := range set {
							if k <= i {
								if err := tx.SetRow(k, RowIssued, json.RawMessage(res(k))); err != nil {
									return err
								}
							}
						}
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			failed := errors.New("stop")
			if err := j.Tx(ctx, func(tx *Tx) error {
				for i := n; i < n+3*chunkRows; i++ {
					if err := tx.AddRow(Row{Index: i, Key: "x", State: RowPending, Info: json.RawMessage(`{"lost":true}`)}); err != nil {
						return err
					}
				}
				return failed
			}); !errors.Is(err, failed) {
				t.Fatalf("rolled back transaction: %v", err)
			}
			if err := j.Tx(ctx, func(tx *Tx) error {
				return tx.AddRow(Row{Index: n, Key: "last", State: RowPending, Info: json.RawMessage(info(n)), Req: json.RawMessage(req(n))})
			}); err != nil {
				t.Fatal(err)
			}
			rows, err := j.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n+1 {
				t.Fatalf("%d rows, want %d", len(rows), n+1)
			}
			for i, r := range rows {
				key := fmt.Sprintf("k%d@exemplo.com.br", i)
				if i == n {
					key = "last"
				}
				wantRes, wantState := "", RowPending
				if set[i] {
					wantRes, wantState = res(i), RowIssued
				}
				if r.Index != i || r.Key != key || string(r.Info) != info(i) || string(r.Req) != req(i) || string(r.Res) != wantRes || r.State != wantState {
					t.Fatalf("row %d: %+v (info %s, req %s, res %s)", i, r, r.Info, r.Req, r.Res)
				}
			}
		})
	}
}
