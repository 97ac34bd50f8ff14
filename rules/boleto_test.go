package rules

import (
	"strings"
	"testing"
	"time"
)

func d(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// Vectors V1, V2, V3 from standards.md §1.7 [verified].
var boletoVectors = []struct {
	name    string
	bank    string
	due     string
	cents   int64
	free    string
	barcode string
	line    string
}{
	{"V1 Banco do Brasil", "001", "2018-07-15", 102656, "0000001149718606852452211",
		"00196758600001026560000001149718606852452211",
		"00190.00009 01149.718601 68524.522114 6 75860000102656"},
	{"V2 synthetic Efí", "364", "2026-03-10", 150075, "0000123456789012345678901",
		"36493138100001500750000123456789012345678901",
		"36490.00019 23456.789017 23456.789017 3 13810000150075"},
	{"V3 DV special case", "364", "2026-03-10", 150075, "0000000000000000000000000",
		"36491138100001500750000000000000000000000000",
		"36490.00001 00000.000000 00000.000000 1 13810000150075"},
}

func TestBoletoVectors(t *testing.T) {
	for _, v := range boletoVectors {
		t.Run(v.name, func(t *testing.T) {
			bc, err := BuildBarcode(v.bank, d(v.due), v.cents, v.free)
			if err != nil {
				t.Fatal(err)
			}
			if bc != v.barcode {
				t.Fatalf("BuildBarcode = %s, want %s", bc, v.barcode)
			}
			if err := CheckBarcode(bc); err != nil {
				t.Fatal(err)
			}
			line, err := TypedLine(bc)
			if err != nil {
				t.Fatal(err)
			}
			if line != v.line {
				t.Fatalf("TypedLine = %q, want %q", line, v.line)
			}
			back, err := BarcodeFromTypedLine(v.line)
			if err != nil || back != v.barcode {
				t.Fatalf("BarcodeFromTypedLine(formatted) = %s, %v", back, err)
			}
			bare := strings.NewReplacer(" ", "", ".", "").Replace(v.line)
			if len(bare) != 47 {
				t.Fatalf("bare line has %d digits", len(bare))
			}
			back, err = BarcodeFromTypedLine(bare)
			if err != nil || back != v.barcode {
				t.Fatalf("BarcodeFromTypedLine(bare) = %s, %v", back, err)
			}
		})
	}
}

func TestMod10FieldDVs(t *testing.T) {
	// standards.md §1.7 V1 field DVs.
	for in, want := range map[string]int{"001900000": 9, "0114971860": 1, "6852452211": 4} {
		if got := Mod10(in); got != want {
			t.Errorf("Mod10(%s) = %d, want %d", in, got, want)
		}
	}
}

func TestMod11Boleto(t *testing.T) {
	// V1: sum 753, 753 mod 11 = 5, DV 6. V2: DV 3. V3: r = 1 -> 10 -> 1.
	cases := map[string]int{
		"0019758600001026560000001149718606852452211": 6,
		"3649138100001500750000123456789012345678901": 3,
		"3649138100001500750000000000000000000000000": 1,
	}
	for in, want := range cases {
		if got := Mod11Boleto(in); got != want {
			t.Errorf("Mod11Boleto(%s) = %d, want %d", in, got, want)
		}
	}
	// r = 0 also gives 1: 11 zeros weighted sum is 0.
	if got := Mod11Boleto("0000000000000000000000000000000000000000000"); got != 1 {
		t.Errorf("all zeros: got %d, want 1", got)
	}
}

func TestDueFactor(t *testing.T) {
	cases := []struct {
		date   string
		factor int
	}{
		{"2025-02-21", 9999}, {"2025-02-22", 1000}, {"2025-02-23", 1001}, {"2026-03-10", 1381},
		{"2049-10-13", 9999}, {"2049-10-14", 1000}, {"2014-01-18", 5947}, {"2017-01-21", 7046},
		{"2000-07-03", 1000}, {"2018-07-15", 7586},
	}
	for _, c := range cases {
		got, err := DueFactor(d(c.date))
		if err != nil || got != c.factor {
			t.Errorf("DueFactor(%s) = %d, %v; want %d", c.date, got, err, c.factor)
		}
	}
	if _, err := DueFactor(d("2000-07-02")); err == nil {
		t.Error("DueFactor(2000-07-02): want error")
	}
	// A time of day or another location does not change the civil date.
	got, _ := DueFactor(time.Date(2026, 3, 10, 23, 59, 0, 0, SaoPaulo))
	if got != 1381 {
		t.Errorf("DueFactor(2026-03-10 23:59 -03) = %d, want 1381", got)
	}
}

func TestDateFromFactor(t *testing.T) {
	cases := []struct {
		f    int
		ref  string
		want string
	}{
		{1500, "2002-01-01", "2001-11-15"},
		{1500, "2026-01-01", "2026-07-07"},
		{1500, "2014-01-01", "2001-11-15"}, // 2001-11-15 is 4430 days away, 2026-07-07 is 4570
		{1500, "2014-06-01", "2026-07-07"},
		{1381, "2026-03-01", "2026-03-10"},
		{7586, "2018-07-01", "2018-07-15"},
		{9999, "2025-02-20", "2025-02-21"},
		{1000, "2025-02-20", "2025-02-22"},
		{1000, "2000-01-01", "2000-07-03"},
		{9999, "2049-10-01", "2049-10-13"},
		{1000, "2049-10-20", "2049-10-14"},
	}
	for _, c := range cases {
		got, err := DateFromFactor(c.f, d(c.ref))
		if err != nil || !got.Equal(d(c.want)) {
			t.Errorf("DateFromFactor(%d, %s) = %s, %v; want %s", c.f, c.ref, got.Format(time.DateOnly), err, c.want)
		}
	}
	for _, f := range []int{0, 999, 10000, -1} {
		if _, err := DateFromFactor(f, d("2026-01-01")); err == nil {
			t.Errorf("DateFromFactor(%d): want error", f)
		}
	}
}

func TestFactorRoundTrip(t *testing.T) {
	for day := d("2000-07-03"); day.Before(d("2060-01-01")); day = day.AddDate(0, 0, 37) {
		f, err := DueFactor(day)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DateFromFactor(f, day.AddDate(0, 0, 4000))
		if err != nil || !back.Equal(day) {
			t.Fatalf("%s -> %d -> %s (%v)", day.Format(time.DateOnly), f, back.Format(time.DateOnly), err)
		}
	}
}

func TestBuildBarcodeNoDueDate(t *testing.T) {
	bc, err := BuildBarcode("364", time.Time{}, 100, "0000000000000000000000000")
	if err != nil {
		t.Fatal(err)
	}
	if bc[5:9] != "0000" {
		t.Fatalf("factor = %s, want 0000", bc[5:9])
	}
	if err := CheckBarcode(bc); err != nil {
		t.Fatal(err)
	}
}

func TestBuildBarcodeErrors(t *testing.T) {
	free := "0000123456789012345678901"
	cases := []struct {
		name, bank string
		due        time.Time
		cents      int64
		free, want string
	}{
		{"short bank", "36", d("2026-03-10"), 1, free, "banco"},
		{"letter bank", "36X", d("2026-03-10"), 1, free, "banco"},
		{"short free", "364", d("2026-03-10"), 1, "123", "campo livre"},
		{"letters in free", "364", d("2026-03-10"), 1, "000012345678901234567890A", "campo livre"},
		{"negative", "364", d("2026-03-10"), -1, free, "valor"},
		{"too big", "364", d("2026-03-10"), 10000000000, free, "valor"},
		{"too early", "364", d("1999-01-01"), 1, free, "2000-07-03"},
	}
	for _, c := range cases {
		_, err := BuildBarcode(c.bank, c.due, c.cents, c.free)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want mention of %q", c.name, err, c.want)
		}
	}
}

