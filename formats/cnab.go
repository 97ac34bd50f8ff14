package formats

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"remessa/formats/cnab"
)

// The CNAB reader turns each title of a remessa (CNAB 240 segments P, Q,
// R; a CNAB 400 detail and its optional records) into a row whose headers
// the pipeline's catalogue matches, each cell's Column naming its line and
// positions (PositionColumn). docs/cnab.md has the mapping.

// CNAB column headers, in row order. The first ones match catalogue
// fields; the others are referenced by the job's defaults for CNAB input
// (Multa, Juros) or kept for the retorno (Nosso número, Movimento).
const (
	CNABKey          = "Código"
	CNABName         = "Nome"
	CNABDocument     = "CPF/CNPJ"
	CNABStreet       = "Logradouro"
	CNABNumber       = "Número"
	CNABComplement   = "Complemento"
	CNABNeighborhood = "Bairro"
	CNABZipcode      = "CEP"
	CNABCity         = "Cidade"
	CNABState        = "UF"
	CNABValue        = "Valor"
	CNABDue          = "Vencimento"
	CNABMessage      = "Mensagem"
	CNABFine         = "Multa"
	CNABInterest     = "Juros"
	CNABOurNumber    = "Nosso número"
	CNABMovement     = "Movimento"
	CNABCompanyUse   = "Uso da empresa"
	CNABIssued       = "Emissão"
	CNABRebate       = "Abatimento"
	// CNABDiscount1..3 and CNABDiscountDay are a title's discounts, each
	// "code|date|value" (FEBRABAN's codes: 1 fixed value until the date, 2
	// percentage until the date, 3–6 per day paid early; the date ISO or
	// empty; the value with two decimals, "10.00" or "5.00" for 5%), the
	// cell's Column the value's positions; empty when none. CNAB 400's
	// discounts by date are code 1, Bradesco's desconto por dia code 3.
	CNABDiscount1   = "Desconto 1"
	CNABDiscount2   = "Desconto 2"
	CNABDiscount3   = "Desconto 3"
	CNABDiscountDay = "Desconto por dia"
)

var cnabHeaders = []string{CNABKey, CNABName, CNABDocument, CNABStreet, CNABNumber, CNABComplement, CNABNeighborhood,
	CNABZipcode, CNABCity, CNABState, CNABValue, CNABDue, CNABMessage, CNABFine, CNABInterest, CNABOurNumber,
	CNABMovement, CNABCompanyUse, CNABIssued, CNABRebate, CNABDiscount1, CNABDiscount2, CNABDiscount3, CNABDiscountDay}

const (
	cKey = iota
	cName
	cDocument
	cStreet
	cNumber
	cComplement
	cNeighborhood
	cZipcode
	cCity
	cState
	cValue
	cDue
	cMessage
	cFine
	cInterest
	cOurNumber
	cMovement
	cCompanyUse
	cIssued
	cRebate
	cDiscount1
	cDiscount2
	cDiscount3
	cDiscountDay
	cnabCols
)

// CNAB movement codes of a remessa that FEBRABAN's table and the banks'
// CNAB 400 tables share.
var cnabMovements = map[string][2]string{
	"01": {"entrada de título", "title entry"},
	"02": {"pedido de baixa", "write-off request"},
	"04": {"concessão de abatimento", "rebate granted"},
	"05": {"cancelamento de abatimento", "rebate cancelled"},
	"06": {"alteração de vencimento", "due date change"},
	"07": {"concessão de desconto", "discount granted"},
	"08": {"cancelamento de desconto", "discount cancelled"},
	"09": {"protestar", "protest"},
	"10": {"sustar protesto e baixar título", "stop protest and write off"},
	"11": {"sustar protesto e manter em carteira", "stop protest and keep"},
	"31": {"alteração de outros dados", "change of other data"},
}

// CNABActionMovements are the movement codes other than 01 that remessa
// carries out as actions on the runs that issued the titles
// (pipeline/movements): baixa, abatimento granted and cancelled, due date,
// other data. Every other code is refused at its positions.
var CNABActionMovements = map[string]bool{"02": true, "04": true, "05": true, "06": true, "31": true}

