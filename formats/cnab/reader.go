package cnab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Formats a reader accepts.
const (
	Format240 = "cnab240"
	Format400 = "cnab400"
)

// Header is what the file header says about the file.
type Header struct {
	Layout      *Layout
	Bank        string // 3-digit bank code
	BankName    string
	CompanyDoc  string // CNPJ/CPF of the company, when the layout has it
	CompanyName string
	Agreement   string // convênio / código da empresa
	// Account names the company's account at the bank as the header
	// does: bank, company document, agreement, agency and account, the
	// ones the layout has, "|"-separated (the runs index's NSA check)
	Account   string
	NSA       int64 // sequence number of the file
	Generated time.Time
	Messages  []string // CNAB 240: the batch header's mensagens 1 and 2 (every title of the batch)
}

// Title is one title of a remessa: its detail lines (P, Q, R, S; or a
// CNAB 400 detail and its optional records), in file order.
type Title struct {
	Layout *Layout
	Lines  []Line
	Batch  *Header // the file header, with the batch's messages
}

// First is the line the title starts on.
func (t *Title) First() int { return t.Lines[0].N }

// Lookup finds field name in the title's records (in file order): the line
// that carries it and the field, or nil when the layout or the title does
// not have it.
func (t *Title) Lookup(name string) (*Line, *Field) {
	for i := range t.Lines {
		if f := t.Layout.Field(t.Lines[i].Rec, name); f != nil {
			return &t.Lines[i], f
		}
	}
	return nil, nil
}

// Options say what the file must be.
type Options struct {
	Format     string // Format240, Format400 or "" (detected)
	Bank       string // the bank the file must name ("" any the layouts know)
	CompanyDoc string // the company's CNPJ/CPF the header must name, digits ("" not checked)
	// Strings, when set, makes each line's text (formats passes its
	// Arena: no allocation a line). Lines' texts must stay valid.
	Strings interface{ Bytes([]byte) string } `yaml:"-"`
}

// Reader reads the titles of a remessa file, checking its structure as it
// goes: headers, record order, trailers' counts and sums.
type Reader struct {
	lr     *lineReader
	opt    Options
	Header Header
	l      *Layout
	is240  bool

	cur     Line // the line read last (read returns it)
	peek    Line
	hasPeek bool
	title   Title // reused: a title is valid until the next call of Next
	end     bool
	batchNo string

	// counts for the trailers
	fileLines   int64
	batches     int64
	batchLines  int64
	batchTitles int64
	batchCents  int64
	fileCents   int64
	fileTitles  int64

	ignoredS int
	warnings []*Error
}

