package journal

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"remessa/pipeline/results"
)

// Two Pix codes as the sandbox wrote them (its own CRC16), from a carnet
// run's journal.
const (
	pixSample1 = "00020101021226770014br.gov.bcb.pix2555127.0.0.1:8080/v2/cobv/2ccc97fd2de72ff88ef2f5d89c12752e5204000053039865802BR5920Conta Sandbox 1 LTDA6009SAO PAULO62070503***63048151"
	pixSample2 = "00020101021226770014br.gov.bcb.pix2555127.0.0.1:8080/v2/cobv/3a6796e9d7f28c96375da63db16008c25204000053039865802BR5920Conta Sandbox 1 LTDA6009SAO PAULO62070503***6304A93D"
)

func TestPixCRC(t *testing.T) {
	for _, s := range []string{pixSample1, pixSample2} {
		if !pixCRCOK(s) {
			t.Errorf("CRC of %s: got %s", s, pixCRC(s[:len(s)-4]))
		}
	}
	if pixCRCOK(pixSample1[:len(pixSample1)-1] + "2") {
		t.Error("a wrong CRC passed")
	}
}

// carnetRes is the stored result of carnet i (12 parcels, random tokens
// and txids), as the run stores it (results.Row, barcodes left out).
func carnetRes(i int) []byte {
	tok := func(k int) string {
		h := sha256.Sum256(fmt.Append(nil, i, "/", k))
		return hex.EncodeToString(h[:16])
	}
	row := results.Row{Index: i, SourceRow: i + 2, Key: fmt.Sprintf("K%04d", i), PayerName: fmt.Sprintf("Pagador Teste %d", i),
		PayerDoc: "10000800058", Outcome: results.Issued, AmountCents: 12000, DueDate: "2026-12-14", CustomID: fmt.Sprintf("rm-20261124-140158-30836b-K%04d", i),
		CarnetID: int64(100009 + i), Link: "http://127.0.0.1:8080/v1/documents/carnet/" + tok(0)[:30] + "00/link",
		PDF: "http://127.0.0.1:8080/v1/documents/carnet/" + tok(0)[:30] + "00/pdf", Cover: "http://127.0.0.1:8080/v1/documents/carnet/" + tok(0)[:30] + "00/cover"}
	for p := 1; p <= 12; p++ {
		id := int64(1000108 + 12*i + p - 1)
		pix := "00020101021226770014br.gov.bcb.pix2555127.0.0.1:8080/v2/cobv/" + tok(p) + "5204000053039865802BR5920Conta Sandbox 1 LTDA6009SAO PAULO62070503***6304"
		pix += pixCRC(pix)
		doc := fmt.Sprintf("http://127.0.0.1:8080/v1/documents/charge/%s%02d", tok(0)[:30], p)
		row.ChargeIDs = append(row.ChargeIDs, id)
		row.Parcels = append(row.Parcels, results.Parcel{Number: p, ChargeID: id, DueDate: fmt.Sprintf("%04d-%02d-14", 2026+(p+10)/12, (p+10)%12+1),
			ValueCents: 1000, Status: "waiting", TypedLine: fmt.Sprintf("36490.00001 00000.000000 00010.00%04d %d %04d0000001000", 1089+8*p, p%10, 1660+31*p),
			PixCopiaECola: pix, Link: doc + "/link", PDF: doc + "/pdf"})
	}
	b, _ := json.Marshal(&row)
	return b
}

