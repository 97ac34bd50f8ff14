package pipeline

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// parser converts a value's text (constant or per row) into its typed form
// and checks its limits.
type parser func(s string) (any, *limitErr)

// valueInfo is what the checker attaches to a Value.
type valueInfo struct {
	ptr    string // JSON pointer in the job
	field  string // job field name for problems, e.g. "issue.carnets.fine"
	parse  parser
	parsed any // constant values, parsed at load
}

// checker runs the load-time checks and prepares every Value of the chosen
// kind: constants are parsed and checked once (problems at their line and
// column); templates get their parser for the rows.
type checker struct {
	d *decoder
	j *Job
}

func (c *checker) fail(ptr, code, pt, en string) {
	pos := c.j.Position(ptr)
	c.d.probs = append(c.d.probs, JobProblem{File: c.d.file, Line: pos.Line, Column: pos.Column, Pointer: ptr, Code: code, Message: pt, MessageEN: en})
}

// prep attaches a parser to v and parses it now when constant.
func (c *checker) prep(v *Value, ptr string, p parser) {
	if v == nil || !v.Set {
		return
	}
	v.info = &valueInfo{ptr: ptr, field: strings.ReplaceAll(strings.TrimPrefix(ptr, "/"), "/", "."), parse: p}
	if v.IsTemplate() {
		return
	}
	x, le := p(v.Raw)
	if le != nil {
		c.fail(ptr, le.code, le.pt, le.en)
		return
	}
	v.info.parsed = x
}

// Parsers.

func pText(max int, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		if max > 0 {
			if le := checkTextLen(s, max, what, whatEN); le != nil {
				return nil, le
			}
		}
		return s, nil
	}
}

func pRequiredText(max int, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		if strings.TrimSpace(s) == "" {
			return nil, lim("campo_vazio", what+" está vazio", whatEN+" is empty")
		}
		return pText(max, what, whatEN)(strings.TrimSpace(s))
	}
}

func fromValueErr(err error, code string) *limitErr {
	if ve, ok := err.(*formats.ValueError); ok {
		return lim(code, ve.Message, ve.MessageEN)
	}
	return lim(code, err.Error(), localizedEN(err))
}

func pMoney(positive bool, max int64, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		v, err := formats.ParseMoney(s)
		if err != nil {
			return nil, fromValueErr(err, "valor_invalido")
		}
		if positive {
			if le := checkPositive(v, what, whatEN); le != nil {
				return nil, le
			}
		}
		if max > 0 && v > max {
			return nil, lim("valor_acima_limite",
				fmt.Sprintf("%s %s acima do limite de %s", what, rules.FormatBRL(v), rules.FormatBRL(max)),
				fmt.Sprintf("%s %s above the limit of %s", whatEN, rules.FormatBRL(v), rules.FormatBRL(max)))
		}
		return v, nil
	}
}

func pPercent(scale int, min, max int64, code, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		v, err := formats.ParsePercent(s, scale)
		if err != nil {
			return nil, fromValueErr(err, "percentual_invalido")
		}
		if le := checkRange(v, min, max, code, what, whatEN, fmtPct(scale)); le != nil {
			return nil, le
		}
		return v, nil
	}
}

func pInt(min, max int64, code, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		var v int64
		if _, err := fmt.Sscan(strings.TrimSpace(s), &v); err != nil || strings.ContainsAny(strings.TrimSpace(s), ".,") {
			return nil, lim("inteiro_invalido", fmt.Sprintf("%s %q não é um número inteiro", what, s), fmt.Sprintf("%s %q is not an integer", whatEN, s))
		}
		if le := checkRange(v, min, max, code, what, whatEN, fmtInt); le != nil {
			return nil, le
		}
		return v, nil
	}
}

func (c *checker) pDue(kind results.Kind) parser {
	today := c.j.Today
	return func(s string) (any, *limitErr) {
		d, err := ParseDateExpr(s, today)
		if err != nil {
			return nil, fromValueErr(err, "data_invalida")
		}
		if le := checkDue(d, today, kind); le != nil {
			return nil, le
		}
		return d, nil
	}
}

func (c *checker) pDate() parser {
	today := c.j.Today
	return func(s string) (any, *limitErr) {
		d, err := ParseDateExpr(s, today)
		if err != nil {
			return nil, fromValueErr(err, "data_invalida")
		}
		return d, nil
	}
}

