package pipeline

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline/results"
	"remessa/rules"
)

// One row's checks: its cells read through the job's values, the payer,
// dates, amounts, items and the charges' settings, with a note for each
// problem naming the row, the column and the field.

// rowCtx is one row being validated.
type rowCtx struct {
	vr    *rowValidator
	row   formats.Row
	data  map[string]string
	notes []Note
	errs  int
	index int
	key   string
}

// noCell is what cell returns for a field without a column; read only.
var noCell formats.Cell

// cell returns the row's cell for a field ordinal (a pointer into the
// row, valid while the row is processed), with its column letter and
// header; ok is false when the input has no column for the field.
func (rc *rowCtx) cell(fi int) (*formats.Cell, bool) {
	i := rc.vr.cols[fi]
	if i < 0 {
		return &noCell, false
	}
	var c *formats.Cell
	if i < len(rc.row.Cells) {
		c = &rc.row.Cells[i]
	} else {
		c = &formats.Cell{}
	}
	if c.Column == "" && i < len(rc.vr.src.Columns) {
		c.Column, c.Header = rc.vr.src.Columns[i], rc.vr.src.Headers[i]
	}
	return c, true
}

func (rc *rowCtx) text(fi int) (string, *formats.Cell) {
	c, _ := rc.cell(fi)
	return c.Value, c
}

func (rc *rowCtx) note(sev, code, field string, c *formats.Cell, value, pt, en string) {
	p := results.Problem{Code: code, Field: field, Value: value, Message: pt, MessageEN: en}
	if c != nil {
		p.Column, p.Header = c.Column, c.Header
		if value == "" {
			p.Value = c.Value
		}
	}
	if sev == SevError {
		rc.errs++
	}
	// The row's strings share the reader's buffers; a note outlives the
	// row, so it keeps copies rather than pinning a whole buffer.
	p.Value = strings.Clone(p.Value)
	rc.notes = append(rc.notes, Note{Severity: sev, Row: rc.row.Number, Index: rc.index, Key: strings.Clone(rc.key), Problem: p})
}

func (rc *rowCtx) fail(code, field string, c *formats.Cell, pt, en string) {
	rc.note(SevError, code, field, c, "", pt, en)
}

func (rc *rowCtx) failLim(le *limitErr, field string, c *formats.Cell, value string) {
	rc.note(SevError, le.code, field, c, value, le.pt, le.en)
}

func (rc *rowCtx) templateData() map[string]string {
	if rc.data != nil {
		return rc.data
	}
	d := make(map[string]string, 2*len(rc.row.Cells))
	for i, c := range rc.row.Cells {
		if i < len(rc.vr.src.Headers) {
			d[rc.vr.src.Headers[i]] = c.Value
		}
	}
	for f, i := range rc.vr.col {
		d[f] = rc.row.Get(i).Value
	}
	for _, f := range Catalogue {
		if _, ok := d[f.ID]; !ok {
			d[f.ID] = ""
		}
	}
	rc.data = d
	return d
}

// get evaluates a prepared Value for the row: the constant, or the
// template's text parsed by the value's parser. ok is false when the value
// is not set or has a problem (already noted).
func (rc *rowCtx) get(v *Value) (any, bool) {
	if v == nil || !v.Set || v.info == nil {
		return nil, false
	}
	if !v.IsTemplate() {
		return v.info.parsed, v.info.parsed != nil
	}
	var s string
	var cell *formats.Cell
	if v.ref != "" {
		c := rc.row.Get(v.col)
		if c.Column == "" && v.col < len(rc.vr.src.Columns) {
			c.Column, c.Header = rc.vr.src.Columns[v.col], rc.vr.src.Headers[v.col]
		}
		cell = &c
		s = c.Value
		if c.Kind == formats.KindNumber && isMoneyParser(v) {
			// a numeric cell is a plain decimal with a dot
			if cents, err := formats.ParseMoneyCell(c); err == nil {
				s = rules.FormatPixAmount(cents)
			}
		}
	} else {
		var b strings.Builder
		if err := v.tmpl.Execute(&b, rc.templateData()); err != nil {
			rc.fail("modelo_erro", v.info.field, nil, fmt.Sprintf("modelo %q: %v", v.Raw, err), fmt.Sprintf("template %q: %v", v.Raw, err))
			return nil, false
		}
		s = b.String()
		if !rc.checkTemplateControls(v, s) {
			return nil, false
		}
	}
	x, le := v.info.parse(s)
	if le != nil {
		rc.failLim(le, v.info.field, cell, s)
		return nil, false
	}
	return x, true
}

