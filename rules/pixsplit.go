package rules

import (
	"fmt"
)

// PixSplitPart is one share of a Pix split configuration. Tipo is
// "porcentagem" (Valor in hundredths of a percent, "60.00" = 6000) or
// "fixo" (Valor in cents). CPF, CNPJ and Conta describe the favorecido of a
// repasse; they are empty for minhaParte.
type PixSplitPart struct {
	Tipo             string
	Valor            int64
	CPF, CNPJ, Conta string
}

// PixSplit is the split section of a Pix split configuration
// (POST /v2/gn/split/config).
type PixSplit struct {
	DivisaoTarifa string
	MinhaParte    PixSplitPart
	Repasses      []PixSplitPart
}

// Pix split part types.
const (
	PixSplitPercent = "porcentagem"
	PixSplitFixed   = "fixo"
)

// CheckPixSplit checks a Pix split configuration against ownConta (the
// account that configures it) and returns every violation, with JSON
// pointers into the request body (/split/...). Rules: divisaoTarifa is
// "assumir_total" or "proporcional"; each tipo is "porcentagem" or "fixo"
// and all parts use the same tipo; 1 to 20 repasses; each repasse has a
// positive valor and a favorecido with a numeric conta (not ownConta, not
// repeated) and exactly one valid document (cpf or cnpj); with
// "porcentagem", minhaParte plus the repasses total exactly 100.00%.
// With "fixo" the total is compared with the charge value elsewhere.
func CheckPixSplit(s PixSplit, ownConta string) []Violation {
	var vs []Violation
	add := func(rule, ptr, pt, en string) {
		vs = append(vs, Violation{Rule: "pixsplit." + rule, Pointer: ptr, Message: pt, MessageEN: en})
	}
	switch s.DivisaoTarifa {
	case "assumir_total", "proporcional":
	default:
		add("divisaoTarifa", "/split/divisaoTarifa",
			fmt.Sprintf("divisaoTarifa %q inválida: use assumir_total ou proporcional", s.DivisaoTarifa),
			fmt.Sprintf("divisaoTarifa %q is invalid: use assumir_total or proporcional", s.DivisaoTarifa))
	}
	tipo := s.MinhaParte.Tipo
	tipoOK := tipo == PixSplitPercent || tipo == PixSplitFixed
	if !tipoOK {
		add("tipo", "/split/minhaParte/tipo",
			fmt.Sprintf("tipo %q inválido: use porcentagem ou fixo", tipo),
			fmt.Sprintf("tipo %q is invalid: use porcentagem or fixo", tipo))
	}
	if s.MinhaParte.Valor < 0 {
		add("valor", "/split/minhaParte/valor",
			fmt.Sprintf("valor %d negativo", s.MinhaParte.Valor),
			fmt.Sprintf("valor %d is negative", s.MinhaParte.Valor))
	}
	if len(s.Repasses) == 0 {
		add("repasses", "/split/repasses",
			"informe ao menos um repasse",
			"give at least one repasse")
	}
	if len(s.Repasses) > MaxPixSplitAccounts {
		add("contas", "/split/repasses",
			fmt.Sprintf("%d repasses: o split aceita no máximo %d contas", len(s.Repasses), MaxPixSplitAccounts),
			fmt.Sprintf("%d repasses: a split accepts at most %d accounts", len(s.Repasses), MaxPixSplitAccounts))
	}
	mixed := false
	sum := s.MinhaParte.Valor
	seen := map[string]int{}
	for i, r := range s.Repasses {
		p := fmt.Sprintf("/split/repasses/%d", i)
		switch {
		case r.Tipo != PixSplitPercent && r.Tipo != PixSplitFixed:
			add("tipo", p+"/tipo",
				fmt.Sprintf("tipo %q inválido: use porcentagem ou fixo", r.Tipo),
				fmt.Sprintf("tipo %q is invalid: use porcentagem or fixo", r.Tipo))
		case tipoOK && r.Tipo != tipo:
			mixed = true
			add("mistura", p+"/tipo",
				fmt.Sprintf("tipo %q diferente de minhaParte (%q): não é permitido misturar porcentagem e valor fixo", r.Tipo, tipo),
				fmt.Sprintf("tipo %q differs from minhaParte (%q): percentage and fixed values cannot be mixed", r.Tipo, tipo))
		}
		if r.Valor <= 0 {
			add("valor", p+"/valor",
				fmt.Sprintf("valor do repasse deve ser positivo; recebido %d", r.Valor),
				fmt.Sprintf("the repasse valor must be positive; got %d", r.Valor))
		} else if sum <= 1<<62 && r.Valor <= 1<<62 {
			sum += r.Valor
		} else {
			sum = 1 << 62
		}
		fp := p + "/favorecido"
		switch {
		case r.Conta == "":
			add("conta", fp+"/conta",
				"favorecido sem conta",
				"favorecido without conta")
		case !allDigits(r.Conta):
			add("conta", fp+"/conta",
				fmt.Sprintf("conta %q inválida: apenas dígitos", r.Conta),
				fmt.Sprintf("conta %q is invalid: digits only", r.Conta))
		case ownConta != "" && r.Conta == ownConta:
			add("propriaConta", fp+"/conta",
				fmt.Sprintf("conta %s é a própria conta: o repasse não pode ser para si mesmo", r.Conta),
				fmt.Sprintf("conta %s is your own account: a repasse cannot go to yourself", r.Conta))
		default:
			if prev, dup := seen[r.Conta]; dup {
				add("contaRepetida", fp+"/conta",
					fmt.Sprintf("conta %s já aparece no repasse %d", r.Conta, prev),
					fmt.Sprintf("conta %s already appears in repasse %d", r.Conta, prev))
			} else {
				seen[r.Conta] = i
			}
		}
		switch {
		case r.CPF != "" && r.CNPJ != "":
			add("documento", fp,
				"informe cpf ou cnpj do favorecido, não os dois",
				"give the favorecido's cpf or cnpj, not both")
		case r.CPF == "" && r.CNPJ == "":
			add("documento", fp,
				"favorecido sem cpf nem cnpj",
				"favorecido without cpf or cnpj")
		case r.CPF != "" && !ValidCPF(r.CPF):
			add("documento", fp+"/cpf",
				fmt.Sprintf("cpf %s inválido", MaskDocument(r.CPF)),
				fmt.Sprintf("cpf %s is invalid", MaskDocument(r.CPF)))
		case r.CNPJ != "" && !ValidCNPJ(r.CNPJ):
			add("documento", fp+"/cnpj",
				fmt.Sprintf("cnpj %s inválido", r.CNPJ),
				fmt.Sprintf("cnpj %s is invalid", r.CNPJ))
		}
	}
	if tipo == PixSplitPercent && !mixed && len(s.Repasses) > 0 && sum != 10000 {
		if sum > 10000 {
			add("soma", "/split",
				fmt.Sprintf("minhaParte e repasses somam %s, acima de 100,00%%", pct(sum)),
				fmt.Sprintf("minhaParte and repasses total %d.%02d%%, above 100.00%%", sum/100, sum%100))
		} else {
			add("soma", "/split",
				fmt.Sprintf("minhaParte e repasses somam %s, abaixo de 100,00%%", pct(sum)),
				fmt.Sprintf("minhaParte and repasses total %d.%02d%%, below 100.00%%", sum/100, sum%100))
		}
	}
	return vs
}
