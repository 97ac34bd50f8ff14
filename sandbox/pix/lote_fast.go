package pix

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	"remessa/internal/jsonscan"
	"remessa/rules"
	"remessa/sandbox/httpx"
)

// The typed path of PUT /v2/lotecobv/{id}. The reference path decodes the
// whole body into generic values (decodeAny), checks each item's map
// against cobvItemS and builds its Cob from the map (cobFromMap). A
// batch as clients send it has nothing unusual in it, so parseLoteTyped
// reads each item straight into its Cob (internal/jsonscan), checking
// the schema as it reads: a typed item is one the reference path would
// have decoded to a map that passes cobvItemS with no violation and
// whose cobFromMap is that Cob. Anything else in an item (an unknown or
// repeated key, a null, another type, any schema violation, a part the
// typed reader does not know such as loc) makes it decode that item to
// its map as the reference does, and anything unusual in the body's head
// (a violation, a key other than descricao and cobsv, a bad or repeated
// txid) makes the whole body go through parseLoteHead. Only the
// reference path ever reports a violation. lote_fast_test.go compares
// both paths on many generated and mutated bodies.

// errUnusual stops the typed reader: the reference path takes over.
var errUnusual = errors.New("pix: not for the typed path")

// parseLoteTyped is parseLoteHead for the body of a batch's PUT, with
// each item that allows it decoded to a Cob (lb.typed) instead of a map
// (lb.items[i] nil until lb.item(i) decodes it). false: the caller runs
// parseLoteHead. The items are read where they stand in the body; if one
// of them is unusual, the body is read again with each item first
// delimited (Scanner.Value), then read on its own, so an unusual one can
// be decoded to its map.
func parseLoteTyped(body []byte) (*loteBody, bool) {
	lb, ok := parseLoteWith(body, true)
	if !ok && lb == nil {
		lb, ok = parseLoteWith(body, false)
	}
	if !ok {
		return nil, false
	}
	return lb, true
}

// parseLoteWith is parseLoteTyped's reading of body: inPlace reads each
// item where it stands and gives up (a nil loteBody and false) at the
// first unusual item, otherwise an unusual item is decoded to its map;
// a non-nil loteBody and false: anything else unusual.
func parseLoteWith(body []byte, inPlace bool) (*loteBody, bool) {
	s := jsonscan.New(body)
	lb := &loteBody{body: body}
	var sawDesc, sawCobsv bool
	err := s.Object(func(key []byte) error {
		switch string(key) {
		case "descricao":
			if sawDesc || s.Peek() != '"' {
				return errUnusual
			}
			sawDesc = true
			d, err := s.Str()
			if err != nil {
				return err
			}
			if _, _, ctl := httpx.ControlChar(d, false); ctl || utf8.RuneCountInString(d) > 140 {
				return errUnusual
			}
			lb.descricao = &d
			return nil
		case "cobsv":
			if sawCobsv || s.Peek() != '[' {
				return errUnusual
			}
			sawCobsv = true
			return s.Array(func() error {
				if len(lb.txids) >= rules.MaxBatchItems {
					return errUnusual
				}
				var raw []byte
				var txid string
				var c *Cob
				if inPlace {
					s.Peek()
					start := len(body) - len(s.Rest())
					var err error
					if txid, c, err = decodeItemFrom(&s); err != nil {
						return errRetry
					}
					raw = body[start : len(body)-len(s.Rest())]
				} else {
					var err error
					if raw, err = s.Value(); err != nil {
						return err
					}
					txid, c = decodeItemTyped(raw)
				}
				var m map[string]any
				if c == nil {
					v, err := anyValue(new(jsonscan.New(raw)))
					if m, _ = v.(map[string]any); err != nil || m == nil {
						return errUnusual
					}
					txid, _ = m["txid"].(string)
				}
				if !rules.ValidTxid(txid) {
					return errUnusual
				}
				lb.items = append(lb.items, m)
				lb.typed = append(lb.typed, c)
				lb.itemRaws = append(lb.itemRaws, raw)
				lb.txids = append(lb.txids, txid)
				return nil
			})
		}
		return errUnusual
	})
	if err == errRetry {
		return nil, false
	}
	if err != nil || s.End() != nil || len(lb.txids) == 0 || !uniqueTxids(lb.txids) {
		return lb, false
	}
	return lb, true
}