// Detect says which layout family the first line of a file is, from its
// length and its header record: Format240 or Format400, or "".
func Detect(head []byte) string {
	line := head
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case len(line) == 240 && line[7] == '0' && isDigits(line[:3]):
		return Format240
	case len(line) == 400 && line[0] == '0' && isDigits(line[76:79]):
		return Format400
	}
	return ""
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// NewReader reads the file header (and, for CNAB 240, the first batch
// header) and picks the layout: FEBRABAN's for CNAB 240 unless a table
// for the header's bank exists, the bank's table for CNAB 400.
func NewReader(r io.Reader, opt Options) (*Reader, error) {
	rd := &Reader{lr: newLineReader(r), opt: opt}
	rd.lr.strs = opt.Strings
	first, err := rd.lr.next()
	if err == io.EOF {
		return nil, errAt(Pos{Line: 1}, CodeTruncated, "", "arquivo vazio", "empty file")
	}
	if err != nil {
		return nil, err
	}
	format := opt.Format
	detected := ""
	switch {
	case first.Len() == 240 && first.Slice(8, 8) == "0":
		detected = Format240
	case first.Len() == 400 && first.Slice(1, 1) == "0":
		detected = Format400
	}
	if format == "" {
		format = detected
	}
	switch format {
	case Format240, Format400:
	case "":
		return nil, errAt(Pos{Line: 1}, CodeNotCNAB, "",
			fmt.Sprintf("não é um arquivo CNAB: a primeira linha tem %d caracteres (CNAB 240 tem 240, CNAB 400 tem 400) e deve ser o header de arquivo", first.Len()),
			fmt.Sprintf("not a CNAB file: the first line has %d characters (CNAB 240 has 240, CNAB 400 has 400) and must be the file header", first.Len()))
	default:
		return nil, fmt.Errorf("cnab: unknown format %q (cnab240 or cnab400)", format)
	}
	width := 240
	if format == Format400 {
		width = 400
	}
	rd.is240 = format == Format240
	if first.Len() != width {
		return nil, rd.lengthErr(&first, width)
	}
	var bank string
	if rd.is240 {
		bank = first.Slice(1, 3)
		if first.Slice(8, 8) != "0" {
			return nil, errAt(Pos{Line: 1, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, first.Slice(8, 8),
				"a primeira linha deve ser o header de arquivo (registro 0)", "the first line must be the file header (record 0)")
		}
	} else {
		bank = first.Slice(77, 79)
		if first.Slice(1, 1) != "0" {
			return nil, errAt(Pos{Line: 1, Start: 1, End: 1, Label: "Identificação do registro"}, CodeOrder, first.Slice(1, 1),
				"a primeira linha deve ser o header (registro 0)", "the first line must be the header (record 0)")
		}
	}
	l, err := pickLayout(width, bank)
	if err != nil {
		start, end := 1, 3
		if !rd.is240 {
			start, end = 77, 79
		}
		return nil, errAt(Pos{Line: 1, Start: start, End: end, Label: "Código do banco"}, CodeHeader, bank, err.Error(), err.Error())
	}
	rd.l = l
	first.Rec = "0"
	if err := rd.header(&first); err != nil {
		return nil, err
	}
	rd.fileLines = 1
	return rd, nil
}

// pickLayout finds the remessa table for a width and bank: the bank's own,
// else the one with no bank (FEBRABAN's standard).
func pickLayout(width int, bank string) (*Layout, error) {
	layoutsOnce.Do(loadAll)
	if layoutsErr != nil {
		return nil, layoutsErr
	}
	var generic *Layout
	var known []string
	for _, l := range layouts {
		if l.LineLen != width || !strings.HasSuffix(l.Name, "-remessa") {
			continue
		}
		if l.Bank == bank {
			return l, nil
		}
		if l.Bank == "" {
			generic = l
		} else {
			known = append(known, l.Bank)
		}
	}
	if generic != nil {
		return generic, nil
	}
	return nil, fmt.Errorf("banco %s não tem leiaute CNAB %d aqui (há: %s); um leiaute novo é uma tabela em formats/cnab/layouts", bank, width, strings.Join(sorted(known), ", "))
}

func sorted(s []string) []string {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s
}

func (rd *Reader) lengthErr(l *Line, width int) *Error {
	return errAt(Pos{Line: l.N}, CodeLineLength, "",
		fmt.Sprintf("a linha tem %d caracteres; no CNAB %d todas têm %d", l.Len(), width, width),
		fmt.Sprintf("the line has %d characters; in CNAB %d every line has %d", l.Len(), width, width))
}

// Warnings returns what the reader noticed and went past (segments S
// ignored, for one).
func (rd *Reader) Warnings() []*Error { return rd.warnings }

// checkFixed checks every field the layout fixes on line l.
func (rd *Reader) checkFixed(l *Line, title bool) *Error {
	for _, f := range rd.l.Fixed(l.Rec) {
		if got := l.Get(f); got != f.Fixed {
			e := errAt(l.At(f), CodeFixed, got,
				fmt.Sprintf("'%s' onde o leiaute %s pede '%s'", got, rd.l.Name, f.Fixed),
				fmt.Sprintf("'%s' where layout %s requires '%s'", got, rd.l.Name, f.Fixed))
			e.Title = title
			return e
		}
	}
	return nil
}

func (rd *Reader) header(l *Line) error {
	L := rd.l
	get := func(name string) string {
		if f := L.Field("0", name); f != nil {
			return strings.TrimSpace(l.Get(f))
		}
		return ""
	}
	if f := L.Field("0", "remessa_retorno"); f != nil && l.Get(f) == "2" {
		return errAt(l.At(f), CodeHeader, "2", "este é um arquivo de retorno (código 2), não uma remessa",
			"this is a retorno file (code 2), not a remessa")
	}
	if err := rd.checkFixed(l, false); err != nil {
		return err
	}
	h := &rd.Header
	h.Layout = L
	if f := L.Field("0", "banco"); f != nil {
		h.Bank = l.Get(f)
		if rd.opt.Bank != "" && h.Bank != rd.opt.Bank {
			return errAt(l.At(f), CodeHeader, h.Bank,
				fmt.Sprintf("o arquivo é do banco %s; o job espera o banco %s", h.Bank, rd.opt.Bank),
				fmt.Sprintf("the file is for bank %s; the job expects bank %s", h.Bank, rd.opt.Bank))
		}
	}
	h.BankName = get("banco_nome")
	h.CompanyName = get("empresa_nome")
	h.Agreement = get("convenio")
	if f := L.Field("0", "empresa_documento"); f != nil {
		d, err := l.Digits(f)
		if err != nil {
			return err
		}
		h.CompanyDoc = d
		if rd.opt.CompanyDoc != "" && strings.TrimLeft(d, "0") != strings.TrimLeft(rd.opt.CompanyDoc, "0") {
			return errAt(l.At(f), CodeHeader, d,
				fmt.Sprintf("o arquivo é da empresa %s; o job espera %s", d, rd.opt.CompanyDoc),
				fmt.Sprintf("the file is company %s's; the job expects %s", d, rd.opt.CompanyDoc))
		}
	}
	acct := []string{h.Bank, strings.TrimLeft(h.CompanyDoc, "0"), strings.TrimLeft(h.Agreement, "0")}
	for _, name := range []string{"agencia", "conta"} {
		acct = append(acct, strings.TrimLeft(get(name), "0"))
	}
	h.Account = strings.Join(acct, "|")
	if f := L.Field("0", "nsa"); f != nil {
		n, err := l.Int(f)
		if err != nil {
			return err
		}
		h.NSA = n
	}
	for _, name := range []string{"data_geracao"} {
		if f := L.Field("0", name); f != nil {
			t, err := l.Date(f)
			if err != nil {
				return err
			}
			h.Generated = t
		}
	}
	if !rd.is240 {
		if err := rd.checkSeq(l); err != nil {
			return err
		}
	}
	return nil
}

// checkSeq checks a CNAB 400 record's sequence number against its line.
func (rd *Reader) checkSeq(l *Line) *Error {
	f := rd.l.Field(l.Rec, "sequencial")
	if f == nil {
		return nil
	}
	n, err := l.Int(f)
	if err != nil {
		return err
	}
	if n != int64(l.N) {
		return errAt(l.At(f), CodeSequence, l.Get(f),
			fmt.Sprintf("o registro diz ser o %d.º do arquivo, mas é a linha %d: falta ou sobra uma linha", n, l.N),
			fmt.Sprintf("the record says it is number %d of the file, but it is line %d: a line is missing or extra", n, l.N))
	}
	return nil
}

// read returns the next line with its record key, checking its length.
func (rd *Reader) read() (*Line, error) {
	if rd.hasPeek {
		rd.hasPeek = false
		rd.cur = rd.peek
		return &rd.cur, nil
	}
	var err error
	rd.cur, err = rd.lr.next()
	if err != nil {
		return nil, err
	}
	l := &rd.cur
	if l.Len() != rd.l.LineLen {
		return nil, rd.lengthErr(l, rd.l.LineLen)
	}
	if rd.is240 {
		l.Rec = recKey(l.byteAt(8), l.byteAt(14))
	} else {
		l.Rec = recKey(l.byteAt(1), 0)
	}
	return l, nil
}

// unread makes the next read return l again (l is the line read last).
func (rd *Reader) unread(l *Line) { rd.peek, rd.hasPeek = *l, true }

// newTitle starts the reused title with its first line.
func (rd *Reader) newTitle(first *Line) *Title {
	t := &rd.title
	t.Layout, t.Batch = rd.l, &rd.Header
	t.Lines = append(t.Lines[:0], *first)
	return t
}

// recOne and recThree are the record keys as constants ("1", "3P"), so a
// line's key costs no allocation.
var recOne, recThree = func() (one, three [256]string) {
	for b := 0; b < 256; b++ {
		one[b] = string([]byte{byte(b)})
		three[b] = string([]byte{'3', byte(b)})
	}
	return
}()

// recKey is the key of a record of type r (segment s for type 3 of CNAB
// 240; s is 0 for CNAB 400).
func recKey(r, s byte) string {
	if r == '3' && s != 0 {
		return recThree[s]
	}
	return recOne[r]
}

// Next returns the next title, a *Error confined to a title (Title set:
// call Next again) or a final error; io.EOF after the trailer checked out.
// The title is reused: it is valid until the next call.
func (rd *Reader) Next() (*Title, error) {
	if rd.end {
		return nil, io.EOF
	}
	if rd.is240 {
		return rd.next240()
	}
	return rd.next400()
}

func (rd *Reader) truncated(what, whatEN string) error {
	return errAt(Pos{Line: rd.lr.n}, CodeTruncated, "",
		"o arquivo termina sem "+what+": está incompleto", "the file ends without "+whatEN+": it is incomplete")
}

func (rd *Reader) unknown(l *Line, title bool) *Error {
	p := Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}
	pt := fmt.Sprintf("registro '%s' não existe no leiaute %s", l.Rec, rd.l.Name)
	en := fmt.Sprintf("record '%s' does not exist in layout %s", l.Rec, rd.l.Name)
	if rd.is240 && len(l.Rec) == 2 {
		p = Pos{Line: l.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}
		pt = fmt.Sprintf("segmento '%s' não é lido por remessa (leiaute %s: P, Q, R e S)", l.Rec[1:], rd.l.Name)
		en = fmt.Sprintf("segment '%s' is not read by remessa (layout %s: P, Q, R and S)", l.Rec[1:], rd.l.Name)
	} else if !rd.is240 {
		p = Pos{Line: l.N, Start: 1, End: 1, Label: "Identificação do registro"}
	}
	e := errAt(p, CodeUnknownRecord, l.Rec, pt, en)
	e.Title = title
	return e
}