// isMoneyParser is a cheap marker: money values have "valor" or "value"
// pointers. Numeric cells are converted for them.
func isMoneyParser(v *Value) bool {
	p := v.info.ptr
	return strings.HasSuffix(p, "/value") || strings.HasSuffix(p, "/valor") || strings.HasSuffix(p, "/fixed")
}

func (rc *rowCtx) getInt(v *Value, def int64) int64 {
	if x, ok := rc.get(v); ok {
		return x.(int64)
	}
	return def
}

func (rc *rowCtx) getStr(v *Value) string {
	if x, ok := rc.get(v); ok {
		return x.(string)
	}
	return ""
}

// row validates one data row.
func (vr *rowValidator) row(index int, row formats.Row) (*Item, *results.Row, []Note) {
	rc := &rowCtx{vr: vr, row: row, index: index}
	slot := vr.nextSlot()
	it := &slot.item
	vr.cobvSlot = &slot.cobv
	it.Index, it.SourceRow = index, row.Number
	rc.checkControls()

	key, kc := rc.text(iKey)
	rc.key = key
	it.Key = key
	if key == "" {
		rc.fail("chave_ausente", FKey, kc, "a linha não tem chave (a coluna que identifica a linha está vazia)", "the row has no key (the column that identifies the row is empty)")
	} else if first := vr.addKey(key, index, row.Number); first != 0 {
		rc.fail("chave_duplicada", FKey, kc, fmt.Sprintf("chave %q repetida: já aparece na linha %d", key, first), fmt.Sprintf("key %q repeated: already on row %d", key, first))
	}

	payer := vr.payer(rc, it)
	if isTemplateExample(key, it.PayerName, it.PayerDoc) {
		rc.fail(CodeTemplateExample, FKey, kc, "é a linha de exemplo do modelo (Código "+key+", "+it.PayerName+"); apague-a antes de emitir",
			"this is the template's example row (key "+key+", "+it.PayerName+"); delete it before issuing")
	}

	switch vr.kind {
	case results.Carnets:
		vr.carnet(rc, it, payer)
	case results.Boletos:
		vr.slip(rc, it, payer)
	case results.Cobv:
		vr.cobv(rc, it, payer)
	}

	if rc.errs == 0 && it.PayerDoc != "" {
		if first := vr.triples.addHash(vr.tripleHash(it.PayerDoc, it.AmountCents, it.DueDate), index, row.Number); first != 0 {
			rc.note(SevWarning, "possivel_duplicata", FDocument, nil, rules.MaskDocument(it.PayerDoc),
				fmt.Sprintf("mesmo pagador, valor e vencimento da linha %d: confira se não é uma cobrança em dobro", first),
				fmt.Sprintf("same payer, value and due date as row %d: check it is not a double charge", first))
		}
	}
	notes := rc.notes
	for _, n := range notes {
		if n.Severity == SevWarning {
			it.Warnings = append(it.Warnings, n.Problem)
		}
	}
	if rc.errs > 0 {
		// copies, as for notes: refused rows are few and may be kept
		rr := &results.Row{Index: index, SourceRow: row.Number, Key: strings.Clone(key), PayerName: strings.Clone(it.PayerName), PayerDoc: strings.Clone(it.PayerDoc),
			Outcome: results.Refused, AmountCents: it.AmountCents}
		if !it.DueDate.IsZero() {
			rr.DueDate = rules.FormatISODate(it.DueDate)
		}
		for _, n := range notes {
			if n.Severity == SevError {
				rr.Problems = append(rr.Problems, n.Problem)
			}
		}
		return nil, rr, notes
	}
	return it, nil, notes
}

