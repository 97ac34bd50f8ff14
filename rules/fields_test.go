package rules

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
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

// The documented patterns of the hand-written checks; the checks must
// agree with them on every input.
var (
	patCEP   = regexp.MustCompile(`^\d{5}-?\d{3}$`)
	patPhone = regexp.MustCompile(`^[1-9]{2}9?[0-9]{8}$`)
	patPayee = regexp.MustCompile(`^[a-fA-F0-9]{32}$`)
	patEmail = regexp.MustCompile(`^[A-Za-z0-9.!#$%&'*+/=?^_` + "`" + `{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`)
	patTxid  = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)
	patID35  = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)
)

func checkPatterns(t *testing.T, s string) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"ValidCEP", ValidCEP(s), patCEP.MatchString(s)},
		{"ValidPhone", ValidPhone(s), patPhone.MatchString(s)},
		{"ValidPayeeCode", ValidPayeeCode(s), patPayee.MatchString(s)},
		{"ValidEmail", ValidEmail(s), len(s) <= 254 && patEmail.MatchString(s)},
		{"ValidTxid", ValidTxid(s), patTxid.MatchString(s)},
		{"ValidIdEnvio", ValidIdEnvio(s), patID35.MatchString(s)},
	} {
		if c.got != c.want {
			t.Errorf("%s(%q) = %v, the pattern says %v", c.name, s, c.got, c.want)
		}
	}
	// CleanPhone and CleanDocument remove exactly their mask characters.
	wantPhone := strings.Map(func(r rune) rune {
		if strings.ContainsRune(" ()-.\u00a0\t", r) {
			return -1
		}
		return r
	}, s)
	wantPhone = strings.TrimPrefix(wantPhone, "+55")
	if got := CleanPhone(s); got != wantPhone {
		t.Errorf("CleanPhone(%q) = %q, want %q", s, got, wantPhone)
	}
	wantDoc := strings.Map(func(r rune) rune {
		if strings.ContainsRune(".-/ \t\u00a0", r) {
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
	if got := CleanDocument(s); utf8.ValidString(s) && got != wantDoc {
		t.Errorf("CleanDocument(%q) = %q, want %q", s, got, wantDoc)
	}
}

func patternCorpus() []string {
	c := []string{"", "a", "@", "a@b", "a@b.c", "a@b.co", "maria@example.com", "Maria.José@exemplo.com.br", "x@-a.com", "x@a-.com", "x@a..com",
		"x@.a.com", "x@a.com.", ".x@a.com", "x.@a.com", "a+b@c.io", "a b@c.io", "ação@x.com", "x@" + strings.Repeat("a", 63) + ".com", "x@" + strings.Repeat("a", 64) + ".com",
		strings.Repeat("a", 250) + "@b.co", strings.Repeat("a", 243) + "@" + strings.Repeat("b", 6) + ".com", "01310-100", "01310100", "0131-0100", "013101000", "1310100", "01310_100", "ab310-100",
		"11987654321", "1187654321", "11887654321", "01987654321", "10987654321", "(11) 98765-4321", "+55 11 98765-4321", "+55(11)3333-4444",
		"11\u00a098765-4321", "529.982.247-25", "52998224725", "12.abc.345/01de-35", strings.Repeat("aF09", 8), strings.Repeat("a", 26), strings.Repeat("Z9", 18)}
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []rune("0123456789./-@ ()+aAzZfF_.-é\u00a0\t")
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := r.IntN(40); n > 0; n-- {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		c = append(c, b.String())
	}
	return c
}

func TestFieldPatterns(t *testing.T) {
	for _, s := range patternCorpus() {
		checkPatterns(t, s)
	}
}

func FuzzFieldPatterns(f *testing.F) {
	for _, s := range patternCorpus()[:60] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkPatterns(t, s) })
}

// TestCPFGenerated checks ValidCPF on CPFs whose check digits are computed
// here from the definition (standards.md §3), and on each with its last
// digit changed.
func TestCPFGenerated(t *testing.T) {
	for i := 0; i < 20000; i++ {
		d := make([]byte, 0, 11)
		x := uint64(i)*2654435761 + 12345
		for k := 0; k < 9; k++ {
			d = append(d, byte('0'+x%10))
			x /= 10
		}
		for n := 9; n <= 10; n++ {
			sum := 0
			for k := 0; k < n; k++ {
				sum += int(d[k]-'0') * (n + 1 - k)
			}
			if r := sum % 11; r < 2 {
				d = append(d, '0')
			} else {
				d = append(d, byte('0'+11-r))
			}
		}
		c := string(d)
		if !ValidCPF(c) || !ValidCPF(FormatCPF(c)) {
			t.Fatalf("ValidCPF(%s) = false", c)
		}
		bad := c[:10] + string(rune('0'+(c[10]-'0'+1)%10))
		if ValidCPF(bad) {
			t.Fatalf("ValidCPF(%s) = true", bad)
		}
	}
}
