package retorno

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"remessa/formats/cnab"
	"remessa/rules"
)

// fileWriter writes one retorno file record by record, adding up what its
// trailers say as it goes.
type fileWriter struct {
	spec *layoutSpec
	l    *cnab.Layout
	w    *bufio.Writer
	echo *Echo
	nsa  int
	at   time.Time // generation time (São Paulo)
	bank string

	lines   int // records written
	details int // detail records (CNAB 240: T and U)
	titles  int // occurrences written (a title's T+U or its record 1)
	cents   int64
	byCode  map[string]*tally // per occurrence code: count, value, paid
	skipped int               // entries whose event the layout cannot say
	base    map[string]*cnab.Record
}

type tally struct {
	n     int
	cents int64
	paid  int64
}

func newFileWriter(spec *layoutSpec, w io.Writer, echo *Echo, nsa int, at time.Time, bank string) *fileWriter {
	if echo == nil {
		echo = &Echo{}
	}
	if spec.bank != "" {
		bank = spec.bank
	}
	if bank == "" {
		bank = echo.Header["banco"]
	}
	if bank == "" {
		bank = "000"
	}
	return &fileWriter{spec: spec, l: spec.layout(), w: bufio.NewWriterSize(w, 64<<10), echo: echo, nsa: nsa,
		at: at.In(rules.SaoPaulo), bank: bank, byCode: map[string]*tally{}, base: map[string]*cnab.Record{}}
}

// detail starts a detail record: a copy of the record filled once with
// the company's echoed fields (and CNAB 240's bank and batch).
func (fw *fileWriter) detail(key string) (*cnab.Record, error) {
	b := fw.base[key]
	if b == nil {
		var err error
		if b, err = fw.rec(key, fw.echo.Company); err != nil {
			return nil, err
		}
		if fw.spec.name == Layout240 {
			if err := apply(b, text("banco", fw.bank), num("lote", 1)); err != nil {
				return nil, err
			}
		}
		fw.base[key] = b
	}
	return b.Clone(), nil
}

// rec starts a record with the echoed fields of src (never a fixed one).
func (fw *fileWriter) rec(key string, src map[string]string) (*cnab.Record, error) {
	r, err := cnab.NewRecord(fw.l, key)
	if err != nil {
		return nil, err
	}
	for _, f := range fw.l.Records[key] {
		if v, ok := src[f.Name]; ok && f.Fixed == "" {
			_ = r.Text(f.Name, strings.TrimSpace(v)) // a value that does not fit the retorno's field is left out
		}
	}
	return r, nil
}

func (fw *fileWriter) emit(r *cnab.Record) error {
	fw.lines++
	if fw.l.LineLen == 400 {
		if err := r.Int("sequencial", int64(fw.lines)); err != nil {
			return err
		}
	}
	fw.w.Write(r.Bytes())
	_, err := fw.w.WriteString("\r\n")
	return err
}

// set applies field setters, stopping at the first error.
type setter func(*cnab.Record) error

func text(name, v string) setter      { return func(r *cnab.Record) error { return r.Text(name, v) } }
func num(name string, n int64) setter { return func(r *cnab.Record) error { return r.Int(name, n) } }
func date(name, iso string) setter {
	return func(r *cnab.Record) error {
		if iso == "" {
			return nil
		}
		t, err := rules.ParseISODate(iso)
		if err != nil {
			return fmt.Errorf("retorno: data %q: %w", iso, err)
		}
		return r.Date(name, t)
	}
}
func day(name string, t time.Time) setter {
	return func(r *cnab.Record) error { return r.Date(name, t) }
}

func apply(r *cnab.Record, ss ...setter) error {
	for _, s := range ss {
		if err := s(r); err != nil {
			return err
		}
	}
	return nil
}

