package pix

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"remessa/rules"
)

const (
	reValor = `^\d{1,10}\.\d{2}$`
	reTxid  = `^[a-zA-Z0-9]{26,35}$`
)

func valorS() *schema { return pat(reValor, `\d{1,10}\.\d{2} (ex.: "123.45")`) }
func dateS() *schema  { return pat(`^\d{4}-\d{2}-\d{2}$`, "AAAA-MM-DD") }

func devedorS(nomeRequired bool) *schema {
	nome := opt("nome", str(1, 200))
	if nomeRequired {
		nome = req("nome", str(1, 200))
	}
	return obj(
		opt("cpf", pat(`^\d{11}$`, "11 dígitos")),
		opt("cnpj", pat(`^[0-9A-Z]{12}\d{2}$`, "14 caracteres (12 alfanuméricos e 2 dígitos)")),
		nome,
		opt("email", str(1, 77)),
		opt("logradouro", str(1, 200)),
		opt("cidade", str(1, 200)),
		opt("uf", pat(`^[A-Z]{2}$`, "sigla da UF com 2 letras")),
		opt("cep", pat(`^\d{8}$`, "8 dígitos")),
	)
}

func commonTail(chaveRequired bool) []field {
	chave := opt("chave", str(1, rules.MaxPixKey))
	if chaveRequired {
		chave = req("chave", str(1, rules.MaxPixKey))
	}
	return []field{
		chave,
		opt("solicitacaoPagador", str(0, rules.MaxSolicitacaoPagador)),
		opt("infoAdicionais", arr(obj(req("nome", str(1, 50)), req("valor", str(1, 200))), 0, 50)),
		opt("loc", obj(req("id", integer(0, 0)))),
	}
}

func modS(max int64) *schema {
	return obj(req("modalidade", integer(1, max)), req("valorPerc", valorS()))
}

func descontoS() *schema {
	return obj(
		req("modalidade", integer(1, 6)),
		opt("valorPerc", valorS()),
		opt("descontoDataFixa", arr(obj(req("data", dateS()), req("valorPerc", valorS())), 1, 3)),
	)
}

// Schemas of the request bodies. "patch" schemas make every field optional.
var (
	cobCreateS = obj(append([]field{
		opt("calendario", obj(opt("expiracao", integer(1, math.MaxInt32)))),
		opt("devedor", devedorS(true)),
		req("valor", obj(req("original", valorS()), opt("modalidadeAlteracao", integer(0, 1)))),
	}, commonTail(true)...)...)
	cobPatchS = obj(append([]field{
		opt("calendario", obj(opt("expiracao", integer(1, math.MaxInt32)))),
		opt("devedor", devedorS(false)),
		opt("valor", obj(opt("original", valorS()), opt("modalidadeAlteracao", integer(0, 1)))),
		opt("status", enumStr(StatusRemovidaUser)),
	}, commonTail(false)...)...)
	cobvFields = append([]field{
		req("calendario", obj(req("dataDeVencimento", dateS()), opt("validadeAposVencimento", integer(0, math.MaxInt32)))),
		req("devedor", devedorS(true)),
		req("valor", cobvValorS(true)),
	}, commonTail(true)...)
	cobvPatchFields = append([]field{
		opt("calendario", obj(opt("dataDeVencimento", dateS()), opt("validadeAposVencimento", integer(0, math.MaxInt32)))),
		opt("devedor", devedorS(false)),
		opt("valor", cobvValorS(false)),
		opt("status", enumStr(StatusRemovidaUser)),
	}, commonTail(false)...)
	cobvCreateS    = obj(cobvFields...)
	cobvPatchS     = obj(cobvPatchFields...)
	cobvItemS      = obj(append([]field{req("txid", pat(reTxid, "[a-zA-Z0-9]{26,35}"))}, cobvFields...)...)
	cobvItemPatchS = obj(append([]field{req("txid", pat(reTxid, "[a-zA-Z0-9]{26,35}"))}, cobvPatchFields...)...)
)

func cobvValorS(originalRequired bool) *schema {
	orig := opt("original", valorS())
	if originalRequired {
		orig = req("original", valorS())
	}
	return obj(orig,
		opt("multa", modS(2)),
		opt("juros", modS(8)),
		opt("abatimento", modS(2)),
		opt("desconto", descontoS()),
	)
}

// cobInput is a checked creation (or merged revision) request.
type cobInput struct {
	Body  Cob   // request fields only (calendario, devedor, valor, chave, ...)
	Cents int64 // valor.original in cents
}

// keyChecker tells whether a Pix key belongs to the account.
type keyChecker func(chave string) bool

// checkCob validates a generic JSON value as a creation request of kind
// (cob or cobv) against s; prefix names where the body sits ("" for a
// single charge, "cobsv[3]" for a batch item). Violations name the
// property with its dotted path.
func checkCob(v any, s *schema, kind, prefix string, own keyChecker) (*cobInput, []Violacao) {
	return checkCobRaw(nil, v, s, kind, prefix, own)
}

