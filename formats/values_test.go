package formats

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func date(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }

func TestExcelSerialVectors(t *testing.T) {
	// standards.md §5, verified vectors.
	cases := []struct {
		serial string
		want   time.Time
	}{
		{"1", date(1900, 1, 1)},
		{"59", date(1900, 2, 28)},
		{"61", date(1900, 3, 1)},
		{"45658", date(2025, 1, 1)},
		{"46023", date(2026, 1, 1)},
		{"46023.75", date(2026, 1, 1)},
	}
	for _, c := range cases {
		got, err := ExcelSerialToDate(c.serial, false)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ExcelSerialToDate(%q) = %v, %v; want %v", c.serial, got, err, c.want)
		}
	}
	for _, bad := range []string{"60", "0", "-1", "abc", "", "99999999"} {
		if _, err := ExcelSerialToDate(bad, false); err == nil {
			t.Errorf("ExcelSerialToDate(%q) accepted", bad)
		}
	}
	// 1904 system: 0 = 1904-01-01, 1462 days after the 1900 system.
	got, err := ExcelSerialToDate("0", true)
	if err != nil || !got.Equal(date(1904, 1, 1)) {
		t.Errorf("1904 serial 0 = %v, %v", got, err)
	}
	got, _ = ExcelSerialToDate("44561", true) // 46023 - 1462
	if !got.Equal(date(2026, 1, 1)) {
		t.Errorf("1904 serial 44561 = %v, want 2026-01-01", got)
	}
	if s := ExcelSerial(date(2026, 1, 1)); s != 46023 {
		t.Errorf("ExcelSerial(2026-01-01) = %d", s)
	}
	if s := ExcelSerial(date(1900, 2, 28)); s != 59 {
		t.Errorf("ExcelSerial(1900-02-28) = %d", s)
	}
}

func TestParseMoney(t *testing.T) {
	ok := map[string]int64{
		"1.234,56":         123456,
		"R$ 1.234,56":      123456,
		"R$1.234,56":       123456,
		"r$ 10":            1000,
		"1234.56":          123456,
		"1234,5":           123450,
		"1234,56":          123456,
		"(1.234,56)":       -123456,
		"-1.234,56":        -123456,
		"-R$ 1,00":         -100,
		"R$ -1,00":         -100,
		"1.234,56-":        -123456,
		"1\u00a0234,56":    123456,
		"R$\u00a01.234,56": 123456,
		" 12 ":             1200,
		"1,234.56":         123456,
		"1.234":            123400,
		"1.234.567":        123456700,
		"1.234.567,89":     123456789,
		"0,01":             1,
		",5":               50,
		"0":                0,
		"1.5":              150,
		"+3,00":            300,
		"999999999999999":  99999999999999900,
	}
	for in, want := range ok {
		got, err := ParseMoney(in)
		if err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := []string{"", "  ", "abc", "1,234", "12,345", "1.23.4", "1,2,3.45,6", "R$", "1,234,5", "--1", "(-1)", "1e5", "12.3456", "1.234,5,6", "10%", "1 234,567", "1234567890123456"}
	for _, in := range bad {
		if got, err := ParseMoney(in); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", in, got)
		} else {
			var ve *ValueError
			if !errors.As(err, &ve) || ve.Code != CodeBadMoney || !strings.Contains(ve.Message, in) {
				t.Errorf("ParseMoney(%q) error %v does not name the value", in, err)
			}
		}
	}
}

func TestParseMoneyCell(t *testing.T) {
	// A numeric cell "1.234" is one real and 234 thousandths: refused, never
	// read as 1234 reais.
	if _, err := ParseMoneyCell(Cell{Value: "1.234", Kind: KindNumber}); err == nil {
		t.Error("numeric 1.234 accepted")
	}
	if v, err := ParseMoneyCell(Cell{Value: "1234.5", Kind: KindNumber}); err != nil || v != 123450 {
		t.Errorf("numeric 1234.5 = %d, %v", v, err)
	}
	if v, err := ParseMoneyCell(Cell{Value: "1.234", Kind: KindText}); err != nil || v != 123400 {
		t.Errorf("text 1.234 = %d, %v", v, err)
	}
}

