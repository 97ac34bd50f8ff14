package pix

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"remessa/internal/jsonw"
)

// The charges' JSON (the stored document of a cob or cobv and the answers
// of GET /v2/cob[v], GET /v2/cob[v]/{txid} and the writes that answer a
// Cob) is written by hand here instead of by encoding/json's reflection,
// the biggest share of the sandbox's CPU after SQLite in a batch run.
// The output is byte for byte what encoding/json writes for the same
// value (fields in declaration order, omitempty as encoding/json reads
// it, strings escaped with escapeHTML): stored documents stay readable by
// any version and answers do not change. A string with anything to escape
// is handed to encoding/json itself (jsonw.AppendString); a time
// encoding/json would refuse makes the whole value go through
// encoding/json, which gives the same error. cobjson_internal_test.go
// fills every field of every struct by reflection and compares with
// encoding/json (a field added later and not written here fails it) and
// fuzzes the same comparison.

// appendJSON appends c's encoding/json encoding to b.
func (c *Cob) appendJSON(b []byte) ([]byte, error) {
	if c == nil {
		return append(b, "null"...), nil
	}
	return appendCob(b, c), nil
}

// appendJSON appends l's encoding/json encoding to b.
func (l *CobList) appendJSON(b []byte) ([]byte, error) {
	if l == nil {
		return append(b, "null"...), nil
	}
	b = append(b, `{"parametros":`...)
	b = appendParametros(b, &l.Parametros)
	b = append(b, `,"cobs":`...)
	b = jsonw.AppendArray(b, l.Cobs, appendCob)
	return append(b, '}'), nil
}

// marshalCharge is json.Marshal(c): written into a scratch buffer, then
// copied out at its size (the store keeps it until its row is written).
func marshalCharge(c *charge) ([]byte, error) {
	bp := chargeBufs.Get().(*[]byte)
	b, ok := appendCharge((*bp)[:0], c)
	var out []byte
	if ok {
		out = append([]byte(nil), b...)
	}
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		chargeBufs.Put(bp)
	}
	if !ok {
		cp := *c // (a copy: c itself does not escape, so a caller's copy stays on its stack)
		return json.Marshal(&cp)
	}
	return out, nil
}

// chargeBufs holds marshalCharge's scratch buffers.
var chargeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// appendCharge appends c's encoding/json encoding to b; false when
// encoding/json must write it (a time it refuses).
func appendCharge(b []byte, c *charge) ([]byte, bool) {
	b = append(b, `{"kind":`...)
	b = jsonw.AppendString(b, c.Kind)
	if c.LoteID != "" {
		b = append(b, `,"loteId":`...)
		b = jsonw.AppendString(b, c.LoteID)
	}
	if c.SplitID != "" {
		b = append(b, `,"splitId":`...)
		b = jsonw.AppendString(b, c.SplitID)
	}
	if c.SplitRev != 0 {
		b = append(b, `,"splitRevisao":`...)
		b = strconv.AppendInt(b, int64(c.SplitRev), 10)
	}
	b = append(b, `,"created":"`...)
	var err error
	if b, err = c.Created.AppendText(b); err != nil {
		return b, false
	}
	b = append(b, `","cents":`...)
	b = strconv.AppendInt(b, c.Cents, 10)
	if len(c.Paid) > 0 {
		b = append(b, `,"paid":[`...)
		for i, s := range c.Paid {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, s)
		}
		b = append(b, ']')
	}
	if c.LocID != 0 {
		b = append(b, `,"loc":`...)
		b = strconv.AppendInt(b, c.LocID, 10)
	}
	if c.Host != "" {
		b = append(b, `,"host":`...)
		b = jsonw.AppendString(b, c.Host)
	}
	b = append(b, `,"body":`...)
	b = appendCob(b, &c.Body)
	return append(b, '}'), true
}

// jsonObj writes the members of a JSON object whose members may all be
// omitted: key puts '{' before the first member and ',' before the
// others; close ends the object ("{}" when no member was written).
type jsonObj struct{ sep byte }

func newJSONObj() jsonObj { return jsonObj{sep: '{'} }

func (o *jsonObj) key(b []byte, key string) []byte {
	b = append(b, o.sep)
	o.sep = ','
	return append(b, key...)
}

func (o *jsonObj) str(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	return jsonw.AppendString(o.key(b, key), v)
}

func (o *jsonObj) close(b []byte) []byte {
	if o.sep == '{' {
		b = append(b, '{')
	}
	return append(b, '}')
}

