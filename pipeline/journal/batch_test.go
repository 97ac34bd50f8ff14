package journal

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/internal/pgtest"
)

// dumpRows is every stored column of the rows and chunks tables, as bytes.
func dumpRows(t *testing.T, j *Journal) string {
	t.Helper()
	var b strings.Builder
	var buf []byte
	for _, q := range []string{`SELECT idx,key,state,info,req,res,attempts,updated FROM rows ORDER BY idx`, `SELECT id,data,0,0,0,0,0,0 FROM chunks ORDER BY id`} {
		rs, err := j.db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var v [8]any
			p := make([]any, 8)
			for i := range p {
				p[i] = &v[i]
			}
			if err := rs.Scan(p...); err != nil {
				t.Fatal(err)
			}
			for _, c := range v {
				buf = appendCol(buf[:0], c)
				b.Write(buf)
			}
			b.WriteByte('\n')
		}
		rs.Close()
	}
	return b.String()
}

// appendCol writes a column's value with its type: bytes in hex, the
// rest as text (fmt's %v of the whole row took half of
// checkBatchWrites' time).
func appendCol(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		b = append(b, "nil"...)
	case []byte:
		b = append(b, "b:"...)
		b = hex.AppendEncode(b, x)
	case string:
		b = append(b, "s:"...)
		b = strconv.AppendQuote(b, x)
	case int64:
		b = append(b, "i:"...)
		b = strconv.AppendInt(b, x, 10)
	default:
		b = fmt.Appendf(b, "%T:%v", x, x)
	}
	return append(b, ' ')
}

// firstDiff is the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n%s\nwant\n%s", i, bl[i], al[i])
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(bl), len(al))
}

// checkBatchWrites: AddRows and SetRows store exactly what AddRow and
// SetRow store for each row in turn (every column of every row and
// chunk, byte for byte): lists of every length around the statements'
// sizes, results and none, rows out of order and set twice in one list.
func checkBatchWrites(t *testing.T, one, many *Journal) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	for _, j := range []*Journal{one, many} {
		j.SetClock(func() time.Time { return clock })
	}
	rng := rand.New(rand.NewPCG(9, 10))
	info := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"index":%d,"key":"pagador%d@exemplo.com.br","payer_name":"Nome %d","txid":"rm%028d"}`, i, i, i, i))
	}
	var rows []Row
	for i := range 1000 {
		r := Row{Index: i, Key: fmt.Sprintf("pagador%d@exemplo.com.br", i), State: RowPending, Info: info(i), Req: json.RawMessage(fmt.Sprintf(`{"cobv":{"valor":"%d.00"}}`, i))}
		if i%37 == 5 {
			r.State, r.Req, r.Res = RowRefused, nil, json.RawMessage(fmt.Sprintf(`{"index":%d,"outcome":"refused"}`, i))
		}
		rows = append(rows, r)
	}
	// inserted in lists of random lengths, some more than a statement's
	for _, n := range []int{1, 2, 127, 128, 129, 300, 0, 255, 58} {
		part := rows[:n]
		rows = rows[n:]
		if err := one.Tx(ctx, func(tx *Tx) error {
			for _, r := range part {
				if err := tx.AddRow(r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := many.Tx(ctx, func(tx *Tx) error { return tx.AddRows(part) }); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := dumpRows(t, one), dumpRows(t, many); a != b {
		t.Fatalf("AddRows stored otherwise than AddRow: %s", firstDiff(a, b))
	}
	for k, n := range []int{1, 2, 99, 100, 101, 250, 1000, 7, 300, 300} {
		first := rng.IntN(1000 - n + 1)
		var set []RowSet
		for i := first; i < first+n; i++ {
			r := RowSet{Idx: i, State: RowIssued, Res: json.RawMessage(fmt.Sprintf(`{"index":%d,"outcome":"issued","pix_copia_e_cola":"000201%032x","location":"loc/%032x","k":%d}`, i, rng.Uint64(), rng.Uint64(), k))}
			if rng.IntN(20) == 0 {
				r.Res, r.State = nil, RowCreated
			}
			set = append(set, r)
		}
		switch k {
		case 8:
			rng.Shuffle(len(set), func(a, b int) { set[a], set[b] = set[b], set[a] })
		case 9:
			set = append(set, set[3]) // set twice: the last one holds
			set[len(set)-1].State, set[len(set)-1].Res = RowDenied, json.RawMessage(`{"again":true}`)
		}
		clock = clock.Add(time.Second)
		if err := one.Tx(ctx, func(tx *Tx) error {
			for _, r := range set {
				if err := tx.SetRow(r.Idx, r.State, r.Res); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := many.Tx(ctx, func(tx *Tx) error { return tx.SetRows(set) }); err != nil {
			t.Fatal(err)
		}
		if a, b := dumpRows(t, one), dumpRows(t, many); a != b {
			t.Fatalf("list %d: SetRows stored otherwise than SetRow: %s", k, firstDiff(a, b))
		}
	}
	got, err := many.Rows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1000 || got[999].Key != "pagador999@exemplo.com.br" || string(got[40].Info) != string(info(40)) {
		t.Fatalf("rows read back: %d, %+v", len(got), got[40])
	}
}

func TestBatchWrites(t *testing.T) {
	dir := t.TempDir()
	one, err := Create(filepath.Join(dir, "one.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	many, err := Create(filepath.Join(dir, "many.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer many.Close()
	checkBatchWrites(t, one, many)
}

func TestPostgresBatchWrites(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	one, err := CreatePostgres(ctx, dsn, "20261126-120000-batch1")
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	many, err := CreatePostgres(ctx, dsn, "20261126-120000-batch2")
	if err != nil {
		t.Fatal(err)
	}
	defer many.Close()
	checkBatchWrites(t, one, many)
}