// pRelDate accepts a date expression or "-Nd" meaning N days before the
// due date; it returns a relDate.
type relDate struct {
	abs        time.Time
	daysBefore int
}

func (c *checker) pDateOrBefore() parser {
	today := c.j.Today
	return func(s string) (any, *limitErr) {
		t := strings.TrimSpace(s)
		if strings.HasPrefix(t, "-") {
			var n int
			if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSuffix(t, "d"), " dias")+"", "-%d", &n); err == nil && n >= 0 {
				return relDate{daysBefore: n}, nil
			}
		}
		d, err := ParseDateExpr(s, today)
		if err != nil {
			return nil, fromValueErr(err, "data_invalida")
		}
		return relDate{abs: d}, nil
	}
}

func pURL(s string) (any, *limitErr) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, lim("url_invalida", fmt.Sprintf("endereço %q inválido: use http:// ou https://", s), fmt.Sprintf("invalid address %q: use http:// or https://", s))
	}
	return strings.TrimSpace(s), nil
}

func pPixKey(s string) (any, *limitErr) {
	k := rules.NormalizePixKey(strings.TrimSpace(s))
	if _, err := rules.PixKeyType(k); err != nil {
		// the reason without rules' own "chave Pix "...": " prefix (the key
		// as normalised, which would name it twice); rules words it in
		// Portuguese only
		why := strings.TrimPrefix(err.Error(), fmt.Sprintf("chave Pix %q: ", k))
		return nil, lim("chave_pix_invalida", fmt.Sprintf("chave Pix %q inválida: %s", s, why),
			fmt.Sprintf("invalid Pix key %q: use a CPF, a CNPJ, a phone as +55..., an e-mail in lowercase or a random key (lowercase UUID)", s))
	}
	return k, nil
}

func pTxid(s string) (any, *limitErr) {
	s = strings.TrimSpace(s)
	if !rules.ValidTxid(s) {
		return nil, lim("txid_invalido", fmt.Sprintf("txid %q inválido: use de 26 a 35 letras e dígitos, sem símbolos", s), fmt.Sprintf("invalid txid %q: use 26 to 35 letters and digits, no symbols", s))
	}
	return s, nil
}

func pPayee(s string) (any, *limitErr) {
	s = strings.TrimSpace(s)
	if !rules.ValidPayeeCode(s) {
		return nil, lim("payee_code_invalido", fmt.Sprintf("payee_code %q inválido: 32 caracteres hexadecimais", s), fmt.Sprintf("invalid payee_code %q: 32 hexadecimal characters", s))
	}
	return s, nil
}

// pPercentOrMoney parses "5%" as a percentage (scale 2) and anything else
// as money; the result is a pm.
type pm struct {
	percent bool
	v       int64
}

func pPercentOrMoney(allowPct, allowMoney bool, what, whatEN string) parser {
	return func(s string) (any, *limitErr) {
		if isPercent(s) {
			if !allowPct {
				return nil, lim("tipo_valor", what+": use um valor em reais, não um percentual", whatEN+": use an amount in reais, not a percentage")
			}
			v, le := pPercent(2, 1, 10000, "percentual_fora_limite", what, whatEN)(s)
			if le != nil {
				return nil, le
			}
			return pm{true, v.(int64)}, nil
		}
		if !allowMoney {
			return nil, lim("tipo_valor", what+": use um percentual (ex.: 2%)", whatEN+": use a percentage (e.g. 2%)")
		}
		v, le := pMoney(true, 0, what, whatEN)(s)
		if le != nil {
			return nil, le
		}
		return pm{false, v.(int64)}, nil
	}
}

// Known routes per kind, for rate and quota.
var routesByKind = map[results.Kind][]string{
	results.Carnets: {"POST /v1/carnet"},
	results.Boletos: {"POST /v1/charge/one-step"},
	results.Cobv:    {"PUT /v2/lotecobv/:id", "GET /v2/lotecobv/:id", "GET /v2/cobv", "PUT /v2/gn/split/config/:id", "PUT /v2/gn/split/cobv/:txid/vinculo/:splitConfigId"},
}

