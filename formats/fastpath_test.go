package formats

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// ParseDate, ParseMoneyCell and RestoreDocument try a one-pass fast path
// for the common shapes before the general parser. The fast path must
// give exactly what the general parser gives wherever it answers.

func fastPathCorpus() []string {
	c := []string{"", "529.982.247-25", "52998224725", "11111111111", "00000000191", "12.ABC.345/01DE-35", "12abc34501de35", "12.abc.345/01de-35",
		"529 982 247 25", "529.982.247/25", "1234567890", "5299822472", "529982247250", "10/02/2027", "2027-02-10", "31/02/2027", "29/02/2028",
		"29/02/2027", "00/01/2027", "10/13/2027", "1/2/2027", "2027-2-10", "10-02-2027", "10.02.2027", "2027/02/10", "46023", "10/02/1899",
		"150", "150,00", "1.234,56", "1.234.567,89", "12.34,56", "1,5", "1,567", "0,99", ",99", "1.234", "1234.5", "1234.56", "1234.567",
		"0", "00,10", "1.2345,00", "123.456,7", "-1,00", "R$ 1,00", "1 234,56", "9999999999999,99", "99999999999999999,99", "1..234,00", "1.234.,00"}
	r := rand.New(rand.NewPCG(1, 2))
	alpha := []rune("0123456789./-, aAzZé")
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := r.IntN(19); n > 0; n-- {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		c = append(c, b.String())
	}
	for i := 0; i < 5000; i++ {
		var b strings.Builder
		for n := 1 + r.IntN(12); n > 0; n-- {
			b.WriteByte("0123456789.,"[r.IntN(12)])
		}
		c = append(c, b.String())
	}
	return c
}

func checkFastPaths(t *testing.T, s string) {
	t.Helper()
	if d, ok := cleanDocFast(s); ok {
		// (the general path may also call a masked number "restored"; the value is what matters)
		if want, _ := restoreDocument(s); d != want {
			t.Errorf("cleanDocFast(%q) = %q, the general path says %q", s, d, want)
		}
	}
	if d, ok := parseDateFast(s); ok {
		if want, err := parseDate(s); err != nil || !d.Equal(want) {
			t.Errorf("parseDateFast(%q) = %v, the general path says %v, %v", s, d, want, err)
		}
	}
	for _, kind := range []CellKind{KindText, KindNumber} {
		v, ok := parseMoneyFast(s, kind == KindNumber)
		if !ok {
			continue
		}
		want, err := parseMoneyCell(Cell{Value: s, Raw: s, Kind: kind})
		if err != nil || want != v {
			t.Errorf("parseMoneyFast(%q, %v) = %d, the general path says %d, %v", s, kind, v, want, err)
		}
	}
}

func TestFastPaths(t *testing.T) {
	for _, s := range fastPathCorpus() {
		checkFastPaths(t, s)
	}
}

func FuzzFastPaths(f *testing.F) {
	for _, s := range fastPathCorpus()[:60] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkFastPaths(t, s) })
}
