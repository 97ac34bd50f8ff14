package pipeline

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"remessa/formats"
	"remessa/rules"
)

// fastCorpus mixes realistic and hostile values for the equivalence checks.
func fastCorpus() []string {
	c := []string{"", "a", "@", "a@b", "a@b.c", "a@b.co", "maria@example.com", "Maria.José@exemplo.com.br", "x@-a.com", "x@a-.com", "x@a..com",
		"x@.a.com", "x@a.com.", ".x@a.com", "x.@a.com", "a+b@c.io", "a b@c.io", "ação@x.com", "x@" + strings.Repeat("a", 63) + ".com", "x@" + strings.Repeat("a", 64) + ".com",
		strings.Repeat("a", 250) + "@b.co", "01310-100", "01310100", "0131-0100", "013101000", "1310100", "01310_100", "ab310-100",
		"11987654321", "1187654321", "11887654321", "01987654321", "10987654321", "(11) 98765-4321", "+55 11 98765-4321", "+55(11)3333-4444",
		"11\u00a098765-4321", "529.982.247-25", "52998224725", "11111111111", "00000000191", "12.ABC.345/01DE-35", "12abc34501de35",
		"529 982 247 25", "529.982.247/25", "1234567890", "5299822472", "529982247250", "10/02/2027", "2027-02-10", "31/02/2027", "29/02/2028",
		"29/02/2027", "00/01/2027", "10/13/2027", "1/2/2027", "2027-2-10", "10-02-2027", "10.02.2027", "2027/02/10", "46023", "10/02/1899"}
	r := rand.New(rand.NewPCG(1, 2))
	alpha := "0123456789./-@ ()+aAzZ_.-é"
	for i := 0; i < 3000; i++ {
		var b strings.Builder
		for n := r.IntN(16); n > 0; n-- {
			b.WriteString(string([]rune(alpha)[r.IntN(len([]rune(alpha)))]))
		}
		c = append(c, b.String())
	}
	return c
}

func TestFastEquivalence(t *testing.T) {
	for _, s := range fastCorpus() {
		checkFast(t, s)
	}
	for i := -1000; i <= 100000; i += 7 {
		if got, want := pixAmount(int64(i)), rules.FormatPixAmount(int64(i)); got != want {
			t.Fatalf("pixAmount(%d) = %q, want %q", i, got, want)
		}
	}
	for d := time.Date(1899, 12, 25, 0, 0, 0, 0, time.UTC); d.Year() < 2101; d = d.AddDate(0, 0, 13) {
		if got := isoDate(d); got != d.Format("2006-01-02") {
			t.Fatalf("isoDate(%v) = %q", d, got)
		}
	}
	for i := 0; i < 20000; i++ {
		c := fixturesCPF(i)
		if !validCPF(c) || !rules.ValidCPF(c) {
			t.Fatalf("CPF %s: fast %v rules %v", c, validCPF(c), rules.ValidCPF(c))
		}
		bad := c[:10] + string(rune('0'+(c[10]-'0'+1)%10))
		if validCPF(bad) != rules.ValidCPF(bad) {
			t.Fatalf("CPF %s: fast %v rules %v", bad, validCPF(bad), rules.ValidCPF(bad))
		}
	}
}

func fixturesCPF(i int) string {
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
		r := sum % 11
		if r < 2 {
			d = append(d, '0')
		} else {
			d = append(d, byte('0'+11-r))
		}
	}
	return string(d)
}

func checkFast(t *testing.T, s string) {
	t.Helper()
	if got, want := validEmail(s), rules.ValidEmail(s); got != want {
		t.Errorf("validEmail(%q) = %v, rules says %v", s, got, want)
	}
	if got, want := validCEP(s), rules.ValidCEP(s); got != want {
		t.Errorf("validCEP(%q) = %v, rules says %v", s, got, want)
	}
	if got, want := validPhone(s), rules.ValidPhone(s); got != want {
		t.Errorf("validPhone(%q) = %v, rules says %v", s, got, want)
	}
	if got, want := cleanPhone(s), rules.CleanPhone(s); got != want {
		t.Errorf("cleanPhone(%q) = %q, rules says %q", s, got, want)
	}
	if len(s) == 11 && isDigits(s) {
		if got, want := validCPF(s), rules.ValidCPF(s); got != want {
			t.Errorf("validCPF(%q) = %v, rules says %v", s, got, want)
		}
	}
	if d, ok := cleanDocFast(s); ok {
		// (formats may also call a masked number "restored"; the value is what matters)
		if want, _ := formats.RestoreDocument(s); d != want {
			t.Errorf("cleanDocFast(%q) = %q, formats says %q", s, d, want)
		}
	}
	if d, ok := parseDateFast(s); ok {
		if want, err := formats.ParseDate(s); err != nil || !d.Equal(want) {
			t.Errorf("parseDateFast(%q) = %v, formats says %v, %v", s, d, want, err)
		}
	}
}

func FuzzFastEquivalence(f *testing.F) {
	for _, s := range fastCorpus()[:80] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFast(t, s) })
}

func TestMoneyFastEquivalence(t *testing.T) {
	cases := []string{"150", "150,00", "1.234,56", "1.234.567,89", "12.34,56", "1,5", "1,567", "0,99", ",99", "1.234", "1234.5", "1234.56", "1234.567",
		"0", "00,10", "1.2345,00", "123.456,7", "-1,00", "R$ 1,00", "1 234,56", "9999999999999,99", "99999999999999999,99", "1..234,00", "1.234.,00"}
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			b.WriteByte("0123456789.,"[r.IntN(12)])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		checkMoneyFast(t, s)
	}
}

func checkMoneyFast(t *testing.T, s string) {
	t.Helper()
	for _, numeric := range []bool{false, true} {
		v, ok := parseMoneyFast(s, numeric)
		if !ok {
			continue
		}
		c := formats.Cell{Value: s, Raw: s, Kind: formats.KindText}
		if numeric {
			c.Kind = formats.KindNumber
		}
		want, err := formats.ParseMoneyCell(c)
		if err != nil || want != v {
			t.Errorf("parseMoneyFast(%q, numeric %v) = %d, formats says %d, %v", s, numeric, v, want, err)
		}
	}
}

func FuzzMoneyFast(f *testing.F) {
	for _, s := range []string{"150", "1.234,56", "1234.5", "0,99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkMoneyFast(t, s) })
}
