package pix

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"remessa/rules"
)

// A batchDeriver derives each charge as (*charge).derive does, field for
// field, error for error: accounts with every kind of name, hosts short,
// long (the location cut to 77 characters), with a scheme, not ASCII
// (no BR Code), loc ids on both sides of orderedFrom, another creation
// time, charges of hosts alternating (the template made again).
func TestBatchDeriverSameAsDerive(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 123456789, time.UTC)
	ais := []accountInfo{
		{ID: "acc", Name: "Escola Sandbox Ltda", CNPJ: "12.345.678/0001-95"},
		{ID: "conta-2", Name: "Associação Educacional São João Batista do Norte", CNPJ: "12ABC34501DE35"},
		{ID: "x", Name: ""},
		{ID: "ção", Name: "Ñandú   ", CNPJ: "11222333000181"},
		{ID: "y", Name: "名前"}, // no ASCII form: no BR Code
	}
	hosts := []string{"pix.example.com", "", "https://pix.example.com", "HTTPS://Pix.Example.com:8443", "localhost:8443/pix",
		strings.Repeat("h", 40) + ".example.com", strings.Repeat("k", 90), "pïx.example.com", "a/b"}
	r := rand.New(rand.NewPCG(3, 4))
	n, templated := 0, 0
	for _, ai := range ais {
		for _, of := range []int64{0, 1, 5000} {
			d := newBatchDeriver(ai, of, now)
			for _, kind := range []string{kindCobV, kindCob} {
				for k := range 400 {
					host := hosts[(k/7+r.IntN(2))%len(hosts)]
					locID := int64(4990 + k)
					switch r.IntN(20) {
					case 0:
						locID = r.Int64()
					case 1:
						locID = 1 + r.Int64N(100)
					}
					created := now
					if r.IntN(25) == 0 {
						created = now.Add(time.Millisecond)
					}
					in := &cobInput{Body: Cob{Chave: "k", Devedor: &Pessoa{CPF: "52998224725", Nome: "D"}}, Cents: int64(100 + k)}
					txid := fmt.Sprintf("derive%029d", k)
					want := chargeOf(kind, txid, in, created, locID, host)
					got := chargeOf(kind, txid, in, created, locID, host)
					errW := want.derive(ai, txid, of)
					errG := d.derive(got, txid)
					if fmt.Sprint(errW) != fmt.Sprint(errG) || !reflect.DeepEqual(want, got) {
						t.Fatalf("%+v host %q loc %d orderedFrom %d: derive %v\n%+v\nbatchDeriver %v\n%+v", ai, host, locID, of, errW, want.Body, errG, got.Body)
					}
					if errW == nil {
						n++
					}
					if errW == nil && d.tpl != nil && len(want.Body.Location) == d.tpl.n && want.Body.Location[:d.tpl.n-brVar] == d.tpl.head {
						templated++
					}
				}
			}
		}
	}
	if n < 9000 {
		t.Fatalf("only %d charges derived without error", n)
	}
	if templated < n/2 {
		t.Fatalf("only %d of %d charges' BR Codes from a template", templated, n)
	}
}

// A modality of zero is refused, named with its path.
func TestCheckCobVValorZeroModalidade(t *testing.T) {
	p := func(s string) string { return "cobsv[3].valor." + s }
	for _, c := range []struct {
		v    Valor
		want string
	}{
		{Valor{Multa: &Modalidade{Modalidade: 2, ValorPerc: "0.00"}}, "[{deve ser maior que zero cobsv[3].valor.multa.valorPerc 0.00}]"},
		{Valor{Juros: &Modalidade{Modalidade: 3, ValorPerc: "x"}}, "[{deve ser maior que zero cobsv[3].valor.juros.valorPerc x}]"},
		{Valor{Abatimento: &Modalidade{Modalidade: 1, ValorPerc: "0.00"}}, "[{deve ser maior que zero cobsv[3].valor.abatimento.valorPerc 0.00}]"},
		{Valor{Multa: &Modalidade{Modalidade: 2, ValorPerc: "2.00"}}, "[]"},
	} {
		if got := fmt.Sprint(checkCobVValor(c.v, 10000, time.Time{}, false, p)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.v, got, c.want)
		}
	}
}

// The template's tables, made from the 16 bits of the state, are
// rules.CRC16Update from each byte value, as tabulating all 512 did.
func TestBRTemplateTables(t *testing.T) {
	for _, post := range []string{"", "5204000053039865802BR5917LOJA EXEMPLO LTDA6008CURITIBA62070503***", "\x00\xff"} {
		loc := "pix.example.com/qr/v2/" + strings.Repeat("0", brVar)
		code := "00020101021226" + fmt.Sprintf("%02d", 4+len("br.gov.bcb.pix")+4+len(loc)) + "0014br.gov.bcb.pix25" + fmt.Sprintf("%02d", len(loc)) + loc + post + "6304"
		code += fmt.Sprintf("%04X", rules.CRC16Update(0xFFFF, code))
		got := newBRTemplate(loc, code)
		if got == nil {
			t.Fatalf("post %q: no template", post)
		}
		p0 := rules.CRC16Update(0, got.post)
		for i := range 256 {
			if hi, lo := rules.CRC16Update(uint16(i)<<8, got.post)^p0, rules.CRC16Update(uint16(i), got.post)^p0; got.postHi[i] != hi || got.postLo[i] != lo {
				t.Fatalf("post %q byte %d: %04x %04x, want %04x %04x", got.post, i, got.postHi[i], got.postLo[i], hi, lo)
			}
		}
	}
}