// CNABMovementName is the name of a remessa movement code, in Portuguese
// and English ("código desconhecido" when the table does not have it).
func CNABMovementName(code string) (pt, en string) {
	if n, ok := cnabMovements[code]; ok {
		return n[0], n[1]
	}
	return "código desconhecido", "unknown code"
}

// CNABCell is the cell of a CNAB row under one of the CNAB column headers
// (CNABKey, CNABDue…); the zero Cell for another header.
func CNABCell(r Row, header string) Cell {
	for i, h := range cnabHeaders {
		if h == header && i < len(r.Cells) {
			return r.Cells[i]
		}
	}
	return Cell{}
}

// CNABOptions say what a CNAB input must be (the job's input settings).
type CNABOptions = cnab.Options

type cnabReader struct {
	f      *os.File
	rd     *cnab.Reader
	src    Source
	opt    Options
	rows   int
	recs   []recFields // the records seen, with the reader's fields in each
	tf     titleFields
	tfRecs []*recFields
	colBuf []byte
	arena  *Arena // lines' texts and the values made of them
	// setAside counts, per movement code, the titles left to the
	// movements' actions (Options.CNABMovements unset), with the first's
	// position
	setAside    map[string]int
	setAsideAt  map[string]cnab.Pos
	setAsideOrd []string
}

// errSetAside is fill's answer for a title the reader passes over: an
// action movement when reading entries, an entry when reading movements.
var errSetAside = &cnab.Error{Message: "título posto de lado"}

// The layout fields the reader maps, by their stable names (cnabFieldNames).
const (
	fAbatimento = iota
	fEmissao
	fJurosCodigo
	fJurosValor
	fMovimento
	fMultaCodigo
	fMultaValor
	fNossoNumero
	fSacadoBairro
	fSacadoCep
	fSacadoCepSufixo
	fSacadoCidade
	fSacadoDocumento
	fSacadoEndereco
	fSacadoNome
	fSacadoTipo
	fSacadoUf
	fSeuNumero
	fUsoEmpresa
	fValor
	fVencimento
	fMensagem1
	fMensagem3
	fMensagem4
	fMensagem5
	fMensagem6
	fDesconto1Valor
	fDesconto2Valor
	fDesconto3Valor
	fDescontoDia
	fDesconto1Codigo
	fDesconto2Codigo
	fDesconto3Codigo
	fDesconto1Data
	fDesconto2Data
	fDesconto3Data
	numCNABFields
)

var cnabFieldNames = [numCNABFields]string{"abatimento", "emissao", "juros_codigo", "juros_valor", "movimento", "multa_codigo", "multa_valor", "nosso_numero", "sacado_bairro", "sacado_cep", "sacado_cep_sufixo", "sacado_cidade", "sacado_documento", "sacado_endereco", "sacado_nome", "sacado_tipo", "sacado_uf", "seu_numero", "uso_empresa", "valor", "vencimento", "mensagem1", "mensagem3", "mensagem4", "mensagem5", "mensagem6", "desconto1_valor", "desconto2_valor", "desconto3_valor", "desconto_dia",
	"desconto1_codigo", "desconto2_codigo", "desconto3_codigo", "desconto1_data", "desconto2_data", "desconto3_data"}

// recFields is, for one record of the layout, the field each of the
// reader's fields is in that record (nil when the record has not it).
type recFields struct {
	rec    string
	fields [numCNABFields]*cnab.Field
}

// recIndex is the index in c.recs of record rec's fields, resolved on
// first use.
func (c *cnabReader) recIndex(l *cnab.Layout, rec string) int {
	for i := range c.recs {
		if c.recs[i].rec == rec {
			return i
		}
	}
	r := recFields{rec: rec}
	for i := range r.fields {
		r.fields[i] = l.Field(rec, cnabFieldNames[i])
	}
	c.recs = append(c.recs, r)
	return len(c.recs) - 1
}