// header writes the file header (and CNAB 240's batch header).
func (fw *fileWriter) header() error {
	r, err := fw.rec("0", fw.echo.Header)
	if err != nil {
		return err
	}
	ss := []setter{day("data_geracao", fw.at)}
	switch fw.spec.name {
	case Layout240:
		ss = append(ss, text("banco", fw.bank), num("nsa", int64(fw.nsa)), text("hora_geracao", fw.at.Format("150405")),
			text("versao", "084"), text("banco_nome", firstOf(fw.echo.Header["banco_nome"], "REMESSA")))
	case Layout400Brad:
		ss = append(ss, num("aviso", int64(fw.nsa)), text("banco_nome", "BRADESCO"), text("densidade", "01600000"))
	case Layout400Itau:
		ss = append(ss, num("nsa", int64(fw.nsa)), text("banco_nome", "BANCO ITAU SA"), text("densidade", "01600"))
	}
	if err := apply(r, ss...); err != nil {
		return err
	}
	if err := fw.emit(r); err != nil {
		return err
	}
	if fw.spec.name != Layout240 {
		return nil
	}
	b, err := fw.rec("1", fw.echo.Batch)
	if err != nil {
		return err
	}
	if err := apply(b, text("banco", fw.bank), num("lote", 1), text("versao", "043"), num("numero_remessa", int64(fw.nsa)),
		day("data_gravacao", fw.at), text("mensagem1", ""), text("mensagem2", "")); err != nil {
		return err
	}
	return fw.emit(b)
}

// entry writes one event of a title (nothing when the layout has no
// occurrence for it).
func (fw *fileWriter) entry(e *Entry) error {
	if e.Code == "" {
		fw.skipped++
		return nil
	}
	fw.titles++
	fw.cents += e.Value
	t := fw.byCode[e.Code]
	if t == nil {
		t = &tally{}
		fw.byCode[e.Code] = t
	}
	t.n++
	t.cents += e.Value
	t.paid += e.Paid
	if fw.spec.name == Layout240 {
		return fw.entry240(e)
	}
	return fw.entry400(e)
}

func payerKind(doc string) int64 {
	switch len(doc) {
	case 11:
		return 1
	case 14:
		return 2
	}
	return 0
}

// nosso returns the nosso número a field of width w (numeric or not) can
// hold: the service's number of the charge, else the ERP's.
func nosso(e *Entry, f *cnab.Field) string {
	for _, v := range []string{e.NossoNumero, e.ERPNosso} {
		if v == "" || len(v) > f.Width() || (f.Num && !rules.AllDigits(v)) {
			continue
		}
		return v
	}
	return ""
}

func (fw *fileWriter) entry240(e *Entry) error {
	fw.details++
	t, err := fw.detail("3T")
	if err != nil {
		return err
	}
	if err := apply(t, num("sequencial", int64(fw.details)), text("movimento", e.Code),
		text("nosso_numero", nosso(e, fw.l.Field("3T", "nosso_numero"))), text("seu_numero", e.SeuNumero), date("vencimento", e.Due),
		num("valor", e.Value), text("uso_empresa", firstOf(e.UsoEmpresa, e.SeuNumero)), num("sacado_tipo", payerKind(e.PayerDoc)),
		text("sacado_documento", digitsOrEmpty(e.PayerDoc)), text("sacado_nome", e.Payer), text("motivos", strings.Join(e.Motivos, ""))); err != nil {
		return fmt.Errorf("retorno: linha %d (%s), segmento T: %w", e.SourceRow, e.SeuNumero, err)
	}
	if err := fw.emit(t); err != nil {
		return err
	}
	fw.details++
	u, err := fw.detail("3U")
	if err != nil {
		return err
	}
	if err := apply(u, num("sequencial", int64(fw.details)), text("movimento", e.Code),
		num("acrescimos", e.FineInterest), num("desconto", e.Discount), num("abatimento", e.Abatimento), num("valor_pago", e.Paid),
		num("valor_liquido", e.Paid), num("outros_creditos", e.Over), date("data_ocorrencia", e.Occurred), date("data_credito", e.Credit)); err != nil {
		return fmt.Errorf("retorno: linha %d (%s), segmento U: %w", e.SourceRow, e.SeuNumero, err)
	}
	return fw.emit(u)
}

