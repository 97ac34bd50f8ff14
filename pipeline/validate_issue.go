package pipeline

import (
	"fmt"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// What a valid row issues: a carnet, a slip or a due-date Pix charge
// (cobv, with its split), built from the row's checked values.

func (vr *rowValidator) carnet(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Carnets
	repeats := int(rc.getInt(&s.Repeats, 0))
	due := vr.dueFrom(rc, &s.FirstDue)
	items, perParcel := vr.items(rc, s.Items)
	vr.checkRowMarketplace(rc, items, s.Items, "/issue/carnets")
	cfg, msg, md, disc, cdisc := vr.charges(rc, &s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, s.Discount, s.ConditionalDiscount, due)
	disc, cdisc = rc.cnabSlipDiscounts(disc, cdisc, s.Discount != nil, s.ConditionalDiscount != nil, due, "o carnê", "carnet")
	it.DueDate = due
	if repeats < 1 {
		repeats = 1
	}
	// Parcel values: without split_items every parcel carries the items;
	// with split_items the items' total is divided among the parcels, the
	// remainder cents on the first parcel (inferred; the service's own
	// rounding is not documented).
	values := make([]int64, repeats)
	if s.SplitItems {
		for k := range values {
			values[k] = perParcel / int64(repeats)
		}
		values[0] += perParcel % int64(repeats)
		it.AmountCents = perParcel
	} else {
		for k := range values {
			values[k] = perParcel
		}
		it.AmountCents = perParcel * int64(repeats)
	}
	if perParcel > 0 && values[len(values)-1] < MinSlipCents {
		rc.fail("valor_minimo", "value", nil,
			fmt.Sprintf("cada parcela fica em %s: o mínimo por cobrança é %s", rules.FormatBRL(values[len(values)-1]), rules.FormatBRL(MinSlipCents)),
			fmt.Sprintf("each parcel comes to %s: the minimum per charge is %s", rules.FormatBRL(values[len(values)-1]), rules.FormatBRL(MinSlipCents)))
	}
	if rc.errs > 0 {
		return
	}
	for k := range values {
		it.Parcels = append(it.Parcels, ParcelPlan{Number: k + 1, DueDate: rules.AddMonthsClamped(due, k), ValueCents: values[k]})
	}
	it.Carnet = &CarnetRequest{Items: items, Customer: p.customer(), ExpireAt: rules.FormatISODate(due), Repeats: repeats, SplitItems: s.SplitItems,
		Metadata: md, Configurations: cfg, Message: msg, Discount: disc, ConditionalDiscount: cdisc}
	if hasMarketplace(items) {
		shares := rules.SplitShares(toSplitItems(items), nil)
		for k, pp := range it.Parcels {
			month := pp.DueDate.Format("2006-01")
			for _, sh := range shares {
				c := sh.Cents
				if s.SplitItems {
					c = sh.Cents / int64(repeats)
					if k == 0 {
						c += sh.Cents % int64(repeats)
					}
				}
				it.Split = append(it.Split, results.Share{Recipient: sh.PayeeCode, Own: sh.Own, DueMonth: month, AmountCents: c})
			}
		}
	}
}

func (vr *rowValidator) slip(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Boletos
	due := vr.dueFrom(rc, &s.Due)
	items, total := vr.items(rc, s.Items)
	vr.checkRowMarketplace(rc, items, s.Items, "/issue/boletos")
	cfg, msg, md, disc, cdisc := vr.charges(rc, &s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, s.Discount, s.ConditionalDiscount, due)
	disc, cdisc = rc.cnabSlipDiscounts(disc, cdisc, s.Discount != nil, s.ConditionalDiscount != nil, due, "o boleto", "slip")
	if x, ok := rc.get(&s.DaysToWriteOff); ok {
		n := int(x.(int64))
		if cfg == nil {
			cfg = &Configurations{}
		}
		cfg.DaysToWriteOff = &n
	}
	it.DueDate, it.AmountCents = due, total
	if total > 0 && total < MinSlipCents {
		rc.fail("valor_minimo", "value", nil,
			fmt.Sprintf("total do boleto %s abaixo do mínimo de %s", rules.FormatBRL(total), rules.FormatBRL(MinSlipCents)),
			fmt.Sprintf("slip total %s below the minimum of %s", rules.FormatBRL(total), rules.FormatBRL(MinSlipCents)))
	}
	if rc.errs > 0 {
		return
	}
	it.Slip = &SlipRequest{Items: items, Metadata: md, Payment: SlipPayment{BankingBillet: BankingBillet{
		Customer: p.customer(), ExpireAt: rules.FormatISODate(due), Configurations: cfg, Message: msg, Discount: disc, ConditionalDiscount: cdisc}}}
	if hasMarketplace(items) {
		month := due.Format("2006-01")
		for _, sh := range rules.SplitShares(toSplitItems(items), nil) {
			it.Split = append(it.Split, results.Share{Recipient: sh.PayeeCode, Own: sh.Own, DueMonth: month, AmountCents: sh.Cents})
		}
	}
}

func (vr *rowValidator) pixMod(rc *rowCtx, m *PixModSpec) *Modalidade {
	if m == nil {
		return nil
	}
	for _, c := range vr.modc {
		if c.spec == m {
			return c.md
		}
	}
	x, ok := rc.get(&m.Valor)
	if !ok {
		return nil
	}
	md := &Modalidade{Modalidade: m.Modalidade, ValorPerc: rules.FormatPixAmount(x.(pm).v)}
	if !m.Valor.IsTemplate() {
		vr.modc = append(vr.modc, modCache{m, md})
	}
	return md
}

type modCache struct {
	spec *PixModSpec
	md   *Modalidade
}

func (vr *rowValidator) cobv(rc *rowCtx, it *Item, p payerInfo) {
	s := vr.job.Spec.Issue.Cobv
	due := vr.dueFrom(rc, &s.Due)
	var valor int64
	if s.Valor.Set {
		valor = rc.getInt(&s.Valor, 0)
	} else {
		valor = vr.valueColumn(rc, MaxPixCents)
	}
	it.DueDate, it.AmountCents = due, valor
	txid := ""
	if s.Txid.Set {
		txid = rc.getStr(&s.Txid)
	} else if t, tc := rc.text(iTxid); t != "" {
		if _, le := pTxid(t); le != nil {
			rc.failLim(le, FTxid, tc, "")
		} else {
			txid = t
		}
	}
	if txid != "" {
		if vr.txids == nil { // made on the first txid: most jobs have none
			vr.txids = newSeenSet(vr.seed, vr.maxRows)
		}
		if first := vr.txids.add(txid, rc.index, rc.row.Number); first != 0 {
			tc, _ := rc.cell(iTxid)
			rc.fail("txid_duplicado", FTxid, tc, fmt.Sprintf("txid %s repetido: já aparece na linha %d", txid, first), fmt.Sprintf("txid %s repeated: already on row %d", txid, first))
		}
	}
	chave := rc.getStr(&s.Chave)
	sol := rc.getStr(&s.Solicitacao)
	if m, mc := rc.text(iMessage); m != "" {
		if le := checkTextLen(m, rules.MaxSolicitacaoPagador, "solicitação ao pagador", "solicitacaoPagador"); le != nil {
			rc.failLim(le, FMessage, mc, "")
		}
		sol = m
	}
	val := CobvValor{Original: vr.strs.pixAmount(valor), Multa: vr.pixMod(rc, s.Multa), Juros: vr.pixMod(rc, s.Juros), Abatimento: vr.pixMod(rc, s.Abatimento)}
	if d := s.Desconto; d != nil {
		cd := &CobvDesconto{Modalidade: d.Modalidade}
		if d.Modalidade >= 3 {
			if x, ok := rc.get(&d.Valor); ok {
				cd.ValorPerc = rules.FormatPixAmount(x.(pm).v)
			}
		}
		for i := range d.Datas {
			dt, ok1 := rc.get(&d.Datas[i].Data)
			v, ok2 := rc.get(&d.Datas[i].Valor)
			if !ok1 || !ok2 {
				continue
			}
			rd := dt.(relDate)
			date := rd.abs
			if rd.abs.IsZero() {
				date = due.AddDate(0, 0, -rd.daysBefore)
			}
			if !due.IsZero() && date.After(due) {
				rc.fail("desconto_data", fmt.Sprintf("issue.cobv.desconto.datas.%d.data", i), nil,
					fmt.Sprintf("data do desconto %s depois do vencimento %s", formats.FormatDate(date), formats.FormatDate(due)),
					fmt.Sprintf("discount date %s after the due date %s", rules.FormatISODate(date), rules.FormatISODate(due)))
			}
			cd.DescontoDataFixa = append(cd.DescontoDataFixa, DataValor{Data: rules.FormatISODate(date), ValorPerc: rules.FormatPixAmount(v.(pm).v)})
		}
		val.Desconto = cd
	}
	rc.cnabCobvDiscounts(&val, s.Desconto != nil, s.Abatimento != nil, due)
	var split *PixSplitConfig
	if sp := s.Split; sp != nil && rc.errs == 0 {
		split = vr.pixSplit(rc, sp, valor, due, it)
	}
	if rc.errs > 0 {
		return
	}
	dev := Devedor{Nome: p.name, Email: p.email}
	if p.isCNPJ {
		dev.CNPJ = p.doc
	} else {
		dev.CPF = p.doc
	}
	if p.hasAddr {
		a := &p.addr
		dev.Logradouro = vr.strs.join(a.Street, a.Number, a.Complement)
		dev.Cidade, dev.UF, dev.CEP = a.City, a.State, a.Zipcode
	}
	validade := s.ValidadeAposVencimento
	if validade == 0 {
		validade = DefaultValidade
	}
	*vr.cobvSlot = CobvRequest{Calendario: Calendario{DataDeVencimento: vr.isoDate(due), ValidadeAposVencimento: validade},
		Txid: txid, Devedor: dev, Valor: val, Chave: chave, SolicitacaoPagador: sol}
	it.Cobv = vr.cobvSlot
	it.PixSplit = split
}

// pixSplit resolves the row's Pix split configuration and its shares:
// a percentage repasse gets floor(valor × pct / 10000), a fixed one its
// value, the remainder goes to the own account.
func (vr *rowValidator) pixSplit(rc *rowCtx, sp *PixSplitSpec, valor int64, due time.Time, it *Item) *PixSplitConfig {
	div := sp.DivisaoTarifa
	if div == "" {
		div = "assumir_total"
	}
	mp, _ := rc.get(&sp.MinhaParte.Valor)
	rs := rules.PixSplit{DivisaoTarifa: div, MinhaParte: rules.PixSplitPart{Tipo: sp.MinhaParte.Tipo}}
	if x, ok := mp.(pm); ok {
		rs.MinhaParte.Valor = x.v
	}
	constant := true
	for i := range sp.Repasses {
		r := &sp.Repasses[i]
		part := rules.PixSplitPart{Tipo: r.Tipo, CPF: rules.CleanDocument(rc.getStr(&r.CPF)), CNPJ: rules.CleanDocument(rc.getStr(&r.CNPJ)), Conta: rc.getStr(&r.Conta)}
		if x, ok := rc.get(&r.Valor); ok {
			part.Valor = x.(pm).v
		}
		constant = constant && !r.Valor.IsTemplate() && !r.CPF.IsTemplate() && !r.CNPJ.IsTemplate() && !r.Conta.IsTemplate()
		rs.Repasses = append(rs.Repasses, part)
	}
	constant = constant && !sp.MinhaParte.Valor.IsTemplate()
	if rc.errs > 0 {
		return nil
	}
	if !constant {
		for _, v := range rules.CheckPixSplit(rs, vr.job.Endpoint.Conta) {
			rc.fail(ruleCode(v.Rule), strings.ReplaceAll(strings.TrimPrefix("/issue/cobv"+pixPointer(v.Pointer), "/"), "/", "."), nil, v.Message, v.MessageEN)
		}
	}
	month := due.Format("2006-01")
	left := valor
	var shares []results.Share
	var sumFixed int64
	for _, r := range rs.Repasses {
		c := r.Valor
		if r.Tipo == rules.PixSplitPercent {
			c = valor * r.Valor / 10000
		} else {
			sumFixed += r.Valor
		}
		if c > left {
			c = left
		}
		left -= c
		shares = append(shares, results.Share{Recipient: r.Conta, DueMonth: month, AmountCents: c})
	}
	if rs.MinhaParte.Tipo == rules.PixSplitFixed {
		sumFixed += rs.MinhaParte.Valor
		if sumFixed != valor {
			rc.fail("pixsplit_fixo", "issue.cobv.split", nil,
				fmt.Sprintf("split fixo soma %s, diferente do valor da cobrança %s", rules.FormatBRL(sumFixed), rules.FormatBRL(valor)),
				fmt.Sprintf("the fixed split totals %s, not the charge value %s", rules.FormatBRL(sumFixed), rules.FormatBRL(valor)))
		}
	}
	if rc.errs > 0 {
		return nil
	}
	it.Split = append([]results.Share{{Own: true, DueMonth: month, AmountCents: left}}, shares...)
	cfg := &PixSplitConfig{Descricao: sp.Descricao, Lancamento: Lancamento{Imediato: true},
		Split: PixSplit{DivisaoTarifa: div, MinhaParte: PixSplitPart{Tipo: rs.MinhaParte.Tipo, Valor: rules.FormatPixAmount(rs.MinhaParte.Valor)}}}
	var key strings.Builder
	key.WriteString(div + "|" + cfg.Split.MinhaParte.Tipo + ":" + cfg.Split.MinhaParte.Valor)
	for _, r := range rs.Repasses {
		cfg.Split.Repasses = append(cfg.Split.Repasses, PixSplitPart{Tipo: r.Tipo, Valor: rules.FormatPixAmount(r.Valor), Favorecido: &Favorecido{CPF: r.CPF, CNPJ: r.CNPJ, Conta: r.Conta}})
		fmt.Fprintf(&key, "|%s:%d:%s:%s:%s", r.Tipo, r.Valor, r.CPF, r.CNPJ, r.Conta)
	}
	it.SplitKey = key.String()
	return cfg
}