// titleFields finds the reader's fields in a title's lines (in file order).
type titleFields struct {
	t    *cnab.Title
	recs []*recFields // per line
}

func (tf *titleFields) get(i int) field {
	for li, r := range tf.recs {
		if f := r.fields[i]; f != nil {
			return field{&tf.t.Lines[li], f}
		}
	}
	return field{}
}

func openCNAB(path string, f *os.File, size int64, opt Options) (Reader, error) {
	if max := opt.maxBytes(DefaultMaxBytes); max > 0 && size > max {
		return nil, tooLarge(path, size, max)
	}
	arena := &Arena{}
	copt := opt.CNAB
	copt.Strings = arena
	rd, err := cnab.NewReader(f, copt)
	if err != nil {
		return nil, cnabErr(path, err)
	}
	h := rd.Header
	src := Source{File: path, Format: "cnab" + strconv.Itoa(h.Layout.LineLen), Headers: cnabHeaders, Encoding: "windows-1252",
		Layout: h.Layout.Name, Bank: h.Bank, CompanyDoc: h.CompanyDoc, NSA: h.NSA, Account: h.Account, HeaderRow: 1}
	src.Columns = make([]string, len(cnabHeaders))
	copy(src.Columns, cnabHeaders)
	return &cnabReader{f: f, rd: rd, src: src, opt: opt, arena: arena}, nil
}

// cnabErr turns a *cnab.Error into an *Error at its line and positions.
func cnabErr(path string, err error) error {
	var ce *cnab.Error
	if !errors.As(err, &ce) {
		return &Error{File: path, Code: CodeOpen, Message: "erro ao ler o arquivo: " + err.Error(), MessageEN: "error reading the file: " + err.Error(), Err: err}
	}
	e := &Error{File: path, Row: ce.Line, Header: ce.Label, Value: ce.Value, Code: ce.Code, Message: ce.Message, MessageEN: ce.MessageEN, Err: err}
	if ce.Start > 0 {
		e.Column = PositionColumn(ce.Line, ce.Start, ce.End)
	}
	e.title = ce.Title
	return e
}

func (c *cnabReader) Source() Source { return c.src }

func (c *cnabReader) Close() error { return c.f.Close() }

// Next returns the next title as a row.
func (c *cnabReader) Next() (Row, error) { return c.NextCells(nil) }

// NextCells is Next writing the cells into dst when it has room.
func (c *cnabReader) NextCells(dst []Cell) (Row, error) {
	if c.rows >= c.opt.maxRows() && c.opt.maxRows() > 0 {
		return Row{}, &Error{File: c.src.File, Code: CodeTooManyRows,
			Message:   fmt.Sprintf("mais de %d títulos", c.opt.maxRows()),
			MessageEN: fmt.Sprintf("more than %d titles", c.opt.maxRows())}
	}
next:
	t, err := c.rd.Next()
	if err == io.EOF {
		c.addWarnings()
		if c.rows == 0 && len(c.setAside) == 0 && !c.opt.CNABMovements {
			return Row{}, &Error{File: c.src.File, Code: CodeNoData, Message: "o arquivo não tem títulos", MessageEN: "the file has no titles"}
		}
		return Row{}, io.EOF
	}
	if err != nil {
		var ce *cnab.Error
		if errors.As(err, &ce) && ce.Title {
			c.rows++
		}
		return Row{}, cnabErr(c.src.File, err)
	}
	c.rows++
	var cells []Cell
	if cap(dst) >= cnabCols {
		cells = dst[:cnabCols]
		clear(cells)
	} else {
		cells = make([]Cell, cnabCols)
	}
	for i := range cells {
		cells[i].Header = cnabHeaders[i]
	}
	if e := c.fill(t, cells); e != nil {
		if e == errSetAside {
			c.rows--
			goto next
		}
		return Row{}, cnabErr(c.src.File, e)
	}
	return Row{Number: t.First(), Cells: cells}, nil
}

