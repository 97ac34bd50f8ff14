package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func FuzzCSVReader(f *testing.F) {
	for _, name := range []string{"ptbr-excel-1252.csv", "bom-utf8.csv", "sep-comma.csv", "quoted-newline.csv", "ragged.csv", "bare-quote.csv", "dup-headers.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("sep=\n"))
	f.Add([]byte("sep=;;\na;b\n"))
	f.Add([]byte("\xEF\xBB\xBF"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { checkReader(t, filepath.Join(dir, "f.csv"), data) })
}

// checkReader writes data to path and reads it back through Open: an
// *Error with a message, or rows whose cells match the headers and whose
// numbers increase, past the header's; never a panic.
func checkReader(t *testing.T, path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, Options{MaxRows: 500})
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.Message == "" {
			t.Fatalf("open error without a message: %#v", err)
		}
		return
	}
	defer r.Close()
	src := r.Source()
	prev := 0
	for i := 0; i < 1000; i++ {
		row, err := r.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("row error without a message: %#v", err)
			}
			if IsRowLevel(err) {
				continue
			}
			return
		}
		if len(row.Cells) != len(src.Headers) {
			t.Fatalf("row %d has %d cells for %d headers", row.Number, len(row.Cells), len(src.Headers))
		}
		// (a YAML list's first item may stand on its opening line)
		if row.Number <= prev || src.Format != "yaml" && row.Number <= src.HeaderRow {
			t.Fatalf("row number %d after %d (header %d)", row.Number, prev, src.HeaderRow)
		}
		prev = row.Number
	}
}

func FuzzXLSXSheet(f *testing.F) {
	f.Add(`<row r="1"><c t="s"><v>0</v></c><c t="inlineStr"><is><t>B</t></is></c></row><row r="2"><c s="1"><v>46023</v></c><c t="b"><v>1</v></c></row>`)
	f.Add(`<row r="1"><c r="Z1" t="s"><v>9</v></c></row><row r="0"><c r="A0" s="99"><v>1E400</v></c></row>`)
	f.Add(`<row><c s="2"><v>-5</v></c></row><row><c><f>1</f></c></row>`)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, rows string) {
		p := filepath.Join(dir, "f.xlsx")
		writeZip(t, p, map[string]string{
			"xl/workbook.xml":            workbookXML(false, "S"),
			"xl/_rels/workbook.xml.rels": wbRelsXML,
			"xl/styles.xml":              stylesXML,
			"xl/sharedStrings.xml":       sstXML,
			"xl/worksheets/sheet1.xml":   craftedSheet(rows),
		})
		// Differential: when encoding/xml reads the sheet without error, the
		// fast scanner must read exactly the same rows.
		std, stdErr := readXLSXWith(p, true)
		fast, fastErr := readXLSXWith(p, false)
		if stdErr == nil {
			if fastErr != nil {
				t.Fatalf("encoding/xml read the sheet, the scanner failed: %v", fastErr)
			}
			if !reflect.DeepEqual(std, fast) {
				t.Fatalf("parsers disagree:\nstd  %+v\nfast %+v", std, fast)
			}
		}
	})
}

// readXLSXWith reads a workbook with the encoding/xml parser (std) or the
// scanner, returning the source and rows as one comparable value.
func readXLSXWith(p string, std bool) (any, error) {
	if std {
		testSheetRows = stdSheetRows
		defer func() { testSheetRows = nil }()
	}
	r, err := Open(p, Options{MaxRows: 200, MaxUnzipBytes: 1 << 20})
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var rows []Row
	for i := 0; i < 300; i++ {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(row.Cells) != len(r.Source().Headers) {
			return nil, fmt.Errorf("row %d: %d cells for %d headers", row.Number, len(row.Cells), len(r.Source().Headers))
		}
		rows = append(rows, row)
	}
	return []any{r.Source(), rows}, nil
}

func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"1.234,56", "R$ 1.234,56", "1234.56", "1234,5", "(1.234,56)", "1\u00a0234,56", "-0,01", "1.234", "999999999999999,99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseMoney(s)
		if err != nil {
			var ve *ValueError
			if !errors.As(err, &ve) || ve.Message == "" || ve.MessageEN == "" {
				t.Fatalf("error without message: %#v", err)
			}
			return
		}
		back, err := ParseMoney(FormatMoney(v))
		if err != nil || back != v {
			t.Fatalf("ParseMoney(%q) = %d; FormatMoney = %q reads back as %d, %v", s, v, FormatMoney(v), back, err)
		}
	})
}