// checkCobRaw is checkCob of v decoded from raw (nil: v alone). The
// struct is then decoded from raw, instead of from v encoded again, when
// that gives the same struct: when raw has no key twice in an object (v,
// a map, kept the last one; decoding into a struct would merge them) and
// decodes without error (an error is reported as v's encoding reports
// it).
func checkCobRaw(raw []byte, v any, s *schema, kind, prefix string, own keyChecker) (*cobInput, []Violacao) {
	var vs []Violacao
	s.check(prefix, v, &vs)
	if len(vs) > 0 {
		return nil, vs
	}
	m := v.(map[string]any)
	c, fast := cobFromMap(m) // without encoding/json when it can (cobjson_decode.go)
	direct := !fast && raw != nil && jsonMembers(raw) == mapMembers(m) && json.Unmarshal(raw, &c) == nil
	delete(m, "txid")
	if direct {
		c.Txid = ""
	} else if !fast {
		c = Cob{}
		if err := remarshal(m, &c); err != nil {
			return nil, []Violacao{{Razao: "corpo inválido: " + err.Error(), Propriedade: prefix}}
		}
	}
	return checkCobFields(c, kind, prefix, own)
}

// checkCobFields is the end of checkCobRaw: the checks of a request that
// passed its schema (c, decoded from it) beyond the schema.
func checkCobFields(c Cob, kind, prefix string, own keyChecker) (*cobInput, []Violacao) {
	var vs []Violacao
	in := &cobInput{Body: c}
	p := func(name string) string { return join(prefix, name) }
	add := func(prop, razao, valor string) {
		vs = append(vs, Violacao{Razao: razao, Propriedade: p(prop), Valor: valor})
	}
	// devedor: cpf xor cnpj, with valid check digits.
	if d := c.Devedor; d != nil {
		switch {
		case d.CPF != "" && d.CNPJ != "":
			add("devedor", "informe cpf ou cnpj, não ambos", "")
		case d.CPF == "" && d.CNPJ == "":
			add("devedor.cpf", "informe cpf ou cnpj do devedor", "")
		case d.CPF != "" && !rules.ValidCPF(d.CPF):
			add("devedor.cpf", "CPF inválido (dígitos verificadores)", d.CPF)
		case d.CNPJ != "" && !rules.ValidCNPJ(d.CNPJ):
			add("devedor.cnpj", "CNPJ inválido (dígitos verificadores)", d.CNPJ)
		}
		if d.UF != "" && !rules.ValidUF(d.UF) {
			add("devedor.uf", "UF inexistente", d.UF)
		}
		if d.Email != "" && !rules.ValidEmail(d.Email) {
			add("devedor.email", "e-mail inválido", d.Email)
		}
	}
	cents, err := rules.ParsePixAmount(c.Valor.Original)
	if err != nil || cents <= 0 {
		add("valor.original", "deve ser maior que zero", c.Valor.Original)
	}
	in.Cents = cents
	if kind == kindCobV {
		due, err := rules.ParseISODate(c.Calendario.DataDeVencimento)
		if err != nil {
			add("calendario.dataDeVencimento", "data inexistente", c.Calendario.DataDeVencimento)
		}
		if c.Calendario.ValidadeAposVencimento == nil {
			d := defaultValidadeApos
			in.Body.Calendario.ValidadeAposVencimento = &d
		}
		vs = append(vs, checkCobVValor(c.Valor, cents, due, err == nil, func(s string) string { return p("valor." + s) })...)
	} else {
		if c.Calendario.Expiracao == nil {
			e := defaultExpiracao
			in.Body.Calendario.Expiracao = &e
		}
	}
	if own != nil && !own(c.Chave) {
		add("chave", "a chave não pertence à conta do recebedor", c.Chave)
	}
	if len(vs) > 0 {
		return nil, vs
	}
	return in, nil
}