// errRetry stops parseLoteWith's reading in place at an unusual item.
var errRetry = errors.New("pix: an unusual item")

// uniqueTxids tells whether no txid repeats: at once when they ascend
// (a run's txids do), else with a set.
func uniqueTxids(txids []string) bool {
	sorted := true
	for i := 1; i < len(txids) && sorted; i++ {
		sorted = txids[i-1] < txids[i]
	}
	if sorted {
		return true
	}
	seen := make(map[string]bool, len(txids))
	for _, t := range txids {
		if seen[t] {
			return false
		}
		seen[t] = true
	}
	return true
}

// item is the map of lb's item i as the reference path decodes it
// (decoded here from the item's bytes when the typed path read it).
func (lb *loteBody) item(i int) map[string]any {
	if lb.items[i] == nil && i < len(lb.itemRaws) {
		v, _ := anyValue(new(jsonscan.New(lb.itemRaws[i])))
		lb.items[i], _ = v.(map[string]any)
	}
	return lb.items[i]
}

// typedItem is item i's Cob when the typed path read it, else nil.
func (lb *loteBody) typedItem(i int) *Cob {
	if i < len(lb.typed) {
		return lb.typed[i]
	}
	return nil
}

// decodeItemTyped reads a batch item (raw, one JSON value) into its
// txid and Cob, checked against cobvItemS; a nil Cob when anything in it
// is unusual (see above).
func decodeItemTyped(raw []byte) (string, *Cob) {
	s := jsonscan.New(raw)
	txid, c, err := decodeItemFrom(&s)
	if err != nil || s.End() != nil {
		return "", nil
	}
	return txid, c
}

// decodeItemFrom is decodeItemTyped of the item at s; on an error s's
// position is unspecified.
func decodeItemFrom(s *jsonscan.Scanner) (string, *Cob, error) {
	d := typedDec{s: s}
	var txid string
	c := new(Cob)
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "txid":
			return 1, d.pattern(&txid, isTxid)
		case "calendario":
			return 2, d.calendario(&c.Calendario)
		case "devedor":
			c.Devedor = new(Pessoa)
			return 4, d.devedor(c.Devedor)
		case "valor":
			return 8, d.valor(&c.Valor)
		case "chave":
			return 16, d.text(&c.Chave, 1, rules.MaxPixKey)
		case "solicitacaoPagador":
			return 32, d.text(&c.SolicitacaoPagador, 0, rules.MaxSolicitacaoPagador)
		case "infoAdicionais":
			return 64, d.infoAdicionais(&c.InfoAdicionais)
		}
		return 0, errUnusual
	})
	if err == nil && seen&31 != 31 {
		err = errUnusual
	}
	if err != nil {
		return "", nil, err
	}
	return txid, c, nil
}

// typedDec reads the parts of a typed item; every error stops it.
type typedDec struct{ s *jsonscan.Scanner }

// object reads an object whose members member reads, each returning its
// bit in seen: a key it does not know (bit 0) or one seen before stops.
// (member switches on string(key), which allocates nothing.)
func (d *typedDec) object(seen *uint8, member func(key []byte) (uint8, error)) error {
	if d.s.Peek() != '{' {
		return errUnusual
	}
	return d.s.Object(func(key []byte) error {
		bit, err := member(key)
		if err != nil {
			return err
		}
		if bit == 0 || *seen&bit != 0 {
			return errUnusual
		}
		*seen |= bit
		return nil
	})
}