func (c *checker) check() {
	s, j := c.j.Spec, c.j
	j.Name = s.Name
	if j.Name == "" {
		j.Name = strings.TrimSuffix(filepath.Base(j.File), filepath.Ext(j.File))
	}
	j.Service = s.Service
	if j.Service == "" {
		j.Service = "embedded"
	}
	if s.Endpoint != nil {
		e := s.Endpoint
		j.Endpoint = Endpoint{BaseURL: e.BaseURL, PixBaseURL: e.PixBaseURL, ClientID: e.ClientID, ClientSecret: e.ClientSecret,
			Certificate: e.Certificate, CertificatePassword: e.CertificatePassword, PayeeCode: e.PayeeCode, Conta: e.Conta}
		for ptr, u := range map[string]string{"/endpoint/base_url": e.BaseURL, "/endpoint/pix_base_url": e.PixBaseURL} {
			if u != "" {
				if _, le := pURL(u); le != nil {
					c.fail(ptr, le.code, le.pt, le.en)
				}
			}
		}
		if e.PayeeCode != "" && !rules.ValidPayeeCode(e.PayeeCode) {
			c.fail("/endpoint/payee_code", "payee_code_invalido", fmt.Sprintf("payee_code %q inválido: 32 caracteres hexadecimais", e.PayeeCode), fmt.Sprintf("invalid payee_code %q: 32 hexadecimal characters", e.PayeeCode))
		}
		if e.Certificate != "" && !filepath.IsAbs(e.Certificate) {
			j.Endpoint.Certificate = filepath.Join(j.Dir, e.Certificate)
		}
	}
	j.InputFile = s.Input.File
	if j.InputFile != "" && !filepath.IsAbs(j.InputFile) {
		j.InputFile = filepath.Join(j.Dir, j.InputFile)
	}
	j.Sheet, j.KeyHeader, j.Columns = s.Input.Sheet, s.Input.Key, s.Input.Columns
	c.checkCNABInput(j, s)
	for f := range s.Input.Columns {
		if _, ok := FieldByID(strings.TrimPrefix(f, "payer.")); !ok {
			ids := make([]string, len(Catalogue))
			for i, f := range Catalogue {
				ids[i] = f.ID
			}
			c.fail("/input/columns/"+escapePointer(f), "campo_desconhecido",
				fmt.Sprintf("campo %q desconhecido em input.columns; campos: %s", f, strings.Join(ids, ", ")),
				fmt.Sprintf("unknown field %q in input.columns; fields: %s", f, strings.Join(ids, ", ")))
		}
	}
	j.OnInvalid = s.OnInvalid
	if j.OnInvalid == "" {
		j.OnInvalid = "stop"
	}
	j.Concurrency = s.Concurrency
	if j.Concurrency == 0 {
		j.Concurrency = DefaultConcurrency
	}
	if j.Concurrency < 1 || j.Concurrency > 256 {
		c.fail("/concurrency", "fora_limite", fmt.Sprintf("concurrency %d fora do limite de 1 a 256", s.Concurrency), fmt.Sprintf("concurrency %d out of range 1 to 256", s.Concurrency))
	}
	j.Reports = Reports{Dir: DefaultReportsDir, Formats: []string{"xlsx", "html", "csv", "json"}, Lang: "pt"}
	if r := s.Reports; r != nil {
		if r.Dir != "" {
			j.Reports.Dir = r.Dir
		}
		if len(r.Formats) > 0 {
			j.Reports.Formats = r.Formats
		}
		if r.Lang != "" {
			j.Reports.Lang = r.Lang
		}
	}
	if !filepath.IsAbs(j.Reports.Dir) {
		j.Reports.Dir = filepath.Join(j.Dir, j.Reports.Dir)
	}

	n := 0
	if s.Issue.Carnets != nil {
		n++
		j.Kind = results.Carnets
	}
	if s.Issue.Cobv != nil {
		n++
		j.Kind = results.Cobv
	}
	if s.Issue.Boletos != nil {
		n++
		j.Kind = results.Boletos
	}
	if n == 0 && j.InputFormat != "" {
		// a CNAB remessa issues slips unless the job says otherwise
		s.Issue.Boletos = &SlipSpec{}
		n, j.Kind = 1, results.Boletos
	}
	if j.InputFormat != "" {
		cnabDefaults(s)
	}
	switch {
	case n == 0:
		c.fail("/issue", "emissao_ausente", "informe o que emitir em issue: carnets, cobv ou boletos", "say what to issue under issue: carnets, cobv or boletos")
		return
	case n > 1:
		c.fail("/issue", "emissao_multipla", "issue deve ter exatamente um de carnets, cobv ou boletos", "issue must hold exactly one of carnets, cobv or boletos")
		return
	}
	known := map[string]bool{"default": true}
	for _, r := range routesByKind[j.Kind] {
		known[r] = true
	}
	knownList := append([]string{"default"}, routesByKind[j.Kind]...)
	for name, m := range map[string]map[string]int{"rate": s.Rate, "quota": s.Quota} {
		for r, v := range m {
			if !known[r] {
				c.fail("/"+name+"/"+escapePointer(r), "rota_desconhecida",
					fmt.Sprintf("rota %q desconhecida para %s; use: %s", r, j.Kind, strings.Join(knownList, ", ")),
					fmt.Sprintf("unknown route %q for %s; use: %s", r, j.Kind, strings.Join(knownList, ", ")))
			} else if v <= 0 {
				c.fail("/"+name+"/"+escapePointer(r), "fora_limite", fmt.Sprintf("%s deve ser maior que zero", name), fmt.Sprintf("%s must be greater than zero", name))
			}
		}
	}
	j.Rate, j.Quota = s.Rate, s.Quota

	switch j.Kind {
	case results.Carnets:
		c.checkCarnet(s.Issue.Carnets)
	case results.Boletos:
		c.checkSlip(s.Issue.Boletos)
	case results.Cobv:
		c.checkCobv(s.Issue.Cobv)
	}
	c.checkReminders(s.Reminders)
}