// TestPackResultRoundTrip: results with parcels come back byte for byte,
// and take much less room packed; what is not a result with parcels is
// left as it is.
func TestPackResultRoundTrip(t *testing.T) {
	v := carnetRes(7)
	p := packResult(v)
	if p[0] != fmtParcels {
		t.Fatalf("not packed: %.40q", p)
	}
	if len(p) > len(v)/3 {
		t.Errorf("packed %d bytes of %d, want at most a third", len(p), len(v))
	}
	back, err := unpackResult(p)
	if err != nil || !bytes.Equal(back, v) {
		t.Fatalf("back %v:\n%s\nwant\n%s", err, back, v)
	}
	// a parcel with a split, a date that is not a date, a Pix code with a
	// wrong CRC: still the same bytes
	var row results.Row
	if err := json.Unmarshal(v, &row); err != nil {
		t.Fatal(err)
	}
	row.Parcels[3].Split = []results.Share{{Recipient: "abc", DueMonth: "2027-03", AmountCents: 250}}
	row.Parcels[5].DueDate = "2027-02-30"
	row.Parcels[6].PixCopiaECola = pixSample1[:len(pixSample1)-4] + "0000"
	row.ChargeIDs[2] = 5
	w, _ := json.Marshal(&row)
	if back, err := unpackResult(packResult(w)); err != nil || !bytes.Equal(back, w) {
		t.Fatalf("back %v:\n%s\nwant\n%s", err, back, w)
	}
	for _, s := range []string{`{"y":2}`, `{"index":1,"outcome":"denied","problems":[{"code":"x","message":"m"}]}`, `[1,2]`, `{"parcels":[` + string(bytes.Repeat([]byte(" "), 300)) + `]}`} {
		if got := packResult([]byte(s)); string(got) != s {
			t.Errorf("%q packed as %q", s, got)
		}
	}
}

// TestPackResultOfRow: PackResult, given the row a result is the JSON of,
// packs it as packResult does from the text; a row whose text is not v's
// (another row, v changed after) leaves v as it is, and so does a result
// without parcels.
func TestPackResultOfRow(t *testing.T) {
	for i := range 5 {
		v := carnetRes(i)
		var row results.Row
		if err := json.Unmarshal(v, &row); err != nil {
			t.Fatal(err)
		}
		p := PackResult(&row, v)
		if p[0] != fmtParcels || !bytes.Equal(p, packResult(v)) {
			t.Fatalf("carnet %d: PackResult %.40q, packResult %.40q", i, p, packResult(v))
		}
		if back, err := unpackResult(p); err != nil || !bytes.Equal(back, v) {
			t.Fatalf("carnet %d back %v:\n%s\nwant\n%s", i, err, back, v)
		}
		other := row
		other.Parcels = append([]results.Parcel(nil), row.Parcels...)
		other.Parcels[4].TypedLine = "x"
		if got := PackResult(&other, v); !bytes.Equal(got, v) {
			t.Fatalf("carnet %d packed from a row that is not its text: %.40q", i, got)
		}
	}
	denied := results.Row{Index: 1, Outcome: results.Denied, Problems: []results.Problem{{Code: "x", Message: strings.Repeat("m", 300)}}}
	v, _ := json.Marshal(&denied)
	if got := PackResult(&denied, v); !bytes.Equal(got, v) {
		t.Fatalf("a result without parcels packed as %.40q", got)
	}
	if got := PackResult(nil, v); !bytes.Equal(got, v) {
		t.Fatalf("no row: %.40q", got)
	}
}