// tripleHash hashes a payer, a value and a due date in one call when
// they fit a small buffer (they do: a clean CPF or CNPJ), streaming
// otherwise.
func (vr *rowValidator) tripleHash(doc string, cents int64, due time.Time) uint64 {
	var buf [48]byte
	if len(doc) <= len(buf)-16 {
		n := copy(buf[:], doc)
		binary.LittleEndian.PutUint64(buf[n:], uint64(cents))
		binary.LittleEndian.PutUint64(buf[n+8:], uint64(due.Unix()))
		return nonZero(maphash.Bytes(vr.seed, buf[:n+16]))
	}
	h := &vr.hash
	h.Reset()
	h.WriteString(doc)
	binary.LittleEndian.PutUint64(buf[:8], uint64(cents))
	binary.LittleEndian.PutUint64(buf[8:16], uint64(due.Unix()))
	h.Write(buf[:16])
	return nonZero(h.Sum64())
}

// addKey records the row's key, with the hash touchKeys computed when
// there is one.
func (vr *rowValidator) addKey(key string, index, row int) int {
	if h := vr.keyHash; h != 0 {
		vr.keyHash = 0
		return vr.keys.addHash(h, index, row)
	}
	return vr.keys.add(key, index, row)
}

// payerInfo is the row's payer, validated.
type payerInfo struct {
	name, doc, email, phone, birth string
	isCNPJ                         bool
	corporate                      string
	addr                           Address
	hasAddr                        bool
}

