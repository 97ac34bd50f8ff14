package journal

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
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
