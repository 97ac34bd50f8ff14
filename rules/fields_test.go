package rules

import (
	"strings"
	"testing"
)

func TestUF(t *testing.T) {
	all := strings.Fields("RO AC AM RR PA AP TO MA PI CE RN PB PE AL SE BA MG ES RJ SP PR SC RS MS MT GO DF")
	if len(all) != 27 {
		t.Fatalf("test list has %d UFs", len(all))
	}
	for _, uf := range all {
		if !ValidUF(uf) {
			t.Errorf("ValidUF(%s) = false", uf)
		}
	}
	for _, s := range []string{"", "sp", "XX", "BR", "SPP", " SP"} {
		if ValidUF(s) {
			t.Errorf("ValidUF(%q) = true", s)
		}
	}
}

func TestCEP(t *testing.T) {
	for _, s := range []string{"01310-100", "01310100", "90000000"} {
		if !ValidCEP(s) {
			t.Errorf("ValidCEP(%q) = false", s)
		}
	}
	for _, s := range []string{"", "1310100", "01310-10", "01.310-100", "0131a100", "013101000"} {
		if ValidCEP(s) {
			t.Errorf("ValidCEP(%q) = true", s)
		}
	}
}

func TestEmail(t *testing.T) {
	for _, s := range []string{"a@b.co", "Financeiro@Example.COM", "joao.silva+boleto@escola.edu.br"} {
		if !ValidEmail(s) {
			t.Errorf("ValidEmail(%q) = false", s)
		}
	}
	for _, s := range []string{"", "a", "a@b", "@b.com", "a@@b.com", "a b@c.com", "a@b..com", "a@-b.com", "a@b.com ", strings.Repeat("a", 250) + "@b.com"} {
		if ValidEmail(s) {
			t.Errorf("ValidEmail(%q) = true", s)
		}
	}
}

func TestPhone(t *testing.T) {
	for _, s := range []string{"11987654321", "1133334444", "5199998888"} {
		if !ValidPhone(s) {
			t.Errorf("ValidPhone(%q) = false", s)
		}
	}
	for _, s := range []string{"", "987654321", "01987654321", "10987654321", "119876543210", "11887654321", "(11) 98765-4321", "+5511987654321"} {
		if ValidPhone(s) {
			t.Errorf("ValidPhone(%q) = true", s)
		}
	}
	for in, want := range map[string]string{"(11) 98765-4321": "11987654321", "+55 11 98765-4321": "11987654321", "11 3333.4444": "1133334444"} {
		if got := CleanPhone(in); got != want || !ValidPhone(got) {
			t.Errorf("CleanPhone(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPayeeCode(t *testing.T) {
	for _, s := range []string{"0123456789abcdef0123456789ABCDEF", strings.Repeat("f", 32)} {
		if !ValidPayeeCode(s) {
			t.Errorf("ValidPayeeCode(%q) = false", s)
		}
	}
	for _, s := range []string{"", strings.Repeat("f", 31), strings.Repeat("f", 33), strings.Repeat("g", 32)} {
		if ValidPayeeCode(s) {
			t.Errorf("ValidPayeeCode(%q) = true", s)
		}
	}
}