func (fw *fileWriter) entry400(e *Entry) error {
	fw.details++
	r, err := fw.detail("1")
	if err != nil {
		return err
	}
	nn := nosso(e, fw.l.Field("1", "nosso_numero"))
	ss := []setter{text("movimento", e.Code), date("data_ocorrencia", e.Occurred), text("seu_numero", e.SeuNumero),
		date("vencimento", e.Due), num("valor", e.Value), text("uso_empresa", firstOf(e.UsoEmpresa, e.SeuNumero)), text("nosso_numero", nn),
		num("desconto", e.Discount), num("abatimento", e.Abatimento), num("valor_pago", e.Paid), num("acrescimos", e.FineInterest),
		num("outros_creditos", e.Over), date("data_credito", e.Credit), text("motivos", strings.Join(e.Motivos, ""))}
	if e.Event == EventEstorno {
		ss = append(ss, num("valor_pago", e.Refunded))
	}
	if fw.spec.name == Layout400Itau {
		ss = append(ss, text("nosso_numero_2", nn), text("sacado_nome", e.Payer))
	}
	if err := apply(r, ss...); err != nil {
		return fmt.Errorf("retorno: linha %d (%s): %w", e.SourceRow, e.SeuNumero, err)
	}
	return fw.emit(r)
}

// finish writes the trailers and flushes.
func (fw *fileWriter) finish() error {
	switch fw.spec.name {
	case Layout240:
		t, _ := fw.rec("5", nil)
		if err := apply(t, text("banco", fw.bank), num("lote", 1), num("qtd_registros", int64(fw.details+2)),
			num("qtd_simples", int64(fw.titles)), num("valor_simples", fw.cents)); err != nil {
			return err
		}
		if err := fw.emit(t); err != nil {
			return err
		}
		f, _ := fw.rec("9", nil)
		if err := apply(f, text("banco", fw.bank), num("qtd_lotes", 1), num("qtd_registros", int64(fw.lines+1))); err != nil {
			return err
		}
		if err := fw.emit(f); err != nil {
			return err
		}
	case Layout400Brad:
		t, _ := fw.rec("9", nil)
		c := func(code string) *tally {
			if x := fw.byCode[code]; x != nil {
				return x
			}
			return &tally{}
		}
		b09 := tally{n: c("09").n + c("10").n, cents: c("09").cents + c("10").cents}
		if err := apply(t, num("qtd_titulos", int64(fw.titles)), num("valor_titulos", fw.cents), num("aviso", int64(fw.nsa)),
			num("qtd_02", int64(c("02").n)), num("valor_02", c("02").cents),
			num("valor_06_liquidacao", c("06").paid), num("qtd_06", int64(c("06").n)), num("valor_06", c("06").cents),
			num("qtd_09", int64(b09.n)), num("valor_09", b09.cents),
			num("qtd_14", int64(c("14").n)), num("valor_14", c("14").cents)); err != nil {
			return err
		}
		if err := fw.emit(t); err != nil {
			return err
		}
	case Layout400Itau:
		t, _ := fw.rec("9", nil)
		if err := apply(t, num("qtd_simples", int64(fw.titles)), num("valor_simples", fw.cents), num("nsa", int64(fw.nsa)),
			num("qtd_detalhes", int64(fw.details)), num("valor_detalhes", fw.cents)); err != nil {
			return err
		}
		if err := fw.emit(t); err != nil {
			return err
		}
	}
	return fw.w.Flush()
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func digitsOrEmpty(s string) string {
	if rules.AllDigits(s) {
		return s
	}
	return ""
}

// itoa6 is n as six digits (file names).
func itoa6(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 6 {
		s = strings.Repeat("0", 6-len(s)) + s
	}
	return s
}