func (c *checker) checkItems(items []ItemSpec, base string) {
	for i := range items {
		it := &items[i]
		p := fmt.Sprintf("%s/items/%d", base, i)
		c.prep(&it.Name, p+"/name", pRequiredText(MaxNameLen, "nome do item", "item name"))
		c.prep(&it.Value, p+"/value", pMoney(true, MaxChargeCents, "valor do item", "item value"))
		c.prep(&it.Amount, p+"/amount", pInt(1, 1_000_000, "quantidade_fora_limite", "quantidade", "amount"))
		if m := it.Marketplace; m != nil {
			for k := range m.Repasses {
				r := &m.Repasses[k]
				rp := fmt.Sprintf("%s/marketplace/repasses/%d", p, k)
				c.prep(&r.PayeeCode, rp+"/payee_code", pPayee)
				c.prep(&r.Percentage, rp+"/percentage", pPercent(2, 0, 1_000_000, "percentual_fora_limite", "percentual do repasse", "repasse percentage"))
				c.prep(&r.Fixed, rp+"/fixed", pMoney(false, 0, "valor fixo do repasse", "repasse fixed value"))
			}
		}
	}
	if marketplaceConstant(items) && len(c.d.probs) == 0 {
		sitems := make([]rules.SplitItem, len(items))
		for i := range items {
			sitems[i] = splitItemConst(&items[i])
		}
		for _, v := range rules.CheckMarketplace(sitems, nil, c.j.Endpoint.PayeeCode) {
			c.fail(base+v.Pointer, ruleCode(v.Rule), v.Message, v.MessageEN)
		}
	}
}

// marketplaceConstant reports whether every value the marketplace rules
// look at is known at load (no templates), so they are checked once.
func marketplaceConstant(items []ItemSpec) bool {
	has := false
	for i := range items {
		it := &items[i]
		if it.Marketplace != nil {
			has = true
		}
		if it.Value.IsTemplate() || it.Amount.IsTemplate() || !it.Value.Set {
			if it.Marketplace != nil {
				return false
			}
		}
		if m := it.Marketplace; m != nil {
			for _, r := range m.Repasses {
				if r.PayeeCode.IsTemplate() || r.Percentage.IsTemplate() || r.Fixed.IsTemplate() {
					return false
				}
			}
		}
	}
	return has
}

