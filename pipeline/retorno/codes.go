package retorno

import (
	"fmt"
	"strings"

	"remessa/formats/cnab"
	"remessa/pipeline/results"
)

// Events a retorno reports about a title, in the order a title's events
// are written (docs/cnab.md "Ocorrências do retorno").
const (
	EventEntrada             = "entrada"              // the charge was issued: 02
	EventRejeicao            = "rejeicao"             // the row was refused or denied: 03
	EventVencimento          = "vencimento"           // the due date was changed: 14
	EventAbatimento          = "abatimento"           // a cobv's abatimento was granted or changed: 12
	EventAbatimentoCancelado = "abatimento_cancelado" // a cobv's abatimento was removed: 13
	EventLiquidacao          = "liquidacao"           // paid through the service: 06
	EventManual              = "manual"               // settled by hand, outside the service
	EventBaixa               = "baixa"                // cancelled, or written off when its payment link expired: 09
	EventEstorno             = "estorno"              // the payment was given back
)

// Layout names `remessa retorno --layout` takes.
const (
	Layout240      = "cnab240"
	Layout400Brad  = "cnab400-237"
	Layout400Itau  = "cnab400-341"
	layoutsAllowed = Layout240 + ", " + Layout400Brad + " ou " + Layout400Itau
)

// Layouts lists the layouts a retorno can be written in.
var Layouts = []string{Layout240, Layout400Brad, Layout400Itau}

// layoutSpec is one retorno layout: its table and the occurrence code of
// each event (empty: the layout has none, the event is listed in the
// retorno's report and not written in the file).
type layoutSpec struct {
	name  string
	table string
	bank  string // the bank the layout fixes ("" FEBRABAN's: any)
	codes map[string]string
}

var specs = map[string]*layoutSpec{
	Layout240: {name: Layout240, table: "febraban240-retorno", codes: map[string]string{
		EventEntrada: "02", EventRejeicao: "03", EventVencimento: "14", EventLiquidacao: "06",
		EventAbatimento: "12", EventAbatimentoCancelado: "13",
		EventManual: "09", EventBaixa: "09", EventEstorno: "",
	}},
	Layout400Brad: {name: Layout400Brad, table: "bradesco400-retorno", bank: "237", codes: map[string]string{
		EventEntrada: "02", EventRejeicao: "03", EventVencimento: "14", EventLiquidacao: "06",
		EventAbatimento: "12", EventAbatimentoCancelado: "13",
		EventManual: "10", EventBaixa: "09", EventEstorno: "22",
	}},
	Layout400Itau: {name: Layout400Itau, table: "itau400-retorno", bank: "341", codes: map[string]string{
		EventEntrada: "02", EventRejeicao: "03", EventVencimento: "14", EventLiquidacao: "06",
		EventAbatimento: "12", EventAbatimentoCancelado: "13",
		EventManual: "10", EventBaixa: "09", EventEstorno: "",
	}},
}

func specOf(name string) (*layoutSpec, error) {
	s, ok := specs[name]
	if !ok {
		return nil, fmt.Errorf("leiaute de retorno %q desconhecido: use %s", name, layoutsAllowed)
	}
	return s, nil
}

func (s *layoutSpec) layout() *cnab.Layout { return cnab.MustGet(s.table) }

// Code is the occurrence code an event is written with in layout (""
// when the layout has none for it).
func Code(layout, event string) string {
	s, err := specOf(layout)
	if err != nil {
		return ""
	}
	return s.codes[event]
}

