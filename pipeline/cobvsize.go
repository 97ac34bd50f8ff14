package pipeline

import (
	"strconv"
	"unicode/utf8"
)

// cobvSize is the size of json.Marshal's encoding of c counted field by
// field, without encoding it (a plan sizes every cobv row of a job, and
// encoding each one cost about 1.3 µs). ok is false when a string of c
// holds a byte encoding/json would escape or replace ('"', '\\', '<',
// '>', '&', a control character, invalid UTF-8, U+2028, U+2029): then
// CobvBytes encodes it. TestCobvSizeFields fails when a field is added to
// the request's types and not here; FuzzCobvSize compares with the
// encoder.
func cobvSize(c *CobvRequest) (n int, ok bool) {
	s := sizer{ok: true}
	s.cobv(c)
	return s.n, s.ok
}

// AppendCobvJSON appends to dst json.Marshal's bytes of c, written field
// by field without reflection (a run's seed journals every cobv row's
// request), and reports true; or, when a string of c holds a byte
// encoding/json escapes or replaces (see cobvSize), dst as it was and
// false: encode c with encoding/json then. TestAppendCobvJSON compares
// with json.Marshal.
func AppendCobvJSON(dst []byte, c *CobvRequest) ([]byte, bool) {
	s := sizer{ok: true, w: true, b: dst}
	s.cobv(c)
	if !s.ok {
		return dst, false
	}
	return s.b, true
}

// cobv counts or writes c.
func (s *sizer) cobv(c *CobvRequest) {
	s.open()
	s.field("calendario")
	s.open()
	s.str("dataDeVencimento", c.Calendario.DataDeVencimento)
	s.int("validadeAposVencimento", c.Calendario.ValidadeAposVencimento)
	s.close()
	s.strOmit("txid", c.Txid)
	s.field("devedor")
	d := &c.Devedor
	s.open()
	s.strOmit("cpf", d.CPF)
	s.strOmit("cnpj", d.CNPJ)
	s.str("nome", d.Nome)
	s.strOmit("email", d.Email)
	s.strOmit("logradouro", d.Logradouro)
	s.strOmit("cidade", d.Cidade)
	s.strOmit("uf", d.UF)
	s.strOmit("cep", d.CEP)
	s.close()
	s.field("valor")
	v := &c.Valor
	s.open()
	s.str("original", v.Original)
	for _, m := range [...]struct {
		name string
		m    *Modalidade
	}{{"multa", v.Multa}, {"juros", v.Juros}, {"abatimento", v.Abatimento}} {
		if m.m != nil {
			s.field(m.name)
			s.open()
			s.int("modalidade", m.m.Modalidade)
			s.str("valorPerc", m.m.ValorPerc)
			s.close()
		}
	}
	if ds := v.Desconto; ds != nil {
		s.field("desconto")
		s.open()
		s.int("modalidade", ds.Modalidade)
		s.strOmit("valorPerc", ds.ValorPerc)
		if len(ds.DescontoDataFixa) > 0 {
			s.field("descontoDataFixa")
			s.byte('[')
			for i, dv := range ds.DescontoDataFixa {
				if i > 0 {
					s.byte(',')
				}
				s.open()
				s.str("data", dv.Data)
				s.str("valorPerc", dv.ValorPerc)
				s.close()
			}
			s.byte(']')
		}
		s.close()
	}
	s.close()
	s.str("chave", c.Chave)
	s.strOmit("solicitacaoPagador", c.SolicitacaoPagador)
	s.close()
}

// sizer counts the bytes of a JSON object written field by field, or
// writes them (w) to b.
type sizer struct {
	n     int
	first bool // the next field is its object's first (no comma before)
	ok    bool
	w     bool
	b     []byte
}

func (s *sizer) byte(c byte) {
	s.n++
	if s.w {
		s.b = append(s.b, c)
	}
}

func (s *sizer) open()  { s.byte('{'); s.first = true }
func (s *sizer) close() { s.byte('}'); s.first = false }

// field counts a field's name, its colon and the comma before it.
func (s *sizer) field(name string) {
	if !s.first {
		s.byte(',')
	}
	s.first = false
	s.n += len(name) + 3
	if s.w {
		s.b = append(append(append(s.b, '"'), name...), '"', ':')
	}
}

func (s *sizer) int(name string, v int) {
	s.field(name)
	if s.w {
		k := len(s.b)
		s.b = strconv.AppendInt(s.b, int64(v), 10)
		s.n += len(s.b) - k
		return
	}
	var b [24]byte
	s.n += len(strconv.AppendInt(b[:0], int64(v), 10))
}

func (s *sizer) str(name, v string) {
	s.field(name)
	s.n += 2 + len(v)
	if !JSONPlain(v) {
		s.ok = false
	}
	if s.w {
		s.b = append(append(append(s.b, '"'), v...), '"')
	}
}

func (s *sizer) strOmit(name, v string) {
	if v != "" {
		s.str(name, v)
	}
}

// JSONPlain says whether encoding/json writes v as it is between its
// quotes: no '"', '\\', '<', '>', '&', control character, invalid UTF-8,
// U+2028 or U+2029.
func JSONPlain(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return false
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size - 1
	}
	return true
}
