package control_test

import (
	"bytes"
	"compress/zlib"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"remessa/api"
	"remessa/sandbox/control"
)

// A carnet's conditional discount has one until_date for every parcel
// (docs/discounts.md): parcels paid on or before it get the discount,
// whichever parcel they are; parcels paid after it do not, however early
// against their own due date. Through the whole core on loopback; amounts
// by hand: parcel R$ 980,00, 5 % = R$ 49,00 → R$ 931,00.
func TestCarnetDiscountWindowPerParcel(t *testing.T) {
	e := newDueEnv(t) // clock on Monday 2026-03-02
	cn, err := e.c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Mensalidade", Value: 98000, Amount: 1}},
		Customer: customer(), ExpireAt: "2026-03-10", Repeats: 4, Configurations: &api.CarnetConfigurations{Fine: 200, Interest: 33},
		ConditionalDiscount: &api.ConditionalDiscount{Type: "percentage", Value: 500, UntilDate: "2026-03-05"}})
	if err != nil {
		t.Fatal(err)
	}
	// Every parcel carries the carnet's discount, with the same date.
	for i, p := range cn.Charges {
		ch, err := e.c.GetCharge(ctx, p.ChargeID)
		if err != nil {
			t.Fatal(err)
		}
		b := ch.Payment.BankingBillet
		if b == nil || b.ConditionalDiscount == nil || *b.ConditionalDiscount != (api.ConditionalDiscount{Type: "percentage", Value: 500, UntilDate: "2026-03-05"}) {
			t.Fatalf("parcel %d: conditional discount %+v, want 5%% until 2026-03-05", i+1, b)
		}
	}
	pay := func(n int, wantValue, wantDiscount int64) {
		t.Helper()
		r, err := e.ctl.PayParcel(ctx, cn.CarnetID, n, control.PayRequest{}, "")
		if err != nil {
			t.Fatal(err)
		}
		if r.Value != wantValue || r.Discount != wantDiscount || r.Fine != 0 || r.Interest != 0 {
			t.Fatalf("parcel %d paid %s: %+v, want value %d with discount %d", n, r.PaidAt, r, wantValue, wantDiscount)
		}
		if got := e.paidValue(cn.Charges[n-1].ChargeID); got != wantValue {
			t.Fatalf("parcel %d: paid_value %d, want %d", n, got, wantValue)
		}
	}
	e.to("2026-03-04")
	pay(2, 93100, 4900) // due 10/04, paid before the carnet's until_date: 980,00 − 49,00
	e.to("2026-03-05")
	pay(1, 93100, 4900) // due 10/03, paid on until_date
	e.to("2026-03-06")
	pay(3, 98000, 0) // due 10/05, 65 days early but after until_date: full value
	e.to("2026-06-05")
	pay(4, 98000, 0) // due 10/06, 5 days before its own due date: no discount

	// The carnet PDF the sandbox serves says it: the cover's sentence and
	// column, and each parcel's instruction with the same date.
	text := strings.Join(strings.Fields(servedPDFText(t, cn.PDF.Carnet)), " ") // wrapped lines joined
	for _, want := range []string{
		"Desconto de 5% para pagamento até 05/03/2026: uma só data para todas as parcelas do carnê.",
		"Nas parcelas 2 a 4, o desconto só vale se pagas até 05/03/2026, antes do vencimento.",
		"Desconto até",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("carnet PDF lacks %q; text:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "Desconto de 5% para pagamento até 05/03/2026."); n != 4 {
		t.Errorf("the parcel instruction is printed %d times, want once on each of the 4 parcels; text:\n%s", n, text)
	}
	// The HTML cover says the same.
	res, err := http.Get(cn.Cover)
	if err != nil {
		t.Fatal(err)
	}
	cover, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := "Desconto de 5% para pagamento até 05/03/2026: uma só data para todas as parcelas do carnê. Nas parcelas 2 a 4, o desconto só vale se pagas até 05/03/2026, antes do vencimento."; res.StatusCode != 200 || !strings.Contains(string(cover), want) {
		t.Errorf("HTML cover (%d) lacks %q:\n%s", res.StatusCode, want, cover)
	}
	if n := strings.Count(text, "05/03/2026"); n != 4+4+2 { // 4 instructions, 4 cells of the column, 2 in the cover's sentences
		t.Errorf("05/03/2026 appears %d times, want 10; text:\n%s", n, text)
	}
}

var (
	reStream = regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`)
	reShown  = regexp.MustCompile(`\(((?:[^()\\]|\\.)*)\) ?Tj`)
)

// servedPDFText fetches the PDF at url and returns the text its content
// streams draw (Windows-1252 strings decoded), one line per drawing.
func servedPDFText(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !bytes.HasPrefix(body, []byte("%PDF-")) {
		t.Fatalf("GET %s: %d %.20q, want a PDF", url, res.StatusCode, body)
	}
	if dir := os.Getenv("REMESSA_SAMPLE_DIR"); dir != "" { // to look at it
		if err := os.WriteFile(filepath.Join(dir, "carnet-discount.pdf"), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out []string
	for _, m := range reStream.FindAllSubmatch(body, -1) {
		raw := m[1]
		if zr, err := zlib.NewReader(bytes.NewReader(raw)); err == nil {
			if b, err := io.ReadAll(zr); err == nil || len(b) > 0 {
				raw = b
			}
		}
		for _, s := range reShown.FindAllSubmatch(raw, -1) {
			str := strings.NewReplacer(`\(`, "(", `\)`, ")", `\\`, `\`).Replace(string(s[1]))
			dec, err := charmap.Windows1252.NewDecoder().String(str)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, dec)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no text found in the PDF at %s", url)
	}
	return strings.Join(out, "\n")
}
