package rules

import (
	"strings"
	"testing"
	"time"
)

func TestTxid(t *testing.T) {
	for _, s := range []string{strings.Repeat("a", 26), strings.Repeat("Z9", 17) + "x", "abcdefghijklmnopqrstuvwxyz"} {
		if !ValidTxid(s) {
			t.Errorf("ValidTxid(%q) = false", s)
		}
	}
	for _, s := range []string{"", strings.Repeat("a", 25), strings.Repeat("a", 36), strings.Repeat("a", 25) + "-", strings.Repeat("á", 26)} {
		if ValidTxid(s) {
			t.Errorf("ValidTxid(%q) = true", s)
		}
	}
}

func TestDeriveTxid(t *testing.T) {
	a := DeriveTxid("run-1", "row-7")
	if len(a) != 35 || !ValidTxid(a) {
		t.Fatalf("DeriveTxid = %q (len %d), not a valid 35-char txid", a, len(a))
	}
	if b := DeriveTxid("run-1", "row-7"); b != a {
		t.Fatalf("not deterministic: %s vs %s", a, b)
	}
	seen := map[string]bool{a: true}
	for _, parts := range [][]string{{"run-1", "row-8"}, {"run-1row-7"}, {"run-", "1row-7"}, {"row-7", "run-1"}, {}, {""}} {
		x := DeriveTxid(parts...)
		if len(x) != 35 || !ValidTxid(x) {
			t.Fatalf("DeriveTxid(%q) = %q", parts, x)
		}
		if seen[x] {
			t.Fatalf("collision for %q: %s", parts, x)
		}
		seen[x] = true
	}
}

func TestEndToEndIDs(t *testing.T) {
	// standards.md §4 [verified].
	e := "E09089356202312302342API9295b711"
	r := "D09089356202211301744509406dc544"
	if !ValidEndToEndID(e) || ValidRtrID(e) {
		t.Errorf("%s: e2e=%v rtr=%v", e, ValidEndToEndID(e), ValidRtrID(e))
	}
	if !ValidRtrID(r) || ValidEndToEndID(r) {
		t.Errorf("%s: e2e=%v rtr=%v", r, ValidEndToEndID(r), ValidRtrID(r))
	}
	if e[1:9] != EfiISPB || e[9:21] != "202312302342" || e[21:] != "API9295b711" {
		t.Errorf("layout of %s", e)
	}
	// Rebuild both from their parts.
	if got := NewEndToEndID('E', EfiISPB, time.Date(2023, 12, 30, 23, 42, 0, 0, time.UTC), "API9295b711"); got != e {
		t.Errorf("NewEndToEndID = %s, want %s", got, e)
	}
	// The minute is taken in UTC: 14:44 in São Paulo is 17:44 UTC.
	if got := NewEndToEndID('D', EfiISPB, time.Date(2022, 11, 30, 14, 44, 59, 0, SaoPaulo), "509406dc544"); got != r {
		t.Errorf("NewEndToEndID = %s, want %s", got, r)
	}
	// The other real-service examples.
	for _, s := range []string{"E09089356202011251226APIff82f2e5"} {
		if !ValidEndToEndID(s) {
			t.Errorf("ValidEndToEndID(%s) = false", s)
		}
	}
	// Alphanumeric ISPB accepted.
	if !ValidEndToEndID("E12ABC345202312302342API9295b711") {
		t.Error("alphanumeric ISPB refused")
	}
	bad := []string{"", e[:31], e + "1", "e" + e[1:], "E0908935620231230234" + "2API9295b71-",
		"E09089356202313302342API9295b711", // month 13
		"E09089356202312302360API9295b711", // minute 60
		"E0908935a202312302342API9295b711"} // lowercase ISPB
	for _, s := range bad {
		if ValidEndToEndID(s) {
			t.Errorf("ValidEndToEndID(%q) = true", s)
		}
	}
	// seq padding and trimming.
	at := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	if got := NewEndToEndID('E', EfiISPB, at, "42"); got != "E09089356202603101200"+"00000000042" || !ValidEndToEndID(got) {
		t.Errorf("padded: %s", got)
	}
	if got := NewEndToEndID('E', EfiISPB, at, "x-123456789012"); got != "E09089356202603101200"+"23456789012" || !ValidEndToEndID(got) {
		t.Errorf("trimmed: %s", got)
	}
}

func TestIDs35(t *testing.T) {
	for _, f := range []func(string) bool{ValidDevolucaoID, ValidIdEnvio} {
		for _, s := range []string{"a", "D1", strings.Repeat("x", 35)} {
			if !f(s) {
				t.Errorf("%q refused", s)
			}
		}
		for _, s := range []string{"", strings.Repeat("x", 36), "a-b", "a b", "ção"} {
			if f(s) {
				t.Errorf("%q accepted", s)
			}
		}
	}
}

func TestPixKeyType(t *testing.T) {
	ok := map[string]KeyType{
		"52998224725":                          KeyCPF,
		"11222333000181":                       KeyCNPJ,
		"12ABC34501DE35":                       KeyCNPJ,
		"+5511987654321":                       KeyPhone,
		"pix@bcb.gov.br":                       KeyEmail,
		"financeiro@example.com":               KeyEmail,
		"123e4567-e12b-12d1-a456-426655440000": KeyEVP,
	}
	for k, want := range ok {
		got, err := PixKeyType(k)
		if err != nil || got != want {
			t.Errorf("PixKeyType(%q) = %q, %v; want %q", k, got, err, want)
		}
	}
	// Failing examples of standards.md §4 [verified] and more; each error names the key.
	bad := map[string]string{
		"+55 11 98765-4321":                      "telefone",
		"Pix@BCB.gov.br":                         "e-mail",
		"123E4567-E12B-12D1-A456-426655440000":   "minúsculas",
		"":                                       "vazia",
		"529.982.247-25":                         "formato",
		"52998224726":                            "CPF",
		"11222333000182":                         "CNPJ",
		"12abc34501de35":                         "formato",
		"5511987654321":                          "formato",
		"+0511987654321":                         "telefone",
		strings.Repeat("a", 70) + "@example.com": "77",
	}
	for k, why := range bad {
		_, err := PixKeyType(k)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("PixKeyType(%q) err = %v, want mention of %q", k, err, why)
		}
	}
}

func TestNormalizePixKey(t *testing.T) {
	cases := map[string]string{
		"+55 11 98765-4321":                    "+5511987654321",
		"+55 (11) 98765-4321":                  "+5511987654321",
		"(11) 98765-4321":                      "+5511987654321",
		"(11) 3333-4444":                       "+551133334444",
		"Pix@BCB.gov.br":                       "pix@bcb.gov.br",
		" Pix@BCB.gov.br ":                     "pix@bcb.gov.br",
		"123E4567-E12B-12D1-A456-426655440000": "123e4567-e12b-12d1-a456-426655440000",
		"529.982.247-25":                       "52998224725",
		"12.abc.345/01de-35":                   "12ABC34501DE35",
	}
	for in, want := range cases {
		got := NormalizePixKey(in)
		if got != want {
			t.Errorf("NormalizePixKey(%q) = %q, want %q", in, got, want)
		}
		if _, err := PixKeyType(got); err != nil {
			t.Errorf("normalised %q still fails: %v", got, err)
		}
	}
}