// checkCobVValor checks the modalities of multa, juros, abatimento and
// desconto of a cobv.
func checkCobVValor(v Valor, original int64, due time.Time, dueOK bool, p func(string) string) []Violacao {
	var vs []Violacao
	add := func(prop, razao, valor string) {
		vs = append(vs, Violacao{Razao: razao, Propriedade: p(prop), Valor: valor})
	}
	amount := func(prop, s string) int64 {
		n, err := rules.ParsePixAmount(s)
		if err != nil || n <= 0 {
			add(prop, "deve ser maior que zero", s)
			return 0
		}
		return n
	}
	percentOrValue := func(name string, m *Modalidade, percentMods ...int) {
		if m == nil {
			return
		}
		// amount(name+".valorPerc", m.ValorPerc), the path made only for
		// a violation.
		n, err := rules.ParsePixAmount(m.ValorPerc)
		if err != nil || n <= 0 {
			add(name+".valorPerc", "deve ser maior que zero", m.ValorPerc)
			n = 0
		}
		isPercent := false
		for _, x := range percentMods {
			if m.Modalidade == x {
				isPercent = true
			}
		}
		if isPercent && n > 10000 {
			add(name+".valorPerc", "percentual acima de 100.00", m.ValorPerc)
		}
		if !isPercent && n >= original && original > 0 && name != "juros" {
			add(name+".valorPerc", "valor deve ser menor que valor.original", m.ValorPerc)
		}
	}
	percentOrValue("multa", v.Multa, 2)
	percentOrValue("juros", v.Juros, 2, 3, 4, 6, 7, 8)
	percentOrValue("abatimento", v.Abatimento, 2)
	if d := v.Desconto; d != nil {
		switch d.Modalidade {
		case 1, 2:
			if len(d.DescontoDataFixa) == 0 {
				add("desconto.descontoDataFixa", "obrigatório para as modalidades 1 e 2", "")
			}
			if d.ValorPerc != "" {
				add("desconto.valorPerc", "não se aplica às modalidades 1 e 2; use descontoDataFixa", d.ValorPerc)
			}
			var last time.Time
			for i, f := range d.DescontoDataFixa {
				fp := fmt.Sprintf("desconto.descontoDataFixa[%d]", i)
				dt, err := rules.ParseISODate(f.Data)
				switch {
				case err != nil:
					add(fp+".data", "data inexistente", f.Data)
				case dueOK && dt.After(due):
					add(fp+".data", "data do desconto após o vencimento", f.Data)
				case i > 0 && !dt.After(last):
					add(fp+".data", "datas devem ser crescentes", f.Data)
				}
				last = dt
				n := amount(fp+".valorPerc", f.ValorPerc)
				if d.Modalidade == 2 && n > 10000 {
					add(fp+".valorPerc", "percentual acima de 100.00", f.ValorPerc)
				}
				if d.Modalidade == 1 && original > 0 && n >= original {
					add(fp+".valorPerc", "desconto deve ser menor que valor.original", f.ValorPerc)
				}
			}
		default:
			if d.ValorPerc == "" {
				add("desconto.valorPerc", "obrigatório para as modalidades 3 a 6", "")
			} else {
				n := amount("desconto.valorPerc", d.ValorPerc)
				if d.Modalidade >= 5 && n > 10000 {
					add("desconto.valorPerc", "percentual acima de 100.00", d.ValorPerc)
				}
			}
			if len(d.DescontoDataFixa) > 0 {
				add("desconto.descontoDataFixa", "só se aplica às modalidades 1 e 2", "")
			}
		}
	}
	return vs
}

// requestView is the creation-request view of a stored charge, the base a
// PATCH merges into.
func requestView(c Cob, kind string) map[string]any {
	r := Cob{Devedor: c.Devedor, Valor: c.Valor, Chave: c.Chave, SolicitacaoPagador: c.SolicitacaoPagador, InfoAdicionais: c.InfoAdicionais}
	if kind == kindCob {
		r.Calendario = Calendario{Expiracao: c.Calendario.Expiracao}
	} else {
		r.Calendario = Calendario{DataDeVencimento: c.Calendario.DataDeVencimento, ValidadeAposVencimento: c.Calendario.ValidadeAposVencimento}
	}
	b, _ := json.Marshal(r)
	var m map[string]any
	_ = decodeInto(b, &m)
	delete(m, "txid")
	delete(m, "revisao")
	delete(m, "status")
	return m
}

func decodeInto(b []byte, v any) error {
	x, err := decodeAny(b)
	if err != nil {
		return err
	}
	if m, ok := x.(map[string]any); ok {
		if p, ok := v.(*map[string]any); ok {
			*p = m
			return nil
		}
	}
	return remarshal(x, v)
}

// mergePatch applies an RFC 7386 merge patch to base (in place) and
// returns it: objects merge recursively, null deletes, anything else
// replaces.
func mergePatch(base, patch map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(base, k)
			continue
		}
		if pm, ok := pv.(map[string]any); ok {
			bm, _ := base[k].(map[string]any)
			base[k] = mergePatch(bm, pm)
			continue
		}
		base[k] = pv
	}
	return base
}

// jsonMembers counts the members of every object in raw (valid JSON): the
// colons outside strings.
func jsonMembers(raw []byte) int {
	n := 0
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++ // the escaped byte
		case c == '"':
			in = !in
		case !in && c == ':':
			n++
		}
	}
	return n
}

// mapMembers counts the members of every object in v (decoded JSON): as
// jsonMembers of its source when no object of it had a key twice.
func mapMembers(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := len(x)
		for _, e := range x {
			n += mapMembers(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += mapMembers(e)
		}
		return n
	}
	return 0
}
