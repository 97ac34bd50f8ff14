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
	work    map[string]*cnab.Record // the detail records reused line after line
	dates   map[string]ymd          // the dates read, by their YYYY-MM-DD (a run has few)

	// CNAB 240: the batch being written (its number, records, titles, value)
	batch                     int
	batchDetails, batchTitles int
	batchCents                int64
}

// BatchTitles is the most occurrences a CNAB 240 retorno puts in one
// batch: a batch numbers its records in 5 digits (two a title).
const BatchTitles = 10_000

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
		at: at.In(rules.SaoPaulo), bank: bank, byCode: map[string]*tally{}, base: map[string]*cnab.Record{},
		work: map[string]*cnab.Record{}, dates: map[string]ymd{}}
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
			if err := apply(b, text("banco", fw.bank)); err != nil {
				return nil, err
			}
		}
		fw.base[key] = b
		fw.work[key] = b.Clone()
	}
	w := fw.work[key]
	w.CopyFrom(b)
	return w, nil
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

// setter sets one field of a header or trailer (apply runs them, stopping
// at the first error; details use recw).
type setter func(*cnab.Record) error

func text(name, v string) setter      { return func(r *cnab.Record) error { return r.Text(name, v) } }
func num(name string, n int64) setter { return func(r *cnab.Record) error { return r.Int(name, n) } }
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
	return fw.openBatch()
}

// openBatch writes a CNAB 240 batch header.
func (fw *fileWriter) openBatch() error {
	fw.batch++
	fw.batchDetails, fw.batchTitles, fw.batchCents = 0, 0, 0
	b, err := fw.rec("1", fw.echo.Batch)
	if err != nil {
		return err
	}
	if err := apply(b, text("banco", fw.bank), num("lote", int64(fw.batch)), text("versao", "043"), num("numero_remessa", int64(fw.nsa)),
		day("data_gravacao", fw.at), text("mensagem1", ""), text("mensagem2", "")); err != nil {
		return err
	}
	return fw.emit(b)
}