func (c *cnabReader) addWarnings() {
	for _, m := range c.setAsideOrd {
		n := c.setAside[m]
		pt, en := CNABMovementName(m)
		c.warn(c.setAsideAt[m], "cnab_movimento_acao", m,
			fmt.Sprintf("%d título(s) com movimento %s (%s) não são emissões: vão como ações sobre as execuções que emitiram esses títulos (remessa plan mostra cada grupo)", n, m, pt),
			fmt.Sprintf("%d title(s) with movement %s (%s) are not issued: they go as actions on the runs that issued those titles (remessa plan shows each group)", n, m, en))
	}
	for _, w := range c.rd.Warnings() {
		c.src.Warnings = append(c.src.Warnings, Warning{Row: w.Line, Column: PositionColumn(w.Line, w.Start, w.End), Header: w.Label,
			Value: w.Value, Code: w.Code, Message: w.Message, MessageEN: w.MessageEN})
	}
}

func (c *cnabReader) warn(p cnab.Pos, code, value, pt, en string) {
	c.src.Warnings = append(c.src.Warnings, Warning{Row: p.Line, Column: PositionColumn(p.Line, p.Start, p.End), Header: p.Label,
		Value: value, Code: code, Message: pt, MessageEN: en})
}

// field is one field of a title: its line, the field, and whether found.
type field struct {
	l *cnab.Line
	f *cnab.Field
}

func (x field) ok() bool { return x.f != nil }

func (x field) text() string {
	if x.f == nil {
		return ""
	}
	return strings.TrimSpace(x.l.Get(x.f))
}

func (x field) pos() cnab.Pos {
	if x.f == nil {
		return cnab.Pos{}
	}
	return x.l.At(x.f)
}

func (x field) int() (int64, *cnab.Error) {
	if x.f == nil {
		return 0, nil
	}
	return x.l.Int(x.f)
}

func (x field) date() (time.Time, *cnab.Error) {
	if x.f == nil {
		return time.Time{}, nil
	}
	return x.l.Date(x.f)
}