func appendCob(b []byte, c *Cob) []byte {
	b = append(b, `{"calendario":`...)
	o := newJSONObj()
	cal := &c.Calendario
	b = o.str(b, `"criacao":`, cal.Criacao)
	if cal.Expiracao != nil {
		b = strconv.AppendInt(o.key(b, `"expiracao":`), int64(*cal.Expiracao), 10)
	}
	b = o.str(b, `"dataDeVencimento":`, cal.DataDeVencimento)
	if cal.ValidadeAposVencimento != nil {
		b = strconv.AppendInt(o.key(b, `"validadeAposVencimento":`), int64(*cal.ValidadeAposVencimento), 10)
	}
	b = o.close(b)
	b = append(b, `,"txid":`...)
	b = jsonw.AppendString(b, c.Txid)
	b = append(b, `,"revisao":`...)
	b = strconv.AppendInt(b, int64(c.Revisao), 10)
	if l := c.Loc; l != nil {
		b = append(b, `,"loc":{"id":`...)
		b = strconv.AppendInt(b, l.ID, 10)
		b = append(b, `,"location":`...)
		b = jsonw.AppendString(b, l.Location)
		b = append(b, `,"tipoCob":`...)
		b = jsonw.AppendString(b, l.TipoCob)
		if l.Criacao != "" {
			b = append(b, `,"criacao":`...)
			b = jsonw.AppendString(b, l.Criacao)
		}
		b = append(b, '}')
	}
	if c.Location != "" {
		b = append(b, `,"location":`...)
		b = jsonw.AppendString(b, c.Location)
	}
	b = append(b, `,"status":`...)
	b = jsonw.AppendString(b, c.Status)
	if c.Devedor != nil {
		b = appendPessoa(append(b, `,"devedor":`...), c.Devedor)
	}
	if c.Recebedor != nil {
		b = appendPessoa(append(b, `,"recebedor":`...), c.Recebedor)
	}
	b = appendValor(append(b, `,"valor":`...), &c.Valor)
	b = append(b, `,"chave":`...)
	b = jsonw.AppendString(b, c.Chave)
	if c.SolicitacaoPagador != "" {
		b = append(b, `,"solicitacaoPagador":`...)
		b = jsonw.AppendString(b, c.SolicitacaoPagador)
	}
	if len(c.InfoAdicionais) > 0 {
		b = append(b, `,"infoAdicionais":[`...)
		for i := range c.InfoAdicionais {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"nome":`...)
			b = jsonw.AppendString(b, c.InfoAdicionais[i].Nome)
			b = append(b, `,"valor":`...)
			b = jsonw.AppendString(b, c.InfoAdicionais[i].Valor)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c.PixCopiaECola != "" {
		b = append(b, `,"pixCopiaECola":`...)
		b = jsonw.AppendString(b, c.PixCopiaECola)
	}
	if len(c.Pix) > 0 {
		b = append(b, `,"pix":[`...)
		for i := range c.Pix {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendRecebido(b, &c.Pix[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendPessoa(b []byte, p *Pessoa) []byte {
	o := newJSONObj()
	b = o.str(b, `"cpf":`, p.CPF)
	b = o.str(b, `"cnpj":`, p.CNPJ)
	b = o.str(b, `"nome":`, p.Nome)
	b = o.str(b, `"nomeFantasia":`, p.NomeFantasia)
	b = o.str(b, `"email":`, p.Email)
	b = o.str(b, `"logradouro":`, p.Logradouro)
	b = o.str(b, `"cidade":`, p.Cidade)
	b = o.str(b, `"uf":`, p.UF)
	b = o.str(b, `"cep":`, p.CEP)
	return o.close(b)
}

func appendModalidade(b []byte, key string, m *Modalidade) []byte {
	if m == nil {
		return b
	}
	b = append(b, key...)
	b = append(b, `{"modalidade":`...)
	b = strconv.AppendInt(b, int64(m.Modalidade), 10)
	b = append(b, `,"valorPerc":`...)
	b = jsonw.AppendString(b, m.ValorPerc)
	return append(b, '}')
}

func appendValor(b []byte, v *Valor) []byte {
	b = append(b, `{"original":`...)
	b = jsonw.AppendString(b, v.Original)
	if v.ModalidadeAlteracao != nil {
		b = append(b, `,"modalidadeAlteracao":`...)
		b = strconv.AppendInt(b, int64(*v.ModalidadeAlteracao), 10)
	}
	b = appendModalidade(b, `,"multa":`, v.Multa)
	b = appendModalidade(b, `,"juros":`, v.Juros)
	b = appendModalidade(b, `,"abatimento":`, v.Abatimento)
	if d := v.Desconto; d != nil {
		b = append(b, `,"desconto":{"modalidade":`...)
		b = strconv.AppendInt(b, int64(d.Modalidade), 10)
		if d.ValorPerc != "" {
			b = append(b, `,"valorPerc":`...)
			b = jsonw.AppendString(b, d.ValorPerc)
		}
		if len(d.DescontoDataFixa) > 0 {
			b = append(b, `,"descontoDataFixa":[`...)
			for i := range d.DescontoDataFixa {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"data":`...)
				b = jsonw.AppendString(b, d.DescontoDataFixa[i].Data)
				b = append(b, `,"valorPerc":`...)
				b = jsonw.AppendString(b, d.DescontoDataFixa[i].ValorPerc)
				b = append(b, '}')
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendRecebido(b []byte, p *Recebido) []byte {
	b = append(b, `{"endToEndId":`...)
	b = jsonw.AppendString(b, p.EndToEndID)
	if p.Txid != "" {
		b = append(b, `,"txid":`...)
		b = jsonw.AppendString(b, p.Txid)
	}
	b = append(b, `,"valor":`...)
	b = jsonw.AppendString(b, p.Valor)
	if p.Chave != "" {
		b = append(b, `,"chave":`...)
		b = jsonw.AppendString(b, p.Chave)
	}
	b = append(b, `,"horario":`...)
	b = jsonw.AppendString(b, p.Horario)
	if p.InfoPagador != "" {
		b = append(b, `,"infoPagador":`...)
		b = jsonw.AppendString(b, p.InfoPagador)
	}
	if len(p.Devolucoes) > 0 {
		b = append(b, `,"devolucoes":[`...)
		for i := range p.Devolucoes {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendDevolucao(b, &p.Devolucoes[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func appendDevolucao(b []byte, d *Devolucao) []byte {
	b = append(b, `{"id":`...)
	b = jsonw.AppendString(b, d.ID)
	b = append(b, `,"rtrId":`...)
	b = jsonw.AppendString(b, d.RtrID)
	b = append(b, `,"valor":`...)
	b = jsonw.AppendString(b, d.Valor)
	if d.Natureza != "" {
		b = append(b, `,"natureza":`...)
		b = jsonw.AppendString(b, d.Natureza)
	}
	if d.Descricao != "" {
		b = append(b, `,"descricao":`...)
		b = jsonw.AppendString(b, d.Descricao)
	}
	b = append(b, `,"horario":{"solicitacao":`...)
	b = jsonw.AppendString(b, d.Horario.Solicitacao)
	if d.Horario.Liquidacao != "" {
		b = append(b, `,"liquidacao":`...)
		b = jsonw.AppendString(b, d.Horario.Liquidacao)
	}
	b = append(b, `},"status":`...)
	b = jsonw.AppendString(b, d.Status)
	if d.Motivo != "" {
		b = append(b, `,"motivo":`...)
		b = jsonw.AppendString(b, d.Motivo)
	}
	return append(b, '}')
}

func appendParametros(b []byte, p *Parametros) []byte {
	b = append(b, `{"inicio":`...)
	b = jsonw.AppendString(b, p.Inicio)
	b = append(b, `,"fim":`...)
	b = jsonw.AppendString(b, p.Fim)
	if p.CPF != "" {
		b = append(b, `,"cpf":`...)
		b = jsonw.AppendString(b, p.CPF)
	}
	if p.CNPJ != "" {
		b = append(b, `,"cnpj":`...)
		b = jsonw.AppendString(b, p.CNPJ)
	}
	if p.Status != "" {
		b = append(b, `,"status":`...)
		b = jsonw.AppendString(b, p.Status)
	}
	if p.LocationPresente != nil {
		b = append(b, `,"locationPresente":`...)
		b = strconv.AppendBool(b, *p.LocationPresente)
	}
	if p.LoteCobVID != nil {
		b = append(b, `,"loteCobVId":`...)
		b = strconv.AppendInt(b, *p.LoteCobVID, 10)
	}
	if p.Txid != "" {
		b = append(b, `,"txid":`...)
		b = jsonw.AppendString(b, p.Txid)
	}
	pg := &p.Paginacao
	b = append(b, `,"paginacao":{"paginaAtual":`...)
	b = strconv.AppendInt(b, int64(pg.PaginaAtual), 10)
	b = append(b, `,"itensPorPagina":`...)
	b = strconv.AppendInt(b, int64(pg.ItensPorPagina), 10)
	b = append(b, `,"quantidadeDePaginas":`...)
	b = strconv.AppendInt(b, int64(pg.QuantidadeDePaginas), 10)
	b = append(b, `,"quantidadeTotalDeItens":`...)
	b = strconv.AppendInt(b, int64(pg.QuantidadeTotalDeItens), 10)
	return append(b, `}}`...)
}

// jsonBufs holds the buffers answers are encoded into: a few, in a
// channel rather than a sync.Pool, which every GC empties (a page of 1,000
// charges is ~1.5 MB, grown again from nothing after each GC otherwise).
var jsonBufs = make(chan []byte, 4)

// maxKeptBuf is the largest buffer kept in jsonBufs.
const maxKeptBuf = 4 << 20

// writeAppended writes v's JSON (writeJSON's answer) from a pooled
// buffer when v is an answer written here (*Cob, *CobList: those exact
// types, not a struct embedding one, whose other fields encoding/json
// writes); false when it is not.
func writeAppended(w http.ResponseWriter, status int, v any) bool {
	var app func([]byte) ([]byte, error)
	size := 4096 // the first guess of a new buffer
	switch v := v.(type) {
	case *Cob:
		app = v.appendJSON
	case *CobList:
		app = v.appendJSON
		if v != nil {
			size += 1536 * len(v.Cobs)
		}
	default:
		return false
	}
	var buf []byte
	select {
	case buf = <-jsonBufs:
	default:
		buf = make([]byte, 0, size)
	}
	b, err := app(buf[:0])
	if err == nil {
		writeRaw(w, status, b)
	}
	if cap(b) <= maxKeptBuf {
		select {
		case jsonBufs <- b[:0]:
		default:
		}
	}
	return err == nil
}