func TestCheckBarcodeErrors(t *testing.T) {
	good := "36493138100001500750000123456789012345678901"
	bad := good[:4] + "4" + good[5:]
	for _, s := range []string{"", good[:43], good + "1", bad, strings.Replace(good, "0", "O", 1)} {
		if err := CheckBarcode(s); err == nil {
			t.Errorf("CheckBarcode(%q): want error", s)
		}
	}
	if _, err := TypedLine(bad); err == nil {
		t.Error("TypedLine(bad DV): want error")
	}
}

func TestBarcodeFromTypedLineErrors(t *testing.T) {
	good := "36490.00019 23456.789017 23456.789017 3 13810000150075"
	cases := map[string]string{
		"field 1 DV": "36490.00018 23456.789017 23456.789017 3 13810000150075",
		"field 2 DV": "36490.00019 23456.789018 23456.789017 3 13810000150075",
		"field 3 DV": "36490.00019 23456.789017 23456.789016 3 13810000150075",
		"general DV": "36490.00019 23456.789017 23456.789017 4 13810000150075",
		"short":      good[:len(good)-1],
		"long":       good + "0",
		"letter":     strings.Replace(good, "3 1381", "X 1381", 1),
		"empty":      "",
	}
	for name, line := range cases {
		if _, err := BarcodeFromTypedLine(line); err == nil {
			t.Errorf("%s: want error for %q", name, line)
		}
	}
	// A changed amount breaks only the general DV.
	_, err := BarcodeFromTypedLine("36490.00019 23456.789017 23456.789017 3 13810000150076")
	if err == nil || !strings.Contains(err.Error(), "geral") {
		t.Errorf("amount changed: err = %v, want general DV error", err)
	}
}

func FuzzBarcodeFromTypedLine(f *testing.F) {
	for _, v := range boletoVectors {
		f.Add(v.line)
	}
	f.Add("")
	f.Add("1234")
	f.Fuzz(func(t *testing.T, line string) {
		bc, err := BarcodeFromTypedLine(line)
		if err != nil {
			return
		}
		if err := CheckBarcode(bc); err != nil {
			t.Fatalf("accepted %q gives bad barcode %s: %v", line, bc, err)
		}
		l2, err := TypedLine(bc)
		if err != nil {
			t.Fatal(err)
		}
		bc2, err := BarcodeFromTypedLine(l2)
		if err != nil || bc2 != bc {
			t.Fatalf("round trip %s -> %q -> %s, %v", bc, l2, bc2, err)
		}
		if strings.NewReplacer(" ", "", ".", "").Replace(line) != strings.NewReplacer(" ", "", ".", "").Replace(l2) {
			t.Fatalf("digits differ: %q vs %q", line, l2)
		}
	})
}

func BenchmarkBuildBarcodeTypedLine(b *testing.B) {
	due := d("2026-03-10")
	for b.Loop() {
		bc, err := BuildBarcode("364", due, 150075, "0000123456789012345678901")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := TypedLine(bc); err != nil {
			b.Fatal(err)
		}
	}
}
