package rules

import (
	"fmt"
	"strings"
	"testing"
)

const ownConta = "1234567"

func fav(conta string) PixSplitPart {
	return PixSplitPart{Tipo: PixSplitPercent, Valor: 2000, CPF: "52998224725", Conta: conta}
}

func goodPixSplit() PixSplit {
	return PixSplit{
		DivisaoTarifa: "assumir_total",
		MinhaParte:    PixSplitPart{Tipo: PixSplitPercent, Valor: 6000},
		Repasses: []PixSplitPart{
			fav("7654321"),
			{Tipo: PixSplitPercent, Valor: 2000, CNPJ: "12.ABC.345/01DE-35", Conta: "555"},
		},
	}
}

func TestCheckPixSplitAccepts(t *testing.T) {
	if vs := CheckPixSplit(goodPixSplit(), ownConta); len(vs) != 0 {
		t.Fatalf("%+v", vs)
	}
	fixed := PixSplit{DivisaoTarifa: "proporcional", MinhaParte: PixSplitPart{Tipo: PixSplitFixed, Valor: 0},
		Repasses: []PixSplitPart{{Tipo: PixSplitFixed, Valor: 1500, CNPJ: "11222333000181", Conta: "42"}}}
	if vs := CheckPixSplit(fixed, ownConta); len(vs) != 0 {
		t.Fatalf("fixed: %+v", vs)
	}
	// 20 accounts is the limit, still fine (minhaParte 0% + 20 x 5%).
	s := PixSplit{DivisaoTarifa: "assumir_total", MinhaParte: PixSplitPart{Tipo: PixSplitPercent}}
	for i := range 20 {
		p := fav(fmt.Sprint(100 + i))
		p.Valor = 500
		s.Repasses = append(s.Repasses, p)
	}
	if vs := CheckPixSplit(s, ownConta); len(vs) != 0 {
		t.Fatalf("20 accounts: %+v", vs)
	}
}

func TestCheckPixSplitRules(t *testing.T) {
	type mod func(*PixSplit)
	cases := []struct {
		name    string
		m       mod
		rule    string
		pointer string
	}{
		{"sum below 100%", func(s *PixSplit) { s.MinhaParte.Valor = 5999 }, "pixsplit.soma", "/split"},
		{"sum above 100%", func(s *PixSplit) { s.Repasses[1].Valor = 2001 }, "pixsplit.soma", "/split"},
		{"mixed percent and fixed", func(s *PixSplit) { s.Repasses[1].Tipo = PixSplitFixed }, "pixsplit.mistura", "/split/repasses/1/tipo"},
		{"unknown tipo", func(s *PixSplit) { s.Repasses[0].Tipo = "percentual" }, "pixsplit.tipo", "/split/repasses/0/tipo"},
		{"unknown minhaParte tipo", func(s *PixSplit) { s.MinhaParte.Tipo = "" }, "pixsplit.tipo", "/split/minhaParte/tipo"},
		{"bad divisaoTarifa", func(s *PixSplit) { s.DivisaoTarifa = "dividir" }, "pixsplit.divisaoTarifa", "/split/divisaoTarifa"},
		{"own account", func(s *PixSplit) { s.Repasses[1].Conta = ownConta }, "pixsplit.propriaConta", "/split/repasses/1/favorecido/conta"},
		{"no conta", func(s *PixSplit) { s.Repasses[0].Conta = "" }, "pixsplit.conta", "/split/repasses/0/favorecido/conta"},
		{"conta not numeric", func(s *PixSplit) { s.Repasses[0].Conta = "12-3" }, "pixsplit.conta", "/split/repasses/0/favorecido/conta"},
		{"conta repeated", func(s *PixSplit) { s.Repasses[1].Conta = "7654321" }, "pixsplit.contaRepetida", "/split/repasses/1/favorecido/conta"},
		{"cpf and cnpj", func(s *PixSplit) { s.Repasses[0].CNPJ = "11222333000181" }, "pixsplit.documento", "/split/repasses/0/favorecido"},
		{"no document", func(s *PixSplit) { s.Repasses[1].CNPJ = "" }, "pixsplit.documento", "/split/repasses/1/favorecido"},
		{"bad cpf", func(s *PixSplit) { s.Repasses[0].CPF = "111.111.111-11" }, "pixsplit.documento", "/split/repasses/0/favorecido/cpf"},
		{"bad cnpj", func(s *PixSplit) { s.Repasses[1].CNPJ = "12.ABC.345/01DE-36" }, "pixsplit.documento", "/split/repasses/1/favorecido/cnpj"},
		{"no repasses", func(s *PixSplit) { s.Repasses = nil; s.MinhaParte.Valor = 10000 }, "pixsplit.repasses", "/split/repasses"},
		{"21 accounts", func(s *PixSplit) {
			s.Repasses = nil
			s.MinhaParte.Valor = 10000 - 21*100
			for i := range 21 {
				p := fav(fmt.Sprint(100 + i))
				p.Valor = 100
				s.Repasses = append(s.Repasses, p)
			}
		}, "pixsplit.contas", "/split/repasses"},
		{"fixed zero repasse", func(s *PixSplit) {
			s.MinhaParte = PixSplitPart{Tipo: PixSplitFixed, Valor: 100}
			s.Repasses = []PixSplitPart{{Tipo: PixSplitFixed, Valor: 0, CPF: "52998224725", Conta: "9"}}
		}, "pixsplit.valor", "/split/repasses/0/valor"},
		{"negative minhaParte", func(s *PixSplit) {
			s.MinhaParte = PixSplitPart{Tipo: PixSplitFixed, Valor: -1}
			s.Repasses = []PixSplitPart{{Tipo: PixSplitFixed, Valor: 10, CPF: "52998224725", Conta: "9"}}
		}, "pixsplit.valor", "/split/minhaParte/valor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := goodPixSplit()
			s.Repasses = append([]PixSplitPart(nil), s.Repasses...)
			c.m(&s)
			vs := CheckPixSplit(s, ownConta)
			if len(vs) != 1 {
				t.Fatalf("got %d violations, want 1: %+v", len(vs), vs)
			}
			if vs[0].Rule != c.rule || vs[0].Pointer != c.pointer {
				t.Fatalf("got %s at %s, want %s at %s (%s)", vs[0].Rule, vs[0].Pointer, c.rule, c.pointer, vs[0].Message)
			}
			if vs[0].Message == "" || vs[0].MessageEN == "" {
				t.Fatal("empty message")
			}
		})
	}
}

func TestCheckPixSplitMessages(t *testing.T) {
	s := goodPixSplit()
	s.MinhaParte.Valor = 6050
	vs := CheckPixSplit(s, ownConta)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "100,50%") || !strings.Contains(vs[0].MessageEN, "100.50%") {
		t.Fatalf("%+v", vs)
	}
	// A bad CPF is masked in the message.
	s = goodPixSplit()
	s.Repasses[0].CPF = "529.982.247-26"
	vs = CheckPixSplit(s, ownConta)
	if len(vs) != 1 || strings.Contains(vs[0].Message, "52998224726") || !strings.Contains(vs[0].Message, "***.982.247-**") {
		t.Fatalf("%+v", vs)
	}
}