func (rd *Reader) next240() (*Title, error) {
	for {
		l, err := rd.read()
		if err == io.EOF {
			return nil, rd.truncated("o trailer de arquivo (registro 9)", "the file trailer (record 9)")
		}
		if err != nil {
			return nil, err
		}
		rd.fileLines++
		switch {
		case l.Rec == "1":
			if rd.batchNo != "" {
				return nil, errAt(Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, "1",
					"header de lote antes do trailer do lote anterior (registro 5)", "batch header before the previous batch's trailer (record 5)")
			}
			if err := rd.batchHeader(l); err != nil {
				return nil, err
			}
		case l.Rec == "5":
			if rd.batchNo == "" {
				return nil, errAt(Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, "5",
					"trailer de lote sem header de lote", "batch trailer without a batch header")
			}
			rd.batchLines++
			if err := rd.batchTrailer(l); err != nil {
				return nil, err
			}
			rd.batchNo = ""
		case l.Rec == "9":
			if rd.batchNo != "" {
				return nil, errAt(Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, "9",
					"trailer de arquivo antes do trailer do lote (registro 5)", "file trailer before the batch trailer (record 5)")
			}
			if err := rd.fileTrailer(l); err != nil {
				return nil, err
			}
			if extra, err := rd.lr.next(); err != io.EOF {
				if err != nil {
					return nil, err
				}
				return nil, errAt(Pos{Line: extra.N}, CodeOrder, "", "linha depois do trailer de arquivo (registro 9)", "a line after the file trailer (record 9)")
			}
			rd.end = true
			return nil, io.EOF
		case l.Rec == "0":
			return nil, errAt(Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, "0",
				"um segundo header de arquivo: dois arquivos colados num só?", "a second file header: two files pasted into one?")
		case strings.HasPrefix(l.Rec, "3"):
			if rd.batchNo == "" {
				return nil, errAt(Pos{Line: l.N, Start: 8, End: 8, Label: "Tipo de registro"}, CodeOrder, "3",
					"registro detalhe fora de um lote (falta o header de lote)", "detail record outside a batch (no batch header)")
			}
			rd.batchLines++
			if e := rd.checkLot(l); e != nil {
				return nil, e
			}
			switch l.Rec {
			case "3P":
				return rd.title240(l)
			case "3Q", "3R", "3S":
				e := errAt(Pos{Line: l.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}, CodeOrder, l.Rec[1:],
					fmt.Sprintf("segmento %s sem o segmento P do título antes dele", l.Rec[1:]),
					fmt.Sprintf("segment %s without its title's segment P before it", l.Rec[1:]))
				e.Title = true
				return nil, e
			default:
				return nil, rd.unknown(l, true)
			}
		default:
			return nil, rd.unknown(l, false)
		}
	}
}