func (vr *rowValidator) payer(rc *rowCtx, it *Item) payerInfo {
	var p payerInfo
	maxName := MaxNameLen
	if vr.kind == results.Cobv {
		maxName = MaxPixNameLen
	}
	name, nc := rc.text(iName)
	if name == "" {
		rc.fail("nome_ausente", FName, nc, "nome do pagador vazio", "payer name is empty")
	} else if le := checkTextLen(name, maxName, "nome do pagador", "payer name"); le != nil {
		rc.failLim(le, FName, nc, "")
	}
	p.name, it.PayerName = name, name

	docRaw, dc := rc.text(iDocument)
	if docRaw == "" {
		rc.fail("documento_ausente", FDocument, dc, "CPF/CNPJ do pagador vazio", "payer CPF/CNPJ is empty")
	} else {
		doc, restored := formats.RestoreDocument(docRaw)
		if restored && !rules.AllDigits(strings.TrimSuffix(docRaw, ".0")) {
			// only a number loses its zeros; a masked text was typed short
			doc, restored = rules.CleanDocument(docRaw), false
		}
		switch {
		case len(doc) == 11 && rules.AllDigits(doc):
			if !rules.ValidCPF(doc) {
				rc.fail("cpf_invalido", FDocument, dc, fmt.Sprintf("CPF %s inválido: dígitos verificadores não conferem", docRaw), fmt.Sprintf("CPF %s is invalid: check digits do not match", docRaw))
			}
		case len(doc) == 14:
			p.isCNPJ = true
			if !rules.ValidCNPJ(doc) {
				rc.fail("cnpj_invalido", FDocument, dc, fmt.Sprintf("CNPJ %s inválido: dígitos verificadores não conferem", docRaw), fmt.Sprintf("CNPJ %s is invalid: check digits do not match", docRaw))
			}
		case formats.IsScientific(docRaw):
			rc.fail("documento_invalido", FDocument, dc,
				fmt.Sprintf("%q: o Excel gravou o CPF/CNPJ como número em notação científica e os dígitos se perderam; formate a coluna como texto e digite-os de novo", docRaw),
				fmt.Sprintf("%q: Excel stored the CPF/CNPJ as a number in scientific notation and its digits are lost; format the column as text and type them again", docRaw))
		default:
			rc.fail("documento_invalido", FDocument, dc, fmt.Sprintf("%q não é CPF (11 dígitos) nem CNPJ (14 caracteres)", docRaw), fmt.Sprintf("%q is neither a CPF (11 digits) nor a CNPJ (14 characters)", docRaw))
		}
		if restored && rc.errs == 0 {
			rc.note(SevWarning, "zeros_restaurados", FDocument, dc, "",
				fmt.Sprintf("%s perdeu os zeros à esquerda (guardado como número); restaurado como %s — formate a coluna como texto", docRaw, doc),
				fmt.Sprintf("%s lost its leading zeros (stored as a number); restored as %s — format the column as text", docRaw, doc))
		}
		p.doc, it.PayerDoc = doc, doc
	}
	if p.isCNPJ {
		corp, _ := rc.text(iCorporateName)
		if corp == "" {
			corp = name
		}
		p.corporate = corp
	}

	if email, ec := rc.text(iEmail); email != "" {
		if !rules.ValidEmail(email) {
			rc.fail("email_invalido", FEmail, ec, fmt.Sprintf("e-mail %q inválido", email), fmt.Sprintf("invalid e-mail %q", email))
		}
		p.email = email
	}
	if phone, pc := rc.text(iPhone); phone != "" {
		cp := rules.CleanPhone(phone)
		if !rules.ValidPhone(cp) {
			rc.fail("telefone_invalido", FPhone, pc, fmt.Sprintf("telefone %q inválido: use DDD + número, 10 ou 11 dígitos", phone), fmt.Sprintf("invalid phone %q: use area code + number, 10 or 11 digits", phone))
		}
		p.phone = cp
	}
	if birth, bc := rc.text(iBirth); birth != "" {
		d, err := formats.ParseDate(birth)
		switch {
		case err != nil:
			rc.fail("nascimento_invalido", FBirth, bc, fmt.Sprintf("data de nascimento %q inválida", birth), fmt.Sprintf("invalid birth date %q", birth))
		case !d.Before(vr.job.Today) || d.Year() < 1900:
			rc.fail("nascimento_invalido", FBirth, bc, fmt.Sprintf("data de nascimento %s impossível", formats.FormatDate(d)), fmt.Sprintf("impossible birth date %s", rules.FormatISODate(d)))
		default:
			p.birth = rules.FormatISODate(d)
		}
	}

	street, _ := rc.text(iStreet)
	number, _ := rc.text(iNumber)
	hood, _ := rc.text(iNeighborhood)
	cepRaw, cc := rc.text(iZipcode)
	city, _ := rc.text(iCity)
	ufRaw, uc := rc.text(iState)
	compl, _ := rc.text(iComplement)
	cep := ""
	if cepRaw != "" {
		c, restored := cepRaw, false
		if !rules.ValidCEP(cepRaw) {
			c, restored = formats.RestoreCEP(cepRaw)
		}
		if restored && !(len(cepRaw) == 7 && rules.AllDigits(cepRaw)) {
			// a CEP stored as a number loses one zero (none starts with 00)
			c, restored = cepRaw, false
		}
		if !rules.ValidCEP(c) {
			rc.fail("cep_invalido", FZipcode, cc, fmt.Sprintf("CEP %q inválido: 8 dígitos", cepRaw), fmt.Sprintf("invalid CEP %q: 8 digits", cepRaw))
		} else if restored {
			rc.note(SevWarning, "zeros_restaurados", FZipcode, cc, "",
				fmt.Sprintf("CEP %s perdeu o zero à esquerda; restaurado como %s", cepRaw, c),
				fmt.Sprintf("CEP %s lost its leading zero; restored as %s", cepRaw, c))
		}
		cep = strings.ReplaceAll(c, "-", "")
	}
	uf := strings.ToUpper(ufRaw)
	if uf != "" && !rules.ValidUF(uf) {
		rc.fail("uf_invalida", FState, uc, fmt.Sprintf("UF %q inválida: use a sigla do estado, ex.: SP", ufRaw), fmt.Sprintf("invalid state %q: use the two-letter code, e.g. SP", ufRaw))
	}
	if street != "" || number != "" || hood != "" || cep != "" || city != "" || uf != "" {
		p.addr, p.hasAddr = Address{Street: street, Number: number, Neighborhood: hood, Zipcode: cep, City: city, Complement: compl, State: uf}, true
		if vr.kind != results.Cobv {
			var missing []string
			at, atField := (*formats.Cell)(nil), FStreet // the first missing field's cell, when it has a column
			for _, f := range []struct {
				v, id string
				fi    int
			}{{street, FStreet, iStreet}, {number, FNumber, iNumber}, {hood, FNeighborhood, iNeighborhood}, {cep, FZipcode, iZipcode}, {city, FCity, iCity}, {uf, FState, iState}} {
				if f.v == "" {
					fd, _ := FieldByID(f.id)
					missing = append(missing, fd.Label)
					if c, ok := rc.cell(f.fi); ok && at == nil {
						at, atField = c, f.id
					}
				}
			}
			if len(missing) > 0 && cepRaw != "" || len(missing) > 0 && street != "" {
				rc.fail("endereco_incompleto", atField, at, "endereço incompleto: falta "+strings.Join(missing, ", "), "incomplete address: missing "+strings.Join(missing, ", "))
			}
		}
	}
	return p
}