// array reads an array of minItems..maxItems elements (maxItems 0: no
// limit) into a slice made for them, elem reading element i.
func array[T any](d *typedDec, dst *[]T, minItems, maxItems int, elem func(e *T) error) error {
	if d.s.Peek() != '[' {
		return errUnusual
	}
	out := []T{}
	err := d.s.Array(func() error {
		var e T
		if err := elem(&e); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil || len(out) < minItems || maxItems > 0 && len(out) > maxItems {
		return errUnusual
	}
	*dst = out
	return nil
}

// str reads a string.
func (d *typedDec) str() (string, error) {
	if d.s.Peek() != '"' {
		return "", errUnusual
	}
	return d.s.Str()
}

// text reads a string the schema's str(minLen, maxLen) accepts (maxLen
// 0: no limit).
func (d *typedDec) text(dst *string, minLen, maxLen int) error {
	v, err := d.str()
	if err != nil {
		return err
	}
	if !textOK(v, minLen, maxLen) {
		return errUnusual
	}
	*dst = v
	return nil
}

// textOK tells whether schema.check accepts v as a str(minLen, maxLen):
// no control character and minLen..maxLen characters, counted only when
// the length in bytes does not tell.
func textOK(v string, minLen, maxLen int) bool {
	if _, _, ctl := httpx.ControlChar(v, false); ctl {
		return false
	}
	if n := len(v); maxLen > 0 && n > maxLen || minLen > 1 {
		rc := utf8.RuneCountInString(v)
		return rc >= minLen && (maxLen == 0 || rc <= maxLen)
	}
	return len(v) >= minLen // a character is at least a byte
}

// pattern reads a string that ok (a pattern of the schema, written by
// hand: patternsEqual in lote_fast_test.go checks each against its
// regexp) accepts; such a string is ASCII with no control character.
func (d *typedDec) pattern(dst *string, ok func(string) bool) error {
	v, err := d.str()
	if err != nil {
		return err
	}
	if !ok(v) {
		return errUnusual
	}
	*dst = v
	return nil
}

// integer reads a number the schema's integer(min, max) accepts (max 0:
// no limit) that fits an int.
func (d *typedDec) integer(min, max int64) (int, error) {
	if c := d.s.Peek(); c != '-' && (c < '0' || c > '9') {
		return 0, errUnusual
	}
	num, err := d.s.Number()
	if err != nil {
		return 0, err
	}
	i, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || i < min || max != 0 && i > max || int64(int(i)) != i {
		return 0, errUnusual
	}
	return int(i), nil
}

func (d *typedDec) calendario(c *Calendario) error {
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "dataDeVencimento":
			return 1, d.pattern(&c.DataDeVencimento, isDate)
		case "validadeAposVencimento":
			n, err := d.integer(0, math.MaxInt32)
			c.ValidadeAposVencimento = &n
			return 2, err
		}
		return 0, errUnusual
	})
	if err == nil && seen&1 == 0 {
		return errUnusual
	}
	return err
}

func (d *typedDec) devedor(p *Pessoa) error {
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "nome":
			return 1, d.text(&p.Nome, 1, 200)
		case "cpf":
			return 2, d.pattern(&p.CPF, isCPFShape)
		case "cnpj":
			return 4, d.pattern(&p.CNPJ, isCNPJShape)
		case "email":
			return 8, d.text(&p.Email, 1, 77)
		case "logradouro":
			return 16, d.text(&p.Logradouro, 1, 200)
		case "cidade":
			return 32, d.text(&p.Cidade, 1, 200)
		case "uf":
			return 64, d.pattern(&p.UF, isUFShape)
		case "cep":
			return 128, d.pattern(&p.CEP, isCEPShape)
		}
		return 0, errUnusual
	})
	if err == nil && seen&1 == 0 {
		return errUnusual
	}
	return err
}