func (rd *Reader) checkLot(l *Line) *Error {
	if got := l.Slice(4, 7); got != rd.batchNo {
		return errAt(Pos{Line: l.N, Start: 4, End: 7, Label: "Lote de serviço"}, CodeSequence, got,
			fmt.Sprintf("registro do lote %s dentro do lote %s", got, rd.batchNo),
			fmt.Sprintf("a record of batch %s inside batch %s", got, rd.batchNo))
	}
	return nil
}

func (rd *Reader) batchHeader(l *Line) error {
	if f := rd.l.Field("1", "operacao"); f != nil && l.Get(f) == "T" {
		return errAt(l.At(f), CodeHeader, "T", "lote de retorno (operação T) numa remessa", "a retorno batch (operation T) in a remessa")
	}
	if f := rd.l.Field("1", "servico"); f != nil && l.Get(f) != "01" {
		return errAt(l.At(f), CodeHeader, l.Get(f),
			fmt.Sprintf("lote do serviço %s; remessa lê lotes de cobrança (serviço 01)", l.Get(f)),
			fmt.Sprintf("a batch of service %s; remessa reads cobrança batches (service 01)", l.Get(f)))
	}
	if err := rd.checkFixed(l, false); err != nil {
		return err
	}
	if f := rd.l.Field("1", "banco"); f != nil && l.Get(f) != rd.Header.Bank {
		return errAt(l.At(f), CodeHeader, l.Get(f),
			fmt.Sprintf("lote do banco %s num arquivo do banco %s", l.Get(f), rd.Header.Bank),
			fmt.Sprintf("a batch of bank %s in a file of bank %s", l.Get(f), rd.Header.Bank))
	}
	rd.batchNo = l.Slice(4, 7)
	rd.batches++
	rd.batchLines, rd.batchTitles, rd.batchCents = 1, 0, 0
	rd.Header.Messages = rd.Header.Messages[:0]
	for _, name := range []string{"mensagem1", "mensagem2"} {
		if f := rd.l.Field("1", name); f != nil {
			if m := strings.TrimSpace(l.Get(f)); m != "" {
				rd.Header.Messages = append(rd.Header.Messages, m)
			}
		}
	}
	return nil
}