func (p payerInfo) customer() Customer {
	c := Customer{Name: p.name, Email: p.email, PhoneNumber: p.phone, Birth: p.birth}
	if p.hasAddr {
		a := p.addr
		c.Address = &a
	}
	if p.isCNPJ {
		c.JuridicalPerson = &JuridicalPerson{CorporateName: p.corporate, CNPJ: p.doc}
	} else {
		c.CPF = p.doc
	}
	return c
}

// dueFrom evaluates the job's due date or reads the due date column.
func (vr *rowValidator) dueFrom(rc *rowCtx, v *Value) time.Time {
	if v.Set {
		if x, ok := rc.get(v); ok {
			return x.(time.Time)
		}
		return time.Time{}
	}
	s, c := rc.text(iDueDate)
	if s == "" {
		rc.fail("vencimento_ausente", FDueDate, c, "vencimento vazio", "due date is empty")
		return time.Time{}
	}
	d, err := formats.ParseDate(s)
	if err != nil {
		le := fromValueErr(err, "data_invalida")
		rc.failLim(le, FDueDate, c, "")
		return time.Time{}
	}
	if le := checkDue(d, vr.job.Today, vr.kind); le != nil {
		rc.failLim(le, FDueDate, c, "")
		return time.Time{}
	}
	return d
}

// valueColumn reads the value column as cents (> 0).
func (vr *rowValidator) valueColumn(rc *rowCtx, max int64) int64 {
	c, ok := rc.cell(iValue)
	if !ok {
		return 0
	}
	if strings.TrimSpace(c.Value) == "" {
		rc.fail("valor_ausente", FValue, c, "valor vazio", "value is empty")
		return 0
	}
	v, err := formats.ParseMoneyCell(*c)
	if err != nil {
		rc.failLim(fromValueErr(err, "valor_invalido"), FValue, c, "")
		return 0
	}
	if le := checkPositive(v, "valor", "value"); le != nil {
		rc.failLim(le, FValue, c, "")
		return v
	}
	if v > max {
		rc.fail("valor_acima_limite", FValue, c, fmt.Sprintf("valor %s acima do limite de %s", rules.FormatBRL(v), rules.FormatBRL(max)), fmt.Sprintf("value %s above the limit of %s", rules.FormatBRL(v), rules.FormatBRL(max)))
	}
	return v
}

// items resolves the charge items of a carnet or slip.
func (vr *rowValidator) items(rc *rowCtx, specs []ItemSpec) ([]ChargeItem, int64) {
	var out []ChargeItem
	var total int64
	if len(specs) == 0 {
		name, _ := rc.text(iDescription)
		if name == "" {
			name = vr.job.Name
		}
		v := vr.valueColumn(rc, MaxChargeCents)
		return []ChargeItem{{Name: name, Value: v, Amount: 1}}, v
	}
	for i := range specs {
		s := &specs[i]
		ci := ChargeItem{Name: rc.getStr(&s.Name), Amount: rc.getInt(&s.Amount, 1)}
		if s.Value.Set {
			ci.Value = rc.getInt(&s.Value, 0)
		} else {
			ci.Value = vr.valueColumn(rc, MaxChargeCents)
		}
		if m := s.Marketplace; m != nil {
			mk := &Marketplace{Mode: m.Mode}
			for k := range m.Repasses {
				r := &m.Repasses[k]
				mk.Repasses = append(mk.Repasses, Repasse{PayeeCode: rc.getStr(&r.PayeeCode), Percentage: rc.getInt(&r.Percentage, 0), Fixed: rc.getInt(&r.Fixed, 0)})
			}
			ci.Marketplace = mk
		}
		out = append(out, ci)
		total += ci.Value * ci.Amount
	}
	return out, total
}

