package rules

import "testing"

func TestCPF(t *testing.T) {
	valid := []string{"529.982.247-25", "52998224725", "111.444.777-35", "000.000.001-91", " 529 982 247 25 "}
	invalid := []string{"111.111.111-11", "000.000.000-00", "529.982.247-26", "529.982.247-15", "5299822472", "529982247251", "", "abc.def.ghi-jk", "52998224A25"}
	for _, s := range valid {
		if !ValidCPF(s) {
			t.Errorf("ValidCPF(%q) = false, want true", s)
		}
	}
	for _, s := range invalid {
		if ValidCPF(s) {
			t.Errorf("ValidCPF(%q) = true, want false", s)
		}
	}
}

func TestCNPJ(t *testing.T) {
	valid := []string{"11.222.333/0001-81", "11222333000181", "09.089.356/0001-18", "12.ABC.345/01DE-35", "12.abc.345/01de-35", "12ABC34501DE35"}
	invalid := []string{"12.ABC.345/01DE-36", "11.222.333/0001-82", "00.000.000/0000-00", "12ABC34501DE3X", "12ABC34501DEA5", "1122233300018", "112223330001810", "", "12.ABC.345/01D?-35"}
	for _, s := range valid {
		if !ValidCNPJ(s) {
			t.Errorf("ValidCNPJ(%q) = false, want true", s)
		}
	}
	for _, s := range invalid {
		if ValidCNPJ(s) {
			t.Errorf("ValidCNPJ(%q) = true, want false", s)
		}
	}
}

func TestCleanFormatMask(t *testing.T) {
	cases := []struct{ in, clean, fmtd, mask string }{
		{"529.982.247-25", "52998224725", "529.982.247-25", "***.982.247-**"},
		{"52998224725", "52998224725", "529.982.247-25", "***.982.247-**"},
		{"12.abc.345/01de-35", "12ABC34501DE35", "12.ABC.345/01DE-35", "12.ABC.***/****-**"},
		{"11222333000181", "11222333000181", "11.222.333/0001-81", "11.222.***/****-**"},
	}
	for _, c := range cases {
		if got := CleanDocument(c.in); got != c.clean {
			t.Errorf("CleanDocument(%q) = %q, want %q", c.in, got, c.clean)
		}
		if len(c.clean) == 11 {
			if got := FormatCPF(c.in); got != c.fmtd {
				t.Errorf("FormatCPF(%q) = %q, want %q", c.in, got, c.fmtd)
			}
		} else if got := FormatCNPJ(c.in); got != c.fmtd {
			t.Errorf("FormatCNPJ(%q) = %q, want %q", c.in, got, c.fmtd)
		}
		if got := MaskDocument(c.in); got != c.mask {
			t.Errorf("MaskDocument(%q) = %q, want %q", c.in, got, c.mask)
		}
	}
	// Anything else is hidden completely.
	if got := MaskDocument("12345"); got != "*****" {
		t.Errorf("MaskDocument(12345) = %q", got)
	}
	if got := FormatCPF("123"); got != "123" {
		t.Errorf("FormatCPF(123) = %q", got)
	}
	if got := FormatCNPJ("12.3"); got != "123" {
		t.Errorf("FormatCNPJ(12.3) = %q", got)
	}
}