// fill maps a title's fields onto the row's cells (docs/cnab.md).
func (c *cnabReader) fill(t *cnab.Title, cells []Cell) *cnab.Error {
	// each line's record, resolved first (c.recs may grow), then pointed at
	var idx [8]int
	tf := &c.tf
	tf.t, tf.recs = t, c.tfRecs[:0]
	for li := range t.Lines {
		ri := c.recIndex(t.Layout, t.Lines[li].Rec)
		if li < len(idx) {
			idx[li] = ri
		}
	}
	for li := range t.Lines {
		ri := c.recIndex(t.Layout, t.Lines[li].Rec)
		if li < len(idx) {
			ri = idx[li]
		}
		tf.recs = append(tf.recs, &c.recs[ri])
	}
	c.tfRecs = tf.recs
	get := tf.get
	// The cells' Columns are written into one buffer and cut from one
	// string at the end: one allocation a row instead of one a cell.
	var at [cnabCols][3]int // line, start, end
	set := func(i int, x field, v string) {
		cells[i].Value, cells[i].Raw, cells[i].Kind = v, v, KindText
		if x.f != nil {
			at[i] = [3]int{x.l.N, x.f.Start, x.f.End}
			cells[i].Header = x.f.Label
			cells[i].Raw = x.l.Get(x.f)
		}
		if v == "" {
			cells[i].Kind = KindEmpty
		}
	}
	defer func() {
		buf := c.colBuf[:0]
		var ends [cnabCols]int
		// a title has a few lines: each line number is written once
		var lineNo [4]int
		var lineAt [4][2]int
		var lineBuf [64]byte
		lb, nl := lineBuf[:0], 0
		for i := range at {
			if n := at[i][0]; n != 0 {
				k := 0
				for k < nl && lineNo[k] != n {
					k++
				}
				if k == nl && nl < len(lineNo) {
					from := len(lb)
					lb = strconv.AppendInt(lb, int64(n), 10)
					lineNo[k], lineAt[k] = n, [2]int{from, len(lb)}
					nl++
				}
				if k < nl {
					buf = append(buf, lb[lineAt[k][0]:lineAt[k][1]]...)
				} else {
					buf = strconv.AppendInt(buf, int64(n), 10)
				}
				buf = append(buf, ':')
				buf = appendPos(buf, at[i][1])
				buf = append(buf, '-')
				buf = appendPos(buf, at[i][2])
			}
			ends[i] = len(buf)
		}
		c.colBuf = buf
		all, start := string(buf), 0
		for i := range at {
			if at[i][0] != 0 {
				cells[i].Column = all[start:ends[i]]
			}
			start = ends[i]
		}
	}()
	// Every numeric and date field of the title is checked, used or not.
	for li := range t.Lines {
		l := &t.Lines[li]
		if e := l.CheckNumeric(t.Layout.Numeric(l.Rec)); e != nil {
			e.Title = true
			return e
		}
	}
	mov := get(fMovimento)
	set(cMovement, mov, mov.text())
	m := mov.text()
	switch {
	case m == "01":
		if c.opt.CNABMovements {
			return errSetAside
		}
	case CNABActionMovements[m]:
		if !c.opt.CNABMovements {
			if c.setAside == nil {
				c.setAside, c.setAsideAt = map[string]int{}, map[string]cnab.Pos{}
			}
			if c.setAside[m] == 0 {
				c.setAsideOrd = append(c.setAsideOrd, m)
				c.setAsideAt[m] = mov.pos()
			}
			c.setAside[m]++
			return errSetAside
		}
	default:
		pt, en := CNABMovementName(m)
		return &cnab.Error{Pos: mov.pos(), Value: m, Code: cnab.CodeMovement, Title: true,
			Message:   fmt.Sprintf("movimento %s (%s): o serviço não tem esta instrução; remessa emite entradas (01) e executa baixas (02), vencimentos (06), abatimentos (04, 05) e alterações (31) como ações, e este título foi recusado, não ignorado", m, pt),
			MessageEN: fmt.Sprintf("movement %s (%s): the service has no such instruction; remessa issues entries (01) and carries out write-offs (02), due dates (06), rebates (04, 05) and changes (31) as actions, and this title was refused, not skipped", m, en)}
	}
	seu, uso := get(fSeuNumero), get(fUsoEmpresa)
	set(cCompanyUse, uso, uso.text())
	if seu.text() != "" {
		set(cKey, seu, seu.text())
	} else {
		set(cKey, uso, uso.text())
	}
	nn := get(fNossoNumero)
	set(cOurNumber, nn, nn.text())
	name := get(fSacadoNome)
	set(cName, name, name.text())

	doc, typ := get(fSacadoDocumento), get(fSacadoTipo)
	d := doc.text()
	tv, _ := typ.int()
	switch {
	case tv == 1 && len(d) >= 11:
		d = d[len(d)-11:]
	case tv == 2 && len(d) >= 14:
		d = d[len(d)-14:]
	default:
		if t := strings.TrimLeft(d, "0"); len(t) <= 11 && len(d) >= 11 {
			d = d[len(d)-11:]
		} else if len(d) >= 14 {
			d = d[len(d)-14:]
		}
	}
	if doc.ok() && typ.ok() {
		set(cDocument, doc, d)
		at[cDocument][1] = typ.f.Start
	} else {
		set(cDocument, doc, d)
	}

	addr, hood, city, uf := get(fSacadoEndereco), get(fSacadoBairro), get(fSacadoCidade), get(fSacadoUf)
	cep, cepSuf := get(fSacadoCep), get(fSacadoCepSufixo)
	if addr.ok() && (!hood.ok() || !city.ok() || !uf.ok()) {
		if addr.text() != "" && c.rows == 1 {
			c.warn(addr.pos(), "cnab_endereco_nao_separado", addr.text(),
				fmt.Sprintf("o leiaute %s grava o endereço do pagador numa só linha, sem bairro, cidade e UF separados: os títulos deste arquivo saem sem endereço", t.Layout.Name),
				fmt.Sprintf("layout %s writes the payer's address on one line, without separate neighbourhood, city and state: this file's titles are issued without an address", t.Layout.Name))
		}
	} else if addr.text() != "" || cep.text() != "" {
		street, number, compl := SplitStreet(addr.text())
		set(cStreet, addr, street)
		set(cNumber, addr, number)
		set(cComplement, addr, compl)
		set(cNeighborhood, hood, hood.text())
		set(cCity, city, city.text())
		set(cState, uf, uf.text())
		z := cep.text() + cepSuf.text()
		set(cZipcode, cep, z)
		if cepSuf.ok() {
			at[cZipcode][2] = cepSuf.f.End
		}
	}

	val := get(fValor)
	cents, _ := val.int()
	set(cValue, val, c.cents(cents))
	cells[cValue].Kind = KindNumber
	due := get(fVencimento)
	if dt, _ := due.date(); !dt.IsZero() {
		set(cDue, due, c.isoDate(dt))
		cells[cDue].Kind = KindDate
	} else {
		set(cDue, due, "")
	}
	em := get(fEmissao)
	if dt, _ := em.date(); !dt.IsZero() {
		set(cIssued, em, c.isoDate(dt))
		cells[cIssued].Kind = KindDate
	}

	// Messages: the batch header's, then the title's, one a line.
	var msgs []string
	var msgAt field
	if t.Batch != nil {
		msgs = append(msgs, t.Batch.Messages...)
	}
	for _, n := range []int{fMensagem1, fMensagem3, fMensagem4, fMensagem5, fMensagem6} {
		if m := get(n); m.text() != "" {
			msgs = append(msgs, m.text())
			if !msgAt.ok() {
				msgAt = m
			}
		}
	}
	set(cMessage, msgAt, strings.Join(msgs, "\n"))

	// none is 0%, so a job's default reference to these columns reads a value
	set(cFine, get(fMultaValor), "0%")
	set(cInterest, get(fJurosValor), "0%")
	if e := c.fine(get, cents, cells, set); e != nil {
		return e
	}
	if e := c.interest(get, cents, cells, set); e != nil {
		return e
	}
	if ab := get(fAbatimento); ab.ok() {
		v, _ := ab.int()
		set(cRebate, ab, c.cents(v))
		cells[cRebate].Kind = KindNumber
	}
	if c.opt.CNABMovements {
		return nil // a movement's discounts and rebate are its action's (pipeline/movements)
	}
	// Discounts: the pipeline maps them onto what the issuance offers, or
	// refuses the title at their positions (pipeline/cnab_discount.go).
	for i, n := range [3][3]int{{fDesconto1Codigo, fDesconto1Data, fDesconto1Valor}, {fDesconto2Codigo, fDesconto2Data, fDesconto2Valor},
		{fDesconto3Codigo, fDesconto3Data, fDesconto3Valor}} {
		code, date, val := get(n[0]), get(n[1]), get(n[2])
		v, _ := val.int()
		cv, _ := code.int()
		if v == 0 && cv == 0 {
			continue
		}
		if !code.ok() {
			cv = 1 // CNAB 400: a value until a date
		}
		c.discount(cells, set, cDiscount1+i, val, cv, date, v)
	}
	if x := get(fDescontoDia); x.ok() {
		if v, _ := x.int(); v != 0 {
			c.discount(cells, set, cDiscountDay, x, 3, field{}, v)
		}
	}
	return nil
}