func (d *typedDec) valor(v *Valor) error {
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "original":
			return 1, d.pattern(&v.Original, isValor)
		case "multa":
			return 2, d.modalidade(&v.Multa, 2)
		case "juros":
			return 4, d.modalidade(&v.Juros, 8)
		case "abatimento":
			return 8, d.modalidade(&v.Abatimento, 2)
		case "desconto":
			v.Desconto = new(Desconto)
			return 16, d.desconto(v.Desconto)
		}
		return 0, errUnusual
	})
	if err == nil && seen&1 == 0 {
		return errUnusual
	}
	return err
}

// modalidade reads a modS(max).
func (d *typedDec) modalidade(dst **Modalidade, max int64) error {
	m := new(Modalidade)
	*dst = m
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "modalidade":
			n, err := d.integer(1, max)
			m.Modalidade = n
			return 1, err
		case "valorPerc":
			return 2, d.pattern(&m.ValorPerc, isValor)
		}
		return 0, errUnusual
	})
	if err == nil && seen != 3 {
		return errUnusual
	}
	return err
}

func (d *typedDec) desconto(ds *Desconto) error {
	var seen uint8
	err := d.object(&seen, func(key []byte) (uint8, error) {
		switch string(key) {
		case "modalidade":
			n, err := d.integer(1, 6)
			ds.Modalidade = n
			return 1, err
		case "valorPerc":
			return 2, d.pattern(&ds.ValorPerc, isValor)
		case "descontoDataFixa":
			return 4, array(d, &ds.DescontoDataFixa, 1, 3, func(f *DataFixa) error {
				var seen uint8
				err := d.object(&seen, func(key []byte) (uint8, error) {
					switch string(key) {
					case "data":
						return 1, d.pattern(&f.Data, isDate)
					case "valorPerc":
						return 2, d.pattern(&f.ValorPerc, isValor)
					}
					return 0, errUnusual
				})
				if err == nil && seen != 3 {
					return errUnusual
				}
				return err
			})
		}
		return 0, errUnusual
	})
	if err == nil && seen&1 == 0 {
		return errUnusual
	}
	return err
}

func (d *typedDec) infoAdicionais(dst *[]InfoAdicional) error {
	return array(d, dst, 0, 50, func(ia *InfoAdicional) error {
		var seen uint8
		err := d.object(&seen, func(key []byte) (uint8, error) {
			switch string(key) {
			case "nome":
				return 1, d.text(&ia.Nome, 1, 50)
			case "valor":
				return 2, d.text(&ia.Valor, 1, 200)
			}
			return 0, errUnusual
		})
		if err == nil && seen != 3 {
			return errUnusual
		}
		return err
	})
}

// The patterns of cobvItemS's fields, by hand.

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isValor is reValor: ^\d{1,10}\.\d{2}$.
func isValor(s string) bool {
	n := len(s)
	return n >= 4 && n <= 13 && s[n-3] == '.' && allDigits(s[:n-3]) && allDigits(s[n-2:])
}

// isDate is dateS's ^\d{4}-\d{2}-\d{2}$.
func isDate(s string) bool {
	return len(s) == 10 && s[4] == '-' && s[7] == '-' && allDigits(s[:4]) && allDigits(s[5:7]) && allDigits(s[8:])
}

// isTxid is reTxid: ^[a-zA-Z0-9]{26,35}$.
func isTxid(s string) bool {
	if len(s) < 26 || len(s) > 35 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isDigit(c) && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// isCPFShape is ^\d{11}$.
func isCPFShape(s string) bool { return len(s) == 11 && allDigits(s) }

// isCEPShape is ^\d{8}$.
func isCEPShape(s string) bool { return len(s) == 8 && allDigits(s) }

// isUFShape is ^[A-Z]{2}$.
func isUFShape(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// isCNPJShape is ^[0-9A-Z]{12}\d{2}$.
func isCNPJShape(s string) bool {
	if len(s) != 14 || !allDigits(s[12:]) {
		return false
	}
	for i := 0; i < 12; i++ {
		if c := s[i]; !isDigit(c) && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}