func (rd *Reader) count(l *Line, name string, want int64, whatPT, whatEN string) error {
	f := rd.l.Field(l.Rec, name)
	if f == nil {
		return nil
	}
	got, err := l.Int(f)
	if err != nil {
		return err
	}
	if got != want {
		return errAt(l.At(f), CodeTrailer, l.Get(f),
			fmt.Sprintf("o trailer diz %d; %s %d", got, whatPT, want),
			fmt.Sprintf("the trailer says %d; %s %d", got, whatEN, want))
	}
	return nil
}

func (rd *Reader) batchTrailer(l *Line) error {
	if err := rd.checkLot(l); err != nil {
		return err
	}
	if err := rd.count(l, "qtd_registros", rd.batchLines, "o lote tem", "the batch has"); err != nil {
		return err
	}
	// The totals are for the retorno in FEBRABAN's table; an ERP that
	// fills them in a remessa must have them right.
	if f := rd.l.Field("5", "qtd_simples"); f != nil {
		if n, err := l.Int(f); err != nil {
			return err
		} else if n != 0 {
			if err := rd.count(l, "qtd_simples", rd.batchTitles, "o lote tem títulos:", "titles in the batch:"); err != nil {
				return err
			}
			if err := rd.sum(l, "valor_simples", rd.batchCents); err != nil {
				return err
			}
		}
	}
	return nil
}