// closeBatch writes a CNAB 240 batch trailer.
func (fw *fileWriter) closeBatch() error {
	t, _ := fw.rec("5", nil)
	if err := apply(t, text("banco", fw.bank), num("lote", int64(fw.batch)), num("qtd_registros", int64(fw.batchDetails+2)),
		num("qtd_simples", int64(fw.batchTitles)), num("valor_simples", fw.batchCents)); err != nil {
		return err
	}
	return fw.emit(t)
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
		if fw.batchTitles == BatchTitles {
			if err := fw.closeBatch(); err != nil {
				return err
			}
			if err := fw.openBatch(); err != nil {
				return err
			}
		}
		fw.batchTitles++
		fw.batchCents += e.Value
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

// recw sets a record's fields, keeping the first error (no closure a
// field: a retorno of 100,000 titles sets millions of them).
type recw struct {
	r     *cnab.Record
	err   error
	dates map[string]ymd
}

// ymd is a checked date.
type ymd struct{ y, m, d int }

func (w *recw) text(name, v string) {
	if w.err == nil {
		w.err = w.r.Text(name, v)
	}
}

func (w *recw) num(name string, n int64) {
	if w.err == nil {
		w.err = w.r.Int(name, n)
	}
}

// date sets a date field from YYYY-MM-DD (empty: left as it is, zeros).
func (w *recw) date(name, iso string) {
	if w.err != nil || iso == "" {
		return
	}
	d, ok := w.dates[iso]
	if !ok {
		t, err := rules.ParseISODate(iso)
		if err != nil {
			w.err = fmt.Errorf("retorno: data %q: %w", iso, err)
			return
		}
		d = ymd{t.Year(), int(t.Month()), t.Day()}
		if w.dates != nil && len(w.dates) < 4096 {
			w.dates[iso] = d
		}
	}
	w.err = w.r.DateOf(name, d.y, d.m, d.d)
}

func (fw *fileWriter) entry240(e *Entry) error {
	fw.details++
	fw.batchDetails++
	t, err := fw.detail("3T")
	if err != nil {
		return err
	}
	w := recw{r: t, dates: fw.dates}
	w.num("lote", int64(fw.batch))
	w.num("sequencial", int64(fw.batchDetails))
	w.text("movimento", e.Code)
	w.text("nosso_numero", nosso(e, fw.l.Field("3T", "nosso_numero")))
	w.text("seu_numero", e.SeuNumero)
	w.date("vencimento", e.Due)
	w.num("valor", e.Value)
	w.text("uso_empresa", firstOf(e.UsoEmpresa, e.SeuNumero))
	w.num("sacado_tipo", payerKind(e.PayerDoc))
	w.text("sacado_documento", digitsOrEmpty(e.PayerDoc))
	w.text("sacado_nome", e.Payer)
	w.text("motivos", strings.Join(e.Motivos, ""))
	if w.err != nil {
		return fmt.Errorf("retorno: linha %d (%s), segmento T: %w", e.SourceRow, e.SeuNumero, w.err)
	}
	if err := fw.emit(t); err != nil {
		return err
	}
	fw.details++
	fw.batchDetails++
	u, err := fw.detail("3U")
	if err != nil {
		return err
	}
	w = recw{r: u, dates: fw.dates}
	w.num("lote", int64(fw.batch))
	w.num("sequencial", int64(fw.batchDetails))
	w.text("movimento", e.Code)
	w.num("acrescimos", e.FineInterest)
	w.num("desconto", e.Discount)
	w.num("abatimento", e.Abatimento)
	w.num("valor_pago", e.Paid)
	w.num("valor_liquido", e.Paid)
	w.num("outros_creditos", e.Over)
	w.date("data_ocorrencia", e.Occurred)
	w.date("data_credito", e.Credit)
	if w.err != nil {
		return fmt.Errorf("retorno: linha %d (%s), segmento U: %w", e.SourceRow, e.SeuNumero, w.err)
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
	paid := e.Paid
	if e.Event == EventEstorno {
		paid = e.Refunded
	}
	w := recw{r: r, dates: fw.dates}
	w.text("movimento", e.Code)
	w.date("data_ocorrencia", e.Occurred)
	w.text("seu_numero", e.SeuNumero)
	w.date("vencimento", e.Due)
	w.num("valor", e.Value)
	w.text("uso_empresa", firstOf(e.UsoEmpresa, e.SeuNumero))
	w.text("nosso_numero", nn)
	w.num("desconto", e.Discount)
	w.num("abatimento", e.Abatimento)
	w.num("valor_pago", paid)
	w.num("acrescimos", e.FineInterest)
	w.num("outros_creditos", e.Over)
	w.date("data_credito", e.Credit)
	w.text("motivos", strings.Join(e.Motivos, ""))
	if fw.spec.name == Layout400Itau {
		w.text("nosso_numero_2", nn)
		w.text("sacado_nome", e.Payer)
	}
	if w.err != nil {
		return fmt.Errorf("retorno: linha %d (%s): %w", e.SourceRow, e.SeuNumero, w.err)
	}
	return fw.emit(r)
}

// finish writes the trailers and flushes.
func (fw *fileWriter) finish() error {
	switch fw.spec.name {
	case Layout240:
		if err := fw.closeBatch(); err != nil {
			return err
		}
		f, _ := fw.rec("9", nil)
		if err := apply(f, text("banco", fw.bank), num("qtd_lotes", int64(fw.batch)), num("qtd_registros", int64(fw.lines+1))); err != nil {
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
			num("qtd_14", int64(c("14").n)), num("valor_14", c("14").cents),
			num("qtd_12", int64(c("12").n)), num("valor_12", c("12").cents), num("qtd_13", int64(c("13").n)), num("valor_13", c("13").cents)); err != nil {
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