func splitItemConst(it *ItemSpec) rules.SplitItem {
	si := rules.SplitItem{ValueCents: constInt(&it.Value), Amount: constInt(&it.Amount)}
	if m := it.Marketplace; m != nil {
		mk := &rules.Marketplace{Mode: m.Mode}
		for i := range m.Repasses {
			r := &m.Repasses[i]
			mk.Repasses = append(mk.Repasses, rules.Repasse{PayeeCode: constStr(&r.PayeeCode), Percentage: constInt(&r.Percentage), Fixed: constInt(&r.Fixed)})
		}
		si.Marketplace = mk
	}
	return si
}

func constInt(v *Value) int64 {
	if v.info != nil {
		if x, ok := v.info.parsed.(int64); ok {
			return x
		}
	}
	return 0
}

func constStr(v *Value) string {
	if v.info != nil {
		if x, ok := v.info.parsed.(string); ok {
			return x
		}
	}
	return ""
}

func (c *checker) checkDiscounts(d *DiscountSpec, cd *ConditionalDiscountSpec, base string) {
	if d != nil {
		c.prep(&d.Value, base+"/discount/value", pPercentOrMoney(d.Type == "percentage", d.Type == "currency", "desconto", "discount"))
	}
	if cd != nil {
		c.prep(&cd.Value, base+"/conditional_discount/value", pPercentOrMoney(cd.Type == "percentage", cd.Type == "currency", "desconto condicional", "conditional discount"))
		c.prep(&cd.UntilDate, base+"/conditional_discount/until_date", c.pDate())
		if cd.DaysBeforeDue < 0 {
			c.fail(base+"/conditional_discount/days_before_due", "desconto_data",
				fmt.Sprintf("desconto condicional: days_before_due deve ser um número positivo de dias antes do vencimento (recebido %d)", cd.DaysBeforeDue),
				fmt.Sprintf("conditional discount: days_before_due must be a positive number of days before the due date (got %d)", cd.DaysBeforeDue))
		} else if cd.UntilDate.Set == (cd.DaysBeforeDue > 0) {
			c.fail(base+"/conditional_discount", "desconto_data",
				"desconto condicional: informe until_date ou days_before_due (um dos dois)",
				"conditional discount: give until_date or days_before_due (one of them)")
		}
	}
}

func (c *checker) checkCommonCharge(fine, interest, message, notif, customID *Value, base string, slip bool) {
	c.prep(fine, base+"/fine", pPercent(2, 0, rules.MaxFine, "multa_fora_limite", "multa", "fine"))
	c.prep(interest, base+"/interest_per_day", pPercent(3, 0, rules.MaxInterest, "juros_fora_limite", "juros ao dia", "daily interest"))
	if slip {
		c.prep(message, base+"/message", func(s string) (any, *limitErr) {
			if le := checkSlipMessage(s); le != nil {
				return nil, le
			}
			return strings.ReplaceAll(s, `\n`, "\n"), nil
		})
	} else {
		c.prep(message, base+"/message", pText(rules.MaxCarnetMessage, "mensagem do carnê", "carnet message"))
	}
	c.prep(notif, base+"/notification_url", pURL)
	c.prep(customID, base+"/custom_id", pText(MaxCustomIDLen, "custom_id", "custom_id"))
	if customID.Set && !customID.IsTemplate() {
		c.fail(base+"/custom_id", "custom_id_constante",
			"custom_id precisa ser diferente em cada linha: use um modelo como \"{{ .Código }}-2027\"",
			"custom_id must differ on every row: use a template such as \"{{ .Código }}-2027\"")
	}
}

func (c *checker) checkCarnet(s *CarnetSpec) {
	base := "/issue/carnets"
	c.prep(&s.Repeats, base+"/repeats", pInt(rules.MinCarnetRepeats, rules.MaxCarnetRepeats, "parcelas_fora_limite", "número de parcelas", "number of parcels"))
	c.prep(&s.FirstDue, base+"/first_due", c.pDue(results.Carnets))
	c.checkItems(s.Items, base)
	c.checkCommonCharge(&s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, base, false)
	c.checkDiscounts(s.Discount, s.ConditionalDiscount, base)
}

func (c *checker) checkSlip(s *SlipSpec) {
	base := "/issue/boletos"
	c.prep(&s.Due, base+"/due", c.pDue(results.Boletos))
	c.checkItems(s.Items, base)
	c.checkCommonCharge(&s.Fine, &s.InterestPerDay, &s.Message, &s.NotificationURL, &s.CustomID, base, true)
	c.prep(&s.DaysToWriteOff, base+"/days_to_write_off", pInt(0, rules.MaxDaysToWriteOff, "baixa_fora_limite", "dias para baixa", "days to write off"))
	c.checkDiscounts(s.Discount, s.ConditionalDiscount, base)
}