// smallInts are the positions of a line as text ("1" to "400").
var smallInts = func() (t [401]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// appendPos appends a position (a line's 1 to 400) as decimal text.
func appendPos(b []byte, p int) []byte {
	if p >= 0 && p < len(smallInts) {
		return append(b, smallInts[p]...)
	}
	return strconv.AppendInt(b, int64(p), 10)
}

// discount sets a discount cell: "code|date|value".
func (c *cnabReader) discount(cells []Cell, set func(int, field, string), i int, val field, code int64, date field, v int64) {
	var b [64]byte
	out := strconv.AppendInt(b[:0], code, 10)
	out = append(out, '|')
	if dt, _ := date.date(); !dt.IsZero() {
		out = dt.AppendFormat(out, "2006-01-02")
	}
	out = append(out, '|')
	out = strconv.AppendInt(out, v/100, 10)
	out = append(out, '.', byte('0'+v%100/10), byte('0'+v%10))
	set(i, val, c.arena.Bytes(out))
}

// fine fills Multa as a percentage ("2,00%"): CNAB 240 R and Itaú's
// record 2 say fixed value (1) or percentage (2); Bradesco's detail a
// percentage flagged by 2. A fixed value becomes the percentage of the
// title's value it is, rounded to hundredths, with a warning when inexact.
func (c *cnabReader) fine(get func(int) field, cents int64, cells []Cell, set func(int, field, string)) *cnab.Error {
	code, val := get(fMultaCodigo), get(fMultaValor)
	v, _ := val.int()
	if !val.ok() || v == 0 {
		return nil
	}
	switch code.text() {
	case "2":
		set(cFine, val, c.percent(v, 2))
	case "1":
		if cents == 0 {
			return nil
		}
		pct := (v*10000*2 + cents) / (2 * cents) // hundredths of a percent, rounded half up
		set(cFine, val, c.percent(pct, 2))
		if v*10000%cents != 0 {
			c.warn(val.pos(), "cnab_multa_convertida", val.text(),
				fmt.Sprintf("multa de R$ %s em valor fixo emitida como %s do valor do título (o boleto leva multa em percentual)", cnab.Money(v), percentText(pct, 2)),
				fmt.Sprintf("a fixed fine of R$ %s issued as %s of the title's value (the slip takes its fine as a percentage)", cnab.Money(v), percentText(pct, 2)))
		}
	case "0", "":
		return nil
	default:
		return &cnab.Error{Pos: code.pos(), Value: code.text(), Code: cnab.CodeNotApplied, Title: true,
			Message:   fmt.Sprintf("código da multa '%s' desconhecido: 0 sem multa, 1 valor fixo, 2 percentual", code.text()),
			MessageEN: fmt.Sprintf("unknown fine code '%s': 0 none, 1 fixed value, 2 percentage", code.text())}
	}
	return nil
}

// interest fills Juros as a percentage a day with three decimals
// ("0,033%"): a monthly rate (code 2) is divided by 30; a value a day
// (code 1, and CNAB 400's only form) becomes the percentage of the title's
// value it is, rounded to thousandths, with a warning when inexact.
func (c *cnabReader) interest(get func(int) field, cents int64, cells []Cell, set func(int, field, string)) *cnab.Error {
	code, val := get(fJurosCodigo), get(fJurosValor)
	v, _ := val.int()
	if !val.ok() || v == 0 {
		return nil
	}
	kind := code.text()
	if !code.ok() {
		kind = "1" // CNAB 400: valor a ser cobrado por dia de atraso
	}
	switch kind {
	case "2":
		// v is a monthly percentage in hundredths; a day is v/30, in
		// thousandths of a percent: v*10/30.
		th := (v*10*2 + 30) / 60
		set(cInterest, val, c.percent(th, 3))
		if v*10%30 != 0 {
			c.warn(val.pos(), "cnab_juros_convertidos", val.text(),
				fmt.Sprintf("juros de %s ao mês emitidos como %s ao dia (mês de 30 dias, arredondado a milésimos)", percentText(v, 2), percentText(th, 3)),
				fmt.Sprintf("interest of %s a month issued as %s a day (30-day month, rounded to thousandths)", percentText(v, 2), percentText(th, 3)))
		}
	case "1":
		if cents == 0 {
			return nil
		}
		th := (v*100000*2 + cents) / (2 * cents)
		set(cInterest, val, c.percent(th, 3))
		if v*100000%cents != 0 {
			c.warn(val.pos(), "cnab_juros_convertidos", val.text(),
				fmt.Sprintf("juros de R$ %s ao dia emitidos como %s do valor do título ao dia (o boleto leva juros em percentual)", cnab.Money(v), percentText(th, 3)),
				fmt.Sprintf("interest of R$ %s a day issued as %s of the title's value a day (the slip takes interest as a percentage)", cnab.Money(v), percentText(th, 3)))
		}
	case "3", "0", "":
		return nil
	default:
		return &cnab.Error{Pos: code.pos(), Value: kind, Code: cnab.CodeNotApplied, Title: true,
			Message:   fmt.Sprintf("código do juros de mora '%s' desconhecido: 1 valor por dia, 2 taxa mensal, 3 isento", kind),
			MessageEN: fmt.Sprintf("unknown interest code '%s': 1 value a day, 2 monthly rate, 3 exempt", kind)}
	}
	return nil
}

// cents is cents as a plain decimal ("1234.56"), a numeric cell's Value, in the arena.
func (c *cnabReader) cents(v int64) string {
	var b [24]byte
	out := strconv.AppendInt(b[:0], v/100, 10)
	out = append(out, '.', byte('0'+v%100/10), byte('0'+v%10))
	return c.arena.Bytes(out)
}

// isoDate is t as "2006-01-02" in the arena.
func (c *cnabReader) isoDate(t time.Time) string {
	y, m, d := t.Date()
	if y < 1000 || y > 9999 {
		var b [16]byte
		return c.arena.Bytes(t.AppendFormat(b[:0], "2006-01-02"))
	}
	b := [10]byte{byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + int(m)/10), byte('0' + int(m)%10), '-', byte('0' + d/10), byte('0' + d%10)}
	return c.arena.Bytes(b[:])
}