// eventText names an event for people (the report of a retorno).
func eventText(event, lang string) string {
	pt := map[string]string{
		EventEntrada: "entrada confirmada", EventRejeicao: "entrada rejeitada", EventVencimento: "vencimento alterado",
		EventAbatimento: "abatimento concedido", EventAbatimentoCancelado: "abatimento cancelado",
		EventLiquidacao: "liquidação", EventManual: "baixa: paga fora do banco", EventBaixa: "baixa", EventEstorno: "pagamento devolvido",
	}
	en := map[string]string{
		EventEntrada: "entry confirmed", EventRejeicao: "entry rejected", EventVencimento: "due date changed",
		EventAbatimento: "rebate granted", EventAbatimentoCancelado: "rebate cancelled",
		EventLiquidacao: "settlement", EventManual: "write-off: paid outside the bank", EventBaixa: "write-off", EventEstorno: "payment given back",
	}
	if lang == "en" {
		return en[event]
	}
	return pt[event]
}

// Motivo codes of a rejected entry (FEBRABAN's table C047 for movements
// 02, 03, 26 and 30; Bradesco's table for occurrence 03 numbers the same
// rejections alike), from the codes of a row's problems. A problem with no
// motivo of its own is told by the text alone.
var rejectMotivo = map[string]string{
	"cpf_invalido": "46", "cnpj_invalido": "46", "documento_invalido": "46", "documento_ausente": "46",
	"nome_ausente":        "45",
	"endereco_incompleto": "47",
	"cep_invalido":        "48",
	"uf_invalida":         "52",
	"vencimento_ausente":  "16", "data_invalida": "16", "bad_date": "16",
	"vencimento_passado":  "17",
	"vencimento_distante": "18",
	"valor_invalido":      "20", "valor_zero": "20", "valor_negativo": "20", "valor_minimo": "20", "valor_ausente": "20",
	"bad_money": "20", "valor_acima_limite": "20",
	"emissao_ausente":   "24",
	"juros_fora_limite": "27",
	"desconto_data":     "80", "desconto_datas": "80", "desconto_carne": "30",
	"multa_fora_limite": "59",
	"chave_duplicada":   "63", "chave_repetida": "63", "custom_id_repetido": "63", "txid_duplicado": "63",
	"cnab_movimento": "05",
}

// rejectMotivoByField gives the motivo of a problem whose code is generic
// (a CNAB field that is not a number or not a date) by the field it names.
var rejectMotivoByField = []struct{ contains, motivo string }{
	{"vencimento", "16"}, {"valor", "20"}, {"emissão", "24"}, {"juros", "27"}, {"desconto", "28"},
	{"abatimento", "33"}, {"multa", "59"}, {"inscrição do pagador", "46"}, {"cpf", "46"}, {"cnpj", "46"},
	{"nome", "45"}, {"cep", "48"}, {"nosso número", "08"}, {"seu número", "86"}, {"documento", "86"},
}

// motivos returns the motivo codes (at most max, in the problems' order,
// without repeats) and the text of a refused or denied row.
func motivos(row *results.Row, max int, lang string) ([]string, string) {
	var codes, texts []string
	seen := map[string]bool{}
	for _, p := range row.Problems {
		m := rejectMotivo[p.Code]
		if m == "" {
			where := strings.ToLower(p.Header + " " + p.Field)
			for _, f := range rejectMotivoByField {
				if strings.Contains(where, f.contains) {
					m = f.motivo
					break
				}
			}
		}
		if m != "" && !seen[m] && len(codes) < max {
			seen[m] = true
			codes = append(codes, m)
		}
		msg := p.Message
		if lang == "en" && p.MessageEN != "" {
			msg = p.MessageEN
		}
		if msg != "" {
			texts = append(texts, msg)
		}
	}
	if row.Outcome == results.Denied && len(texts) == 0 {
		texts = append(texts, "recusada pelo serviço")
	}
	return codes, strings.Join(texts, "; ")
}

// Baixa motivos (FEBRABAN C047 for movement 09): a cancellation is
// commanded by the company (the desk, an action job or a remessa's 02);
// an expired payment link or a cobv the PSP removed is the bank's.
const (
	motivoBaixaBanco   = "09" // comandada banco
	motivoBaixaCliente = "11" // comandada cliente on-line
	motivoBaixaPrazo   = "13" // decurso de prazo - banco
)