func (c *checker) checkPixMod(m *PixModSpec, ptr string, allowed []int, pctMods []int, what, whatEN string) {
	if m == nil {
		return
	}
	ok := false
	for _, a := range allowed {
		ok = ok || a == m.Modalidade
	}
	if !ok {
		use := fmt.Sprint(allowed[0])
		if n := len(allowed); n > 1 {
			use = fmt.Sprintf("%d a %d", allowed[0], allowed[n-1]) // allowed is a run
		}
		c.fail(ptr+"/modalidade", "modalidade_invalida",
			fmt.Sprintf("modalidade %d inválida para %s; use %s", m.Modalidade, what, use),
			fmt.Sprintf("modalidade %d is invalid for %s; use %s", m.Modalidade, whatEN, strings.Replace(use, " a ", " to ", 1)))
		return
	}
	isPct := false
	for _, p := range pctMods {
		isPct = isPct || p == m.Modalidade
	}
	c.prep(&m.Valor, ptr+"/valor", pPercentOrMoney(isPct, !isPct, what, whatEN))
}

func (c *checker) checkCobv(s *CobvSpec) {
	base := "/issue/cobv"
	c.prep(&s.Due, base+"/due", c.pDue(results.Cobv))
	if s.ValidadeAposVencimento < 0 || s.ValidadeAposVencimento > 3650 {
		c.fail(base+"/validade_apos_vencimento", "fora_limite", "validade_apos_vencimento deve estar entre 0 e 3650 dias", "validade_apos_vencimento must be 0 to 3650 days")
	}
	c.prep(&s.Chave, base+"/chave", pPixKey)
	c.prep(&s.Solicitacao, base+"/solicitacao", pText(rules.MaxSolicitacaoPagador, "solicitação ao pagador", "solicitacaoPagador"))
	c.prep(&s.Valor, base+"/valor", pMoney(true, MaxPixCents, "valor", "value"))
	c.prep(&s.Txid, base+"/txid", pTxid)
	if s.Txid.Set && !s.Txid.IsTemplate() {
		c.fail(base+"/txid", "txid_constante", "txid precisa ser diferente em cada linha: use uma coluna ou um modelo", "txid must differ on every row: use a column or a template")
	}
	c.checkPixMod(s.Multa, base+"/multa", []int{1, 2}, []int{2}, "multa", "fine")
	c.checkPixMod(s.Juros, base+"/juros", []int{1, 2, 3, 4, 5, 6, 7, 8}, []int{2, 3, 4, 6, 7, 8}, "juros", "interest")
	c.checkPixMod(s.Abatimento, base+"/abatimento", []int{1, 2}, []int{2}, "abatimento", "rebate")
	if d := s.Desconto; d != nil {
		p := base + "/desconto"
		switch {
		case d.Modalidade == 1 || d.Modalidade == 2:
			if len(d.Datas) < 1 || len(d.Datas) > 3 {
				c.fail(p+"/datas", "desconto_datas", "desconto modalidade 1 ou 2: informe de 1 a 3 datas", "desconto modalidade 1 or 2: give 1 to 3 dates")
			}
			for i := range d.Datas {
				c.prep(&d.Datas[i].Data, fmt.Sprintf("%s/datas/%d/data", p, i), c.pDateOrBefore())
				c.prep(&d.Datas[i].Valor, fmt.Sprintf("%s/datas/%d/valor", p, i), pPercentOrMoney(d.Modalidade == 2, d.Modalidade == 1, "desconto", "discount"))
			}
		case d.Modalidade >= 3 && d.Modalidade <= 6:
			if !d.Valor.Set {
				c.fail(p+"/valor", "campo_obrigatorio", "desconto modalidade 3 a 6: informe valor", "desconto modalidade 3 to 6: give valor")
			}
			c.prep(&d.Valor, p+"/valor", pPercentOrMoney(d.Modalidade >= 5, d.Modalidade <= 4, "desconto", "discount"))
		default:
			c.fail(p+"/modalidade", "modalidade_invalida", fmt.Sprintf("modalidade %d inválida para desconto; use 1 a 6", d.Modalidade), fmt.Sprintf("modalidade %d is invalid for desconto; use 1 to 6", d.Modalidade))
		}
	}
	if sp := s.Split; sp != nil {
		p := base + "/split"
		c.prep(&sp.MinhaParte.Valor, p+"/minha_parte/valor", pPixPart(sp.MinhaParte.Tipo))
		constant := !sp.MinhaParte.Valor.IsTemplate()
		for i := range sp.Repasses {
			r := &sp.Repasses[i]
			rp := fmt.Sprintf("%s/repasses/%d", p, i)
			c.prep(&r.Valor, rp+"/valor", pPixPart(r.Tipo))
			c.prep(&r.CPF, rp+"/cpf", pText(0, "", ""))
			c.prep(&r.CNPJ, rp+"/cnpj", pText(0, "", ""))
			c.prep(&r.Conta, rp+"/conta", pText(0, "", ""))
			constant = constant && !r.Valor.IsTemplate() && !r.CPF.IsTemplate() && !r.CNPJ.IsTemplate() && !r.Conta.IsTemplate()
		}
		if len(sp.Descricao) > 80 {
			c.fail(p+"/descricao", "texto_longo", "descrição do split acima de 80 caracteres", "split description above 80 characters")
		}
		if constant && len(c.d.probs) == 0 {
			for _, v := range rules.CheckPixSplit(pixSplitConst(sp), c.j.Endpoint.Conta) {
				c.fail(base+pixPointer(v.Pointer), ruleCode(v.Rule), v.Message, v.MessageEN)
			}
		}
	}
	if b := s.Batch; b != nil {
		if b.Size < 0 || b.Size > rules.MaxBatchItems {
			c.fail(base+"/batch/size", "lote_fora_limite", fmt.Sprintf("lote de %d cobranças fora do limite de 1 a %d", b.Size, rules.MaxBatchItems), fmt.Sprintf("batch of %d charges out of range 1 to %d", b.Size, rules.MaxBatchItems))
		}
		if b.MaxBytes != 0 && (b.MaxBytes < 2048 || b.MaxBytes > 16<<20) {
			c.fail(base+"/batch/max_bytes", "lote_fora_limite", "max_bytes deve estar entre 2048 e 16777216", "max_bytes must be between 2048 and 16777216")
		}
	}
}