// TestJournalParcelResults stores carnet results in a journal on both
// backends and reads them back as they were.
func TestJournalParcelResults(t *testing.T) {
	ctx := context.Background()
	for name, open := range backends(ctx, "20261124-140000-cafe01") {
		t.Run(name, func(t *testing.T) {
			j := open(t)
			defer j.Close()
			const n = 20
			if err := j.Tx(ctx, func(tx *Tx) error {
				for i := range n {
					if err := tx.AddRow(Row{Index: i, Key: fmt.Sprint("K", i), State: RowPending, Info: json.RawMessage(fmt.Sprintf(`{"index":%d}`, i))}); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				res := carnetRes(i)
				if i%2 == 1 { // packed outside the transaction, as a run does
					var row results.Row
					if err := json.Unmarshal(res, &row); err != nil {
						t.Fatal(err)
					}
					res = PackResult(&row, res)
				}
				if err := j.Tx(ctx, func(tx *Tx) error { return tx.SetRow(i, RowIssued, res) }); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := j.Rows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != n {
				t.Fatalf("%d rows", len(rows))
			}
			for i, r := range rows {
				if want := carnetRes(i); !bytes.Equal(r.Res, want) {
					t.Fatalf("row %d:\n%s\nwant\n%s", i, r.Res, want)
				}
			}
		})
	}
}

// FuzzPackResult: whatever the parcels' texts, a packed result comes back
// the same; unpacking anything never fails but with errCorrupt.
func FuzzPackResult(f *testing.F) {
	f.Add("2026-12-14", "waiting", "36490.00001 00000.000000 00010.001089 3 16600000001000", pixSample1, pixSample2, "http://h/x/0123456789abcdef0123456789abcdef01/link", int64(1000108), int64(-3))
	f.Add("", "", "", "", "", "", int64(0), int64(0))
	f.Add("1969-12-31", "é", "x", "6304", "63040000", "ffffffffffffffffffffffffffffffffff", int64(1)<<62, int64(-1)<<62)
	f.Fuzz(func(t *testing.T, due, status, typed, pix1, pix2, link string, id, value int64) {
		// a long payer name: long enough to be packed
		row := results.Row{Index: 1, Key: "k", PayerName: strings.Repeat("Pagador ", 40), Outcome: results.Issued, ChargeIDs: []int64{id, id + 1}}
		row.Parcels = []results.Parcel{
			{Number: 1, ChargeID: id, DueDate: due, ValueCents: value, Status: status, TypedLine: typed, PixCopiaECola: pix1, Link: link, PDF: link + "/pdf"},
			{Number: 2, ChargeID: id + 1, DueDate: "2027-01-14", ValueCents: -value, Status: status, TypedLine: typed + "1", PixCopiaECola: pix2, Link: link[:len(link)/2], Barcode: typed},
		}
		v, err := json.Marshal(&row)
		if err != nil {
			return
		}
		p := packResult(v)
		back, err := unpackResult(p)
		if err != nil || !bytes.Equal(back, v) {
			t.Fatalf("%v:\n%q\nwant\n%q", err, back, v)
		}
		if !bytes.Equal(p, v) {
			for k := range p {
				if _, err := unpackResult(p[:k]); err == nil && k > 0 {
					t.Fatalf("unpacked a value cut to %d of %d bytes", k, len(p))
				}
			}
		}
	})
}

// FuzzUnpackResult: arbitrary bytes after fmtParcels never panic.
func FuzzUnpackResult(f *testing.F) {
	f.Add(packResult(carnetRes(1))[1:])
	f.Add([]byte{0, 2, '{', '}', 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = unpackResult(append([]byte{fmtParcels}, b...))
	})
}

// BenchmarkPackResult times packing a carnet's result (with its check)
// and unpacking it.
func BenchmarkPackResult(b *testing.B) {
	v := carnetRes(3)
	for b.Loop() {
		if _, err := unpackResult(packResult(v)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnpackResultCorrupt changes and cuts a packed result at random
// (seeded) many times: unpacking never panics, a cut value never unpacks,
// and nothing decodes to more than maxPacked bytes of text.
func TestUnpackResultCorrupt(t *testing.T) {
	seed := packResult(carnetRes(1))
	if seed[0] != fmtParcels {
		t.Fatal("not packed")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		b := append([]byte(nil), seed...)
		for range 1 + r.IntN(8) {
			b[1+r.IntN(len(b)-1)] = byte(r.IntN(256))
		}
		cut := i%3 == 0
		if cut {
			b = append([]byte(nil), seed[:1+r.IntN(len(seed)-1)]...)
		}
		out, err := unpackResult(b)
		if cut && err == nil {
			t.Fatalf("a value cut to %d of %d bytes unpacked", len(b), len(seed))
		}
		if len(out) > 2*maxPacked {
			t.Fatalf("%d bytes unpacked", len(out))
		}
	}
}
