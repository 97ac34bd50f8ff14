package cnab

import (
	"strings"
	"testing"
	"time"
)

// TestWriteRetorno240 writes segments T and U of a liquidação and checks
// them against FEBRABAN's positions written here by hand, then reads them
// back through the same table.
func TestWriteRetorno240(t *testing.T) {
	l := MustGet("febraban240-retorno")
	tr, err := NewRecord(l, "3T")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tr.Text("banco", "341"))
	must(tr.Int("lote", 1))
	must(tr.Int("sequencial", 1))
	must(tr.Text("movimento", "06"))
	must(tr.Text("nosso_numero", "000A1"))
	must(tr.Text("seu_numero", "a1-ção"))
	must(tr.Date("vencimento", time.Date(2027, 2, 10, 0, 0, 0, 0, time.UTC)))
	must(tr.Int("valor", 15000))
	must(tr.Text("motivos", "00"))
	line := string(tr.Bytes())
	if len(line) != 240 {
		t.Fatalf("%d positions", len(line))
	}
	for _, c := range []struct {
		start, end int
		want       string
	}{
		{1, 3, "341"}, {4, 7, "0001"}, {8, 8, "3"}, {9, 13, "00001"}, {14, 14, "T"}, {16, 17, "06"},
		{38, 57, "000A1               "}, {59, 73, "A1-\xc7\xc3O         "}, {74, 81, "10022027"}, {82, 96, "000000000015000"},
		{199, 213, "000000000000000"}, {214, 223, "00        "}, {224, 240, strings.Repeat(" ", 17)},
	} {
		if got := line[c.start-1 : c.end]; got != c.want {
			t.Errorf("positions %d-%d: %q, want %q", c.start, c.end, got, c.want)
		}
	}
	u, _ := NewRecord(l, "3U")
	must(u.Int("valor_pago", 15300))
	must(u.Int("acrescimos", 300))
	must(u.Date("data_ocorrencia", time.Date(2027, 2, 12, 0, 0, 0, 0, time.UTC)))
	ul := string(u.Bytes())
	if ul[17:32] != "000000000000300" || ul[77:92] != "000000000015300" || ul[137:145] != "12022027" || ul[145:153] != "00000000" || ul[13] != 'U' {
		t.Errorf("U %q", ul)
	}
	rl := &Line{N: 1, Text: ul, Rec: "3U"}
	if v, e := rl.Int(l.Field("3U", "valor_pago")); e != nil || v != 15300 {
		t.Errorf("read back %d %v", v, e)
	}
	// refusals
	if err := tr.Text("valor", "12,00"); err == nil {
		t.Error("a comma in a numeric field")
	}
	if err := tr.Int("lote", 123456); err == nil {
		t.Error("wider than the field")
	}
	if err := tr.Text("nao_existe", "x"); err == nil {
		t.Error("unknown field")
	}
	if _, err := NewRecord(l, "3P"); err == nil {
		t.Error("P in the retorno layout")
	}
}

// TestDateOf: DateOf writes what Date writes of the same day, in a data8
// field (CNAB 240's vencimento) and a data6 one (CNAB 400's), and refuses
// a field that is not a date.
func TestDateOf(t *testing.T) {
	for _, c := range []struct{ table, rec, field, want string }{
		{"febraban240-retorno", "3T", "vencimento", "09032027"},
		{"bradesco400-retorno", "1", "vencimento", "090327"},
	} {
		a, err := NewRecord(MustGet(c.table), c.rec)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewRecord(MustGet(c.table), c.rec)
		if err := a.DateOf(c.field, 2027, 3, 9); err != nil {
			t.Fatal(err)
		}
		if err := b.Date(c.field, time.Date(2027, 3, 9, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if string(a.Bytes()) != string(b.Bytes()) {
			t.Fatalf("%s: DateOf and Date differ:\n%s\n%s", c.table, a.Bytes(), b.Bytes())
		}
		f := MustGet(c.table).Field(c.rec, c.field)
		if got := string(a.Bytes()[f.Start-1 : f.End]); got != c.want {
			t.Fatalf("%s: %q, want %q", c.table, got, c.want)
		}
	}
	r, _ := NewRecord(MustGet("febraban240-retorno"), "3T")
	if err := r.DateOf("valor", 2027, 3, 9); err == nil || !strings.Contains(err.Error(), "not a date") {
		t.Fatalf("a value field took a date: %v", err)
	}
}