// percent is percentText in the arena.
func (c *cnabReader) percent(v int64, dec int) string {
	var b [32]byte
	p := int64(1)
	for i := 0; i < dec; i++ {
		p *= 10
	}
	out := strconv.AppendInt(b[:0], v/p, 10)
	out = append(out, ',')
	frac := strconv.AppendInt(b[24:24], p+v%p, 10) // leading 1 keeps the zeros
	out = append(out, frac[1:]...)
	out = append(out, '%')
	return c.arena.Bytes(out)
}

// percentText writes v (with dec decimals) as a Brazilian percentage: "2,00%".
func percentText(v int64, dec int) string {
	p := int64(1)
	for i := 0; i < dec; i++ {
		p *= 10
	}
	return fmt.Sprintf("%d,%0*d%%", v/p, dec, v%p)
}

// SplitStreet splits an address line as ERPs write it into street, number
// and complement: "RUA DAS FLORES, 123 AP 12" or "AV BRASIL 1500"; "S/N"
// when no number is found.
func SplitStreet(s string) (street, number, compl string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", ""
	}
	if i := strings.LastIndexByte(s, ','); i > 0 {
		street = strings.TrimSpace(s[:i])
		rest := strings.Fields(s[i+1:])
		if len(rest) > 0 {
			number = rest[0]
			compl = strings.Join(rest[1:], " ")
		}
		if number == "" {
			number = "S/N"
		}
		return street, number, compl
	}
	f := strings.Fields(s)
	for i := len(f) - 2; i > 0; i-- {
		if isNumberToken(f[i]) && complementWords[f[i+1]] {
			return strings.Join(f[:i], " "), f[i], strings.Join(f[i+1:], " ")
		}
	}
	if n := len(f) - 1; n > 0 && isNumberToken(f[n]) {
		return strings.Join(f[:n], " "), f[n], ""
	}
	return s, "S/N", ""
}

// complementWords start an address's complement after its number.
var complementWords = map[string]bool{"AP": true, "APTO": true, "APT": true, "AP.": true, "CASA": true, "BLOCO": true, "BL": true,
	"SALA": true, "SL": true, "LOJA": true, "LJ": true, "FUNDOS": true, "CONJ": true, "CJ": true, "ANDAR": true, "LOTE": true, "QD": true, "LT": true}

func isNumberToken(t string) bool {
	if strings.EqualFold(t, "S/N") || strings.EqualFold(t, "SN") {
		return true
	}
	return t != "" && t[0] >= '0' && t[0] <= '9'
}