func TestFormatMoney(t *testing.T) {
	cases := map[int64]string{0: "0,00", 1: "0,01", 123456: "1.234,56", -100: "-1,00", 100000000: "1.000.000,00"}
	for in, want := range cases {
		if got := FormatMoney(in); got != want {
			t.Errorf("FormatMoney(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestParsePercent(t *testing.T) {
	cases := []struct {
		in    string
		scale int
		want  int64
	}{
		{"2%", 2, 200}, {"2", 2, 200}, {"0,033%", 3, 33}, {"0.033", 3, 33}, {"1,5 %", 2, 150},
		{"10%", 0, 10}, {"0%", 2, 0}, {"33,3%", 2, 3330}, {"-1%", 2, -100}, {"100", 4, 1000000},
	}
	for _, c := range cases {
		got, err := ParsePercent(c.in, c.scale)
		if err != nil || got != c.want {
			t.Errorf("ParsePercent(%q,%d) = %d, %v; want %d", c.in, c.scale, got, err, c.want)
		}
	}
	for _, in := range []string{"", "%", "abc", "0,0333%", "1,2,3", "1.2.3", "2%%", "1e2"} {
		if _, err := ParsePercent(in, 3); err == nil {
			t.Errorf("ParsePercent(%q) accepted", in)
		}
	}
	if got := FormatPercent(33, 3); got != "0,033%" {
		t.Errorf("FormatPercent(33,3) = %q", got)
	}
	if got := FormatPercent(200, 2); got != "2%" {
		t.Errorf("FormatPercent(200,2) = %q", got)
	}
}

func TestParseDate(t *testing.T) {
	ok := map[string]time.Time{
		"10/02/2027":          date(2027, 2, 10),
		"10/2/2027":           date(2027, 2, 10),
		"05/03/2026":          date(2026, 3, 5), // 5 March, never US
		"2027-02-10":          date(2027, 2, 10),
		"2027-02-10T00:00:00": date(2027, 2, 10),
		"2027-02-10 13:45":    date(2027, 2, 10),
		"10-02-2027":          date(2027, 2, 10),
		"10.02.2027":          date(2027, 2, 10),
		"46023":               date(2026, 1, 1),
		"46023.5":             date(2026, 1, 1),
		"20270210":            date(2027, 2, 10),
		" 29/02/2028 ":        date(2028, 2, 29),
		"10/02/2027 00:00":    date(2027, 2, 10),
		"10/02/2027 13:45:10": date(2027, 2, 10),
	}
	for in, want := range ok {
		got, err := ParseDate(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseDate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "31/02/2027", "29/02/2027", "10/02/27", "2027-13-01", "13/13/2027", "hoje", "10/02/2027/1", "60", "0", "1/1/1899", "2027-02-30", "10/02/2027 x", "10/02/2027 1:2:3:4"} {
		if got, err := ParseDate(in); err == nil {
			t.Errorf("ParseDate(%q) = %v, want an error", in, got)
		}
	}
	if FormatDate(date(2027, 2, 10)) != "10/02/2027" {
		t.Error("FormatDate")
	}
}

func TestRestoreDocument(t *testing.T) {
	cases := []struct {
		in       string
		want     string
		restored bool
	}{
		{"012.345.678-90", "01234567890", false},
		{"1234567890", "01234567890", true}, // CPF stored as a number
		{"1234567890.0", "01234567890", true},
		{"52998224725", "52998224725", false},
		{"11.222.333/0001-81", "11222333000181", false},
		{"1222333000181", "01222333000181", true}, // CNPJ lost one zero
		{"12.abc.345/01de-35", "12ABC34501DE35", false},
		{"", "", false},
	}
	for _, c := range cases {
		got, r := RestoreDocument(c.in)
		if got != c.want || r != c.restored {
			t.Errorf("RestoreDocument(%q) = %q,%v; want %q,%v", c.in, got, r, c.want, c.restored)
		}
	}
	for in, want := range map[string]string{"1310100": "01310100", "01310-100": "01310100", "01.310-100": "01310100", "1310100.0": "01310100"} {
		got, _ := RestoreCEP(in)
		if got != want {
			t.Errorf("RestoreCEP(%q) = %q, want %q", in, got, want)
		}
	}
	if _, r := RestoreCEP("1310100"); !r {
		t.Error("RestoreCEP did not report the restoration")
	}
	if _, r := RestoreCEP("01310100"); r {
		t.Error("RestoreCEP reported a restoration of a complete CEP")
	}
}

func TestNormalizeNumber(t *testing.T) {
	cases := map[string]string{
		"1234.56":             "1234.56",
		"1234.5599999999999":  "1234.56",
		"0.30000000000000004": "0.3",
		"1.5E-2":              "0.015",
		"1.2345678909E+10":    "12345678909",
		"12345678909":         "12345678909",
		"100":                 "100",
		"-2.5":                "-2.5",
		"0":                   "0",
		"1.0":                 "1",
		"0.1":                 "0.1",
		"9.9999999999999999":  "10",
	}
	for in, want := range cases {
		if got, ok := normalizeNumber(in); !ok || got != want {
			t.Errorf("normalizeNumber(%q) = %q,%v; want %q", in, got, ok, want)
		}
	}
	if got, _ := shiftNumber("0.02", 2); got != "2" {
		t.Errorf("shiftNumber(0.02,2) = %q", got)
	}
	if got, _ := shiftNumber("0.00033", 2); got != "0.033" {
		t.Errorf("shiftNumber(0.00033,2) = %q", got)
	}
}

func TestIsScientific(t *testing.T) {
	for s, want := range map[string]bool{"1,12223E+13": true, "5.29982e+10": true, " 1E+11 ": true, "1,5E-3": true,
		"11.222.333/0001-81": false, "12ABC34501DE35": false, "1E13": false, "E+13": false, "1,2,3E+4": false, "1,E+4": false, "": false, "52998224725": false} {
		if got := IsScientific(s); got != want {
			t.Errorf("IsScientific(%q) = %v, want %v", s, got, want)
		}
	}
}