func FuzzParsePercent(f *testing.F) {
	f.Add("2%", uint8(2))
	f.Add("0,033%", uint8(3))
	f.Add("0.033", uint8(3))
	f.Add("-1,5", uint8(1))
	f.Fuzz(func(t *testing.T, s string, scale uint8) {
		sc := int(scale % 10)
		v, err := ParsePercent(s, sc)
		if err != nil {
			return
		}
		back, err := ParsePercent(FormatPercent(v, sc), sc)
		if err != nil || back != v {
			t.Fatalf("ParsePercent(%q,%d) = %d; FormatPercent = %q reads back as %d, %v", s, sc, v, FormatPercent(v, sc), back, err)
		}
	})
}

func FuzzParseDate(f *testing.F) {
	for _, s := range []string{"10/02/2027", "10/2/2027", "2027-02-10", "46023", "59", "61", "20270210", "29/02/2028", "2027-02-10T10:00:00Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			return
		}
		if d.Location() != time.UTC || d.Hour() != 0 || d.Minute() != 0 || d.Second() != 0 || d.Nanosecond() != 0 {
			t.Fatalf("ParseDate(%q) = %v, not a civil date", s, d)
		}
		back, err := ParseDate(FormatDate(d))
		if err != nil || !back.Equal(d) {
			t.Fatalf("ParseDate(%q) = %v; FormatDate = %q reads back as %v, %v", s, d, FormatDate(d), back, err)
		}
	})
}

// FuzzRestoreDocument: the result is only digits and uppercase letters,
// reading it again changes nothing, a restoration pads with zeros to 11 or
// 14 digits, and the digits typed are all kept, in order.
func FuzzRestoreDocument(f *testing.F) {
	for _, s := range []string{"529.982.247-25", "1234567890", "1234567890.0", "191", "12.abc.345/01de-35", "112223330001", " 11.222.333/0001-81 ", "52998224725\u00a0", "1.5E+10", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean, restored := RestoreDocument(s)
		for i := 0; i < len(clean); i++ {
			if c := clean[i]; !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z') {
				t.Fatalf("RestoreDocument(%q) = %q: byte %q", s, clean, c)
			}
		}
		if again, r := RestoreDocument(clean); again != clean || r {
			t.Fatalf("RestoreDocument(%q) = %q; again gives %q, %v", s, clean, again, r)
		}
		if restored {
			trimmed := strings.TrimLeft(clean, "0")
			if len(clean) != 11 && len(clean) != 14 || !strings.Contains(onlyDigits(s), trimmed) {
				t.Fatalf("RestoreDocument(%q) = %q restored: want 11 or 14 digits keeping the ones typed", s, clean)
			}
		}
	})
}

// FuzzRestoreCEP: the same properties for a CEP, padded to 8 digits.
func FuzzRestoreCEP(f *testing.F) {
	for _, s := range []string{"01310-100", "1310100", "1310100.0", "01.310-100", "0", "", "abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		clean, restored := RestoreCEP(s)
		if again, r := RestoreCEP(clean); again != clean || r {
			t.Fatalf("RestoreCEP(%q) = %q; again gives %q, %v", s, clean, again, r)
		}
		if restored && (len(clean) != 8 || !strings.Contains(onlyDigits(s), strings.TrimLeft(clean, "0"))) {
			t.Fatalf("RestoreCEP(%q) = %q restored: want 8 digits keeping the ones typed", s, clean)
		}
	})
}

func onlyDigits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// FuzzYAMLReader: any .yaml input opens to rows (cells matching the
// headers, numbers increasing) or to an *Error with a message; never a
// panic.
func FuzzYAMLReader(f *testing.F) {
	for _, name := range []string{"payers.yaml", "rows.yaml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("- {a: 1, b: [1, 2]}\n- {a: {x: 1}}\n"))
	f.Add([]byte("a: 1\n"))
	f.Add([]byte("- &x {a: 1}\n- *x\n- !!binary AAAA\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) { checkReader(t, filepath.Join(dir, "f.yaml"), data) })
}