func (rd *Reader) sum(l *Line, name string, want int64) error {
	f := rd.l.Field(l.Rec, name)
	if f == nil {
		return nil
	}
	got, err := l.Int(f)
	if err != nil {
		return err
	}
	if got != want {
		return errAt(l.At(f), CodeTrailer, l.Get(f),
			fmt.Sprintf("o trailer soma %s; os títulos somam %s", Money(got), Money(want)),
			fmt.Sprintf("the trailer sums %s; the titles sum %s", Money(got), Money(want)))
	}
	return nil
}

// Money formats cents as "1.234,56".
func Money(c int64) string {
	neg := c < 0
	if neg {
		c = -c
	}
	s := fmt.Sprintf("%d", c/100)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	out := fmt.Sprintf("%s,%02d", b.String(), c%100)
	if neg {
		out = "-" + out
	}
	return out
}

func (rd *Reader) fileTrailer(l *Line) error {
	if err := rd.checkFixed(l, false); err != nil {
		return err
	}
	if err := rd.count(l, "qtd_lotes", rd.batches, "o arquivo tem lotes:", "batches in the file:"); err != nil {
		return err
	}
	return rd.count(l, "qtd_registros", rd.fileLines, "o arquivo tem registros:", "records in the file:")
}

// title240 reads a title from its P segment: Q must follow; R and S may.
func (rd *Reader) title240(p *Line) (*Title, error) {
	t := rd.newTitle(p)
	p = &t.Lines[0] // the reader's line is overwritten by the next read
	var bad *Error
	if e := rd.checkFixed(p, true); e != nil {
		bad = e
	}
	if e := rd.seqInLot(p); e != nil && bad == nil {
		bad = e
	}
	hasQ := false
	for {
		l, err := rd.read()
		if err == io.EOF {
			break
		}
		var le *Error
		if errors.As(err, &le) {
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if l.Rec != "3Q" && l.Rec != "3R" && l.Rec != "3S" {
			rd.unread(l)
			break
		}
		rd.fileLines++
		rd.batchLines++
		if e := rd.checkLot(l); e != nil {
			return nil, e
		}
		if l.Rec == "3Q" {
			if hasQ && bad == nil {
				bad = errAt(Pos{Line: l.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}, CodeOrder, "Q",
					"segundo segmento Q no mesmo título", "a second segment Q in the same title")
			}
			hasQ = true
		} else if !hasQ && bad == nil {
			bad = errAt(Pos{Line: l.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}, CodeOrder, l.Rec[1:],
				fmt.Sprintf("segmento %s antes do segmento Q do título", l.Rec[1:]),
				fmt.Sprintf("segment %s before the title's segment Q", l.Rec[1:]))
		}
		if e := rd.checkFixed(l, true); e != nil && bad == nil {
			bad = e
		}
		if e := rd.seqInLot(l); e != nil && bad == nil {
			bad = e
		}
		if l.Rec == "3S" {
			if rd.ignoredS == 0 {
				w := errAt(Pos{Line: l.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}, "cnab_segmento_s_ignorado", "S",
					"segmentos S (mensagens de impressão do boleto) são lidos e ignorados: o boleto leva a mensagem dos segmentos R e do header de lote",
					"S segments (slip printing messages) are read and ignored: the slip carries the messages of the R segments and the batch header")
				rd.warnings = append(rd.warnings, w)
			}
			rd.ignoredS++
			continue
		}
		t.Lines = append(t.Lines, *l)
	}
	rd.batchTitles++
	rd.fileTitles++
	if f := rd.l.Field("3P", "valor"); f != nil {
		if v, err := p.Int(f); err == nil {
			rd.batchCents += v
			rd.fileCents += v
		}
	}
	if bad == nil && !hasQ {
		bad = errAt(Pos{Line: p.N, Start: 14, End: 14, Label: "Código do segmento do registro detalhe"}, CodeMissingQ, "P",
			"segmento P sem o segmento Q que o segue (o pagador do título)", "segment P without the segment Q that follows it (the title's payer)")
	}
	if bad != nil {
		bad.Title = true
		return t, bad
	}
	return t, nil
}

// seqInLot checks a detail's sequence number within its batch (the batch
// header is not counted: the first detail is 1).
func (rd *Reader) seqInLot(l *Line) *Error {
	f := rd.l.Field(l.Rec, "sequencial")
	if f == nil {
		return nil
	}
	n, err := l.Int(f)
	if err != nil {
		return err
	}
	if want := rd.batchLines - 1; n != want {
		return errAt(l.At(f), CodeSequence, l.Get(f),
			fmt.Sprintf("o registro diz ser o %d.º do lote, mas é o %d.º", n, want),
			fmt.Sprintf("the record says it is number %d of the batch, but it is number %d", n, want))
	}
	return nil
}

func (rd *Reader) next400() (*Title, error) {
	l, err := rd.read()
	if err == io.EOF {
		return nil, rd.truncated("o trailer (registro 9)", "the trailer (record 9)")
	}
	if err != nil {
		return nil, err
	}
	rd.fileLines++
	if e := rd.checkSeq(l); e != nil {
		return nil, e
	}
	switch l.Rec {
	case "9":
		if extra, err := rd.lr.next(); err != io.EOF {
			if err != nil {
				return nil, err
			}
			return nil, errAt(Pos{Line: extra.N}, CodeOrder, "", "linha depois do trailer (registro 9)", "a line after the trailer (record 9)")
		}
		rd.end = true
		return nil, io.EOF
	case "1":
		t := rd.newTitle(l)
		bad := rd.checkFixed(l, true)
		for {
			n, err := rd.read()
			if err != nil && err != io.EOF {
				return nil, err
			}
			if err == io.EOF || n.Rec == "1" || n.Rec == "9" || !rd.l.Has(n.Rec) || n.Rec == "0" {
				if n != nil {
					rd.unread(n)
				}
				break
			}
			rd.fileLines++
			if e := rd.checkSeq(n); e != nil {
				return nil, e
			}
			if e := rd.checkFixed(n, true); e != nil && bad == nil {
				bad = e
			}
			t.Lines = append(t.Lines, *n)
		}
		rd.fileTitles++
		if bad != nil {
			bad.Title = true
			return t, bad
		}
		return t, nil
	case "0":
		return nil, errAt(Pos{Line: l.N, Start: 1, End: 1, Label: "Identificação do registro"}, CodeOrder, "0",
			"um segundo header: dois arquivos colados num só?", "a second header: two files pasted into one?")
	default:
		if rd.l.Has(l.Rec) {
			e := errAt(Pos{Line: l.N, Start: 1, End: 1, Label: "Identificação do registro"}, CodeOrder, l.Rec,
				fmt.Sprintf("registro %s sem o registro detalhe (1) do título antes dele", l.Rec),
				fmt.Sprintf("record %s without its title's detail record (1) before it", l.Rec))
			e.Title = true
			return nil, e
		}
		return nil, rd.unknown(l, true)
	}
}
