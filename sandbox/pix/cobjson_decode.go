package pix

import (
	"encoding/json"
	"strconv"
)

// cobFromMap is the request part of a Cob (calendario, devedor, valor,
// chave, solicitacaoPagador, infoAdicionais; txid is ignored) as
// encoding/json decodes it from m's encoding (remarshal(m, &c)), m being
// a request body as decodeAny reads it (numbers json.Number), without
// encoding m again nor decoding by reflection. false when m holds
// anything it does not decode exactly as encoding/json would: a key it
// does not know (including one spelt in another case, which encoding/json
// would match), a value of another type, a number that is not an int:
// the caller then decodes by encoding/json (checkCobRaw), into the zero
// Cob returned with false.
// cobjson_decode_test.go compares it with encoding/json on every field
// (filled by reflection) and on fuzzed bodies.
func cobFromMap(m map[string]any) (Cob, bool) {
	var d mapDec
	var c Cob
	for k, v := range m {
		switch k {
		case "txid":
		case "calendario":
			if o := d.obj(v); o != nil {
				d.calendario(o, &c.Calendario)
			}
		case "devedor":
			if o := d.obj(v); o != nil {
				c.Devedor = new(Pessoa)
				d.pessoa(o, c.Devedor)
			}
		case "valor":
			if o := d.obj(v); o != nil {
				d.valor(o, &c.Valor)
			}
		case "chave":
			d.str(v, &c.Chave)
		case "solicitacaoPagador":
			d.str(v, &c.SolicitacaoPagador)
		case "infoAdicionais":
			if a, ok := d.arr(v); ok {
				c.InfoAdicionais = make([]InfoAdicional, len(a))
				for i, e := range a {
					if o := d.obj(e); o != nil {
						d.infoAdicional(o, &c.InfoAdicionais[i])
					}
				}
			}
		default:
			return Cob{}, false
		}
	}
	if d.bad {
		return Cob{}, false
	}
	return c, true
}

// mapDec decodes generic JSON values into the Cob's parts; bad is set by
// anything encoding/json would decode otherwise (or refuse).
type mapDec struct{ bad bool }

// obj is v as an object; nil for null (encoding/json leaves the field as
// it is) and for any other type (bad set).
func (d *mapDec) obj(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		return x
	case nil:
	default:
		d.bad = true
	}
	return nil
}

// arr is v as an array; false for null (the slice stays nil) and for any
// other type (bad set).
func (d *mapDec) arr(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case nil:
	default:
		d.bad = true
	}
	return nil, false
}

func (d *mapDec) str(v any, dst *string) {
	switch x := v.(type) {
	case string:
		*dst = x
	case nil:
	default:
		d.bad = true
	}
}

func (d *mapDec) int(v any, dst *int) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64) // as encoding/json stores a number in an int
		if err != nil || int64(int(n)) != n {
			d.bad = true
			return
		}
		*dst = int(n)
	case nil:
	default:
		d.bad = true
	}
}

func (d *mapDec) intPtr(v any, dst **int) {
	if v == nil {
		*dst = nil
		return
	}
	p := new(int)
	d.int(v, p)
	*dst = p
}

func (d *mapDec) unknown() { d.bad = true }

func (d *mapDec) calendario(m map[string]any, c *Calendario) {
	for k, v := range m {
		switch k {
		case "criacao":
			d.str(v, &c.Criacao)
		case "expiracao":
			d.intPtr(v, &c.Expiracao)
		case "dataDeVencimento":
			d.str(v, &c.DataDeVencimento)
		case "validadeAposVencimento":
			d.intPtr(v, &c.ValidadeAposVencimento)
		default:
			d.unknown()
		}
	}
}

func (d *mapDec) pessoa(m map[string]any, p *Pessoa) {
	for k, v := range m {
		switch k {
		case "cpf":
			d.str(v, &p.CPF)
		case "cnpj":
			d.str(v, &p.CNPJ)
		case "nome":
			d.str(v, &p.Nome)
		case "nomeFantasia":
			d.str(v, &p.NomeFantasia)
		case "email":
			d.str(v, &p.Email)
		case "logradouro":
			d.str(v, &p.Logradouro)
		case "cidade":
			d.str(v, &p.Cidade)
		case "uf":
			d.str(v, &p.UF)
		case "cep":
			d.str(v, &p.CEP)
		default:
			d.unknown()
		}
	}
}

func (d *mapDec) modalidade(v any, dst **Modalidade) {
	o := d.obj(v)
	if o == nil {
		return // null: nil (the field was nil)
	}
	m := new(Modalidade)
	*dst = m
	for k, v := range o {
		switch k {
		case "modalidade":
			d.int(v, &m.Modalidade)
		case "valorPerc":
			d.str(v, &m.ValorPerc)
		default:
			d.unknown()
		}
	}
}

func (d *mapDec) valor(m map[string]any, val *Valor) {
	for k, v := range m {
		switch k {
		case "original":
			d.str(v, &val.Original)
		case "modalidadeAlteracao":
			d.intPtr(v, &val.ModalidadeAlteracao)
		case "multa":
			d.modalidade(v, &val.Multa)
		case "juros":
			d.modalidade(v, &val.Juros)
		case "abatimento":
			d.modalidade(v, &val.Abatimento)
		case "desconto":
			if o := d.obj(v); o != nil {
				val.Desconto = new(Desconto)
				d.desconto(o, val.Desconto)
			}
		default:
			d.unknown()
		}
	}
}

func (d *mapDec) desconto(m map[string]any, ds *Desconto) {
	for k, v := range m {
		switch k {
		case "modalidade":
			d.int(v, &ds.Modalidade)
		case "valorPerc":
			d.str(v, &ds.ValorPerc)
		case "descontoDataFixa":
			a, ok := d.arr(v)
			if !ok {
				continue
			}
			ds.DescontoDataFixa = make([]DataFixa, len(a))
			for i, e := range a {
				o := d.obj(e)
				for k, v := range o {
					switch k {
					case "data":
						d.str(v, &ds.DescontoDataFixa[i].Data)
					case "valorPerc":
						d.str(v, &ds.DescontoDataFixa[i].ValorPerc)
					default:
						d.unknown()
					}
				}
			}
		default:
			d.unknown()
		}
	}
}

func (d *mapDec) infoAdicional(m map[string]any, ia *InfoAdicional) {
	for k, v := range m {
		switch k {
		case "nome":
			d.str(v, &ia.Nome)
		case "valor":
			d.str(v, &ia.Valor)
		default:
			d.unknown()
		}
	}
}