func pPixPart(tipo string) parser {
	if tipo == rules.PixSplitFixed {
		return pPercentOrMoney(false, true, "valor fixo do split", "split fixed value")
	}
	return func(s string) (any, *limitErr) {
		v, le := pPercent(2, 0, 10000, "percentual_fora_limite", "percentual do split", "split percentage")(s)
		if le != nil {
			return nil, le
		}
		return pm{true, v.(int64)}, nil
	}
}

func pmValue(v *Value) int64 {
	if v.info != nil {
		if x, ok := v.info.parsed.(pm); ok {
			return x.v
		}
	}
	return 0
}

func pixSplitConst(sp *PixSplitSpec) rules.PixSplit {
	ps := rules.PixSplit{DivisaoTarifa: sp.DivisaoTarifa, MinhaParte: rules.PixSplitPart{Tipo: sp.MinhaParte.Tipo, Valor: pmValue(&sp.MinhaParte.Valor)}}
	if ps.DivisaoTarifa == "" {
		ps.DivisaoTarifa = "assumir_total"
	}
	for i := range sp.Repasses {
		r := &sp.Repasses[i]
		ps.Repasses = append(ps.Repasses, rules.PixSplitPart{Tipo: r.Tipo, Valor: pmValue(&r.Valor),
			CPF: rules.CleanDocument(constStr(&r.CPF)), CNPJ: rules.CleanDocument(constStr(&r.CNPJ)), Conta: constStr(&r.Conta)})
	}
	return ps
}

// pixPointer maps a rules.CheckPixSplit pointer (/split/repasses/0/favorecido/conta)
// to the job's spelling (/split/repasses/0/conta).
func pixPointer(p string) string {
	p = strings.ReplaceAll(p, "/favorecido", "")
	p = strings.ReplaceAll(p, "/minhaParte", "/minha_parte")
	p = strings.ReplaceAll(p, "/divisaoTarifa", "/divisao_tarifa")
	return p
}