func toSplitItems(items []ChargeItem) []rules.SplitItem {
	out := make([]rules.SplitItem, len(items))
	for i, ci := range items {
		out[i] = rules.SplitItem{Name: ci.Name, ValueCents: ci.Value, Amount: ci.Amount}
		if ci.Marketplace != nil {
			m := &rules.Marketplace{Mode: ci.Marketplace.Mode}
			for _, r := range ci.Marketplace.Repasses {
				m.Repasses = append(m.Repasses, rules.Repasse{PayeeCode: r.PayeeCode, Percentage: r.Percentage, Fixed: r.Fixed})
			}
			out[i].Marketplace = m
		}
	}
	return out
}

func hasMarketplace(items []ChargeItem) bool {
	for _, it := range items {
		if it.Marketplace != nil {
			return true
		}
	}
	return false
}

// checkRowMarketplace runs the marketplace rules on a row whose split
// depends on the row.
func (vr *rowValidator) checkRowMarketplace(rc *rowCtx, items []ChargeItem, specs []ItemSpec, base string) {
	if !hasMarketplace(items) || rc.errs > 0 {
		return
	}
	if marketplaceConstant(specs) {
		return // checked at load
	}
	for _, v := range rules.CheckMarketplace(toSplitItems(items), nil, vr.own) {
		rc.fail(ruleCode(v.Rule), strings.ReplaceAll(strings.TrimPrefix(base+v.Pointer, "/"), "/", "."), nil, v.Message, v.MessageEN)
	}
}

func (vr *rowValidator) charges(rc *rowCtx, fine, interest, message, notif, customID *Value, d *DiscountSpec, cd *ConditionalDiscountSpec, due time.Time) (*Configurations, string, *Metadata, *Discount, *ConditionalDiscount) {
	var cfg *Configurations
	f, i := rc.getInt(fine, 0), rc.getInt(interest, 0)
	if f != 0 || i != 0 {
		cfg = &Configurations{Fine: f, Interest: i}
	}
	msg := rc.getStr(message)
	if m, mc := rc.text(iMessage); m != "" {
		var le *limitErr
		if vr.kind == results.Boletos {
			le = checkSlipMessage(m)
			m = strings.ReplaceAll(strings.ReplaceAll(m, "\r\n", "\n"), `\n`, "\n")
		} else {
			le = checkTextLen(m, rules.MaxCarnetMessage, "mensagem do carnê", "carnet message")
		}
		if le != nil {
			rc.failLim(le, FMessage, mc, "")
		}
		msg = m
	}
	var md *Metadata
	if n, c := rc.getStr(notif), rc.getStr(customID); n != "" || c != "" {
		md = &Metadata{NotificationURL: n, CustomID: c}
	}
	var disc *Discount
	if d != nil {
		if x, ok := rc.get(&d.Value); ok {
			disc = &Discount{Type: d.Type, Value: x.(pm).v}
		}
	}
	var cdisc *ConditionalDiscount
	if cd != nil {
		if x, ok := rc.get(&cd.Value); ok {
			until := due.AddDate(0, 0, -cd.DaysBeforeDue)
			if cd.UntilDate.Set {
				if u, ok := rc.get(&cd.UntilDate); ok {
					until = u.(time.Time)
				}
			}
			if !due.IsZero() && until.After(due) {
				rc.fail("desconto_data", "conditional_discount.until_date", nil,
					fmt.Sprintf("o desconto condicional vai até %s, depois do vencimento %s", formats.FormatDate(until), formats.FormatDate(due)),
					fmt.Sprintf("the conditional discount runs until %s, after the due date %s", rules.FormatISODate(until), rules.FormatISODate(due)))
			}
			cdisc = &ConditionalDiscount{Type: cd.Type, Value: x.(pm).v, UntilDate: rules.FormatISODate(until)}
		}
	}
	return cfg, msg, md, disc, cdisc
}
