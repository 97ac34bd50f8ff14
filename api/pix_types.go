package api

import "remessa/wire"

// Types of the Pix API (/v2). Money is a string with two decimals
// ("123.45") as on the wire; use rules.ParsePixAmount / FormatPixAmount to
// convert to and from cents. Timestamps are ISO 8601 UTC strings.

// Wire types of the Pix API shared with the service: defined in
// remessa/wire, aliased here so the client's users keep their names.
type (
	PixCalendario    = wire.PixCalendario
	PixPessoa        = wire.PixPessoa
	PixModalidade    = wire.PixModalidade
	PixDataFixa      = wire.PixDataFixa
	PixDesconto      = wire.PixDesconto
	PixInfoAdicional = wire.PixInfoAdicional
	PixHorario       = wire.PixHorario
	Devolucao        = wire.Devolucao
	PixRecebido      = wire.PixRecebido
	PixContaBanco    = wire.PixContaBanco
	PixIdentificacao = wire.PixIdentificacao
	PixFavorecido    = wire.PixFavorecido
	PixSendResult    = wire.PixSendResult
	PixEnviado       = wire.PixEnviado
)

// PixValor is the amount section of a charge.
type PixValor struct {
	Original            string         `json:"original,omitempty"`
	ModalidadeAlteracao *int           `json:"modalidadeAlteracao,omitempty"`
	Multa               *PixModalidade `json:"multa,omitempty"`
	Juros               *PixModalidade `json:"juros,omitempty"`
	Abatimento          *PixModalidade `json:"abatimento,omitempty"`
	Desconto            *PixDesconto   `json:"desconto,omitempty"`
}

// PixLoc is the payload location of a charge.
type PixLoc struct {
	ID       int64  `json:"id"`
	Location string `json:"location,omitempty"`
	TipoCob  string `json:"tipoCob,omitempty"`
	Criacao  string `json:"criacao,omitempty"`
}

// CobRequest is the body of PUT /v2/cob/{txid} and POST /v2/cob.
type CobRequest struct {
	Calendario         *PixCalendario     `json:"calendario,omitempty"`
	Devedor            *PixPessoa         `json:"devedor,omitempty"`
	Valor              PixValor           `json:"valor"`
	Chave              string             `json:"chave"`
	SolicitacaoPagador string             `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []PixInfoAdicional `json:"infoAdicionais,omitempty"`
}

// CobVRequest is the body of PUT /v2/cobv/{txid}.
type CobVRequest struct {
	Calendario         PixCalendario      `json:"calendario"`
	Devedor            PixPessoa          `json:"devedor"`
	Valor              PixValor           `json:"valor"`
	Chave              string             `json:"chave"`
	SolicitacaoPagador string             `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []PixInfoAdicional `json:"infoAdicionais,omitempty"`
}

// CobPatch is the body of PATCH /v2/cob/{txid} and /v2/cobv/{txid}: only
// the fields being revised. Status "REMOVIDA_PELO_USUARIO_RECEBEDOR"
// removes the charge.
type CobPatch struct {
	Calendario         *PixCalendario     `json:"calendario,omitempty"`
	Devedor            *PixPessoa         `json:"devedor,omitempty"`
	Valor              *PixValor          `json:"valor,omitempty"`
	Chave              string             `json:"chave,omitempty"`
	SolicitacaoPagador *string            `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []PixInfoAdicional `json:"infoAdicionais,omitempty"`
	Status             string             `json:"status,omitempty"`
}

// Cob is an immediate or due-date charge as answered.
type Cob struct {
	Calendario         PixCalendario      `json:"calendario"`
	Txid               string             `json:"txid"`
	Revisao            int                `json:"revisao"`
	Loc                *PixLoc            `json:"loc,omitempty"`
	Location           string             `json:"location,omitempty"`
	Status             string             `json:"status"`
	Devedor            *PixPessoa         `json:"devedor,omitempty"`
	Recebedor          *PixPessoa         `json:"recebedor,omitempty"`
	Valor              PixValor           `json:"valor"`
	Chave              string             `json:"chave"`
	SolicitacaoPagador string             `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []PixInfoAdicional `json:"infoAdicionais,omitempty"`
	PixCopiaECola      string             `json:"pixCopiaECola,omitempty"`
	Pix                []PixRecebido      `json:"pix,omitempty"`
}

// PixPaginacao is the pagination object of Pix lists.
type PixPaginacao struct {
	PaginaAtual            int `json:"paginaAtual"`
	ItensPorPagina         int `json:"itensPorPagina"`
	QuantidadeDePaginas    int `json:"quantidadeDePaginas"`
	QuantidadeTotalDeItens int `json:"quantidadeTotalDeItens"`
}

// PixParametros echoes the query of a Pix list.
type PixParametros struct {
	Inicio           string       `json:"inicio"`
	Fim              string       `json:"fim"`
	CPF              string       `json:"cpf,omitempty"`
	CNPJ             string       `json:"cnpj,omitempty"`
	Status           string       `json:"status,omitempty"`
	LocationPresente *bool        `json:"locationPresente,omitempty"`
	LoteCobVID       *int64       `json:"loteCobVId,omitempty"`
	Txid             string       `json:"txid,omitempty"`
	Paginacao        PixPaginacao `json:"paginacao"`
}

// CobPage is a page of GET /v2/cob.
type CobPage struct {
	Parametros PixParametros `json:"parametros"`
	Cobs       []Cob         `json:"cobs"`
}

// CobVPage is a page of GET /v2/cobv.
type CobVPage = CobPage

// LoteCobVItem is one creation request of a batch: a cobv body with its
// txid.
type LoteCobVItem struct {
	Txid string `json:"txid"`
	CobVRequest
}

// LoteCobVRequest is the body of PUT /v2/lotecobv/{id}: 1 to 1000 items.
type LoteCobVRequest struct {
	Descricao string         `json:"descricao,omitempty"`
	Cobsv     []LoteCobVItem `json:"cobsv"`
}

// LoteCobVPatchItem is a revision of one batch item (txid plus the fields
// being revised).
type LoteCobVPatchItem struct {
	Txid string `json:"txid"`
	CobPatch
}

// LoteCobVPatch is the body of PATCH /v2/lotecobv/{id}.
type LoteCobVPatch struct {
	Descricao string              `json:"descricao,omitempty"`
	Cobsv     []LoteCobVPatchItem `json:"cobsv"`
}

// LoteCobVStatus is the state of one batch item: EM_PROCESSAMENTO, CRIADA
// or NEGADA (with Problema).
type LoteCobVStatus struct {
	Criacao  string   `json:"criacao,omitempty"`
	Txid     string   `json:"txid"`
	Status   string   `json:"status"`
	Problema *Problem `json:"problema,omitempty"`
}

// LoteCobV is a batch as answered by GET /v2/lotecobv/{id}.
type LoteCobV struct {
	ID        int64            `json:"id"`
	Descricao string           `json:"descricao,omitempty"`
	Criacao   string           `json:"criacao"`
	Cobsv     []LoteCobVStatus `json:"cobsv"`
}

// Done reports whether no item is EM_PROCESSAMENTO any more.
func (l *LoteCobV) Done() bool {
	for _, it := range l.Cobsv {
		if it.Status == "EM_PROCESSAMENTO" {
			return false
		}
	}
	return true
}

// LoteCobVPage is a page of GET /v2/lotecobv.
type LoteCobVPage struct {
	Parametros PixParametros `json:"parametros"`
	Lotes      []LoteCobV    `json:"lotes"`
}

// PixSplitParte is a share of a split configuration: Tipo "porcentagem"
// or "fixo", Valor a decimal string with two places.
type PixSplitParte struct {
	Tipo  string `json:"tipo"`
	Valor string `json:"valor"`
}

// PixSplitFavorecido is the account receiving a repasse.
type PixSplitFavorecido struct {
	CPF   string `json:"cpf,omitempty"`
	CNPJ  string `json:"cnpj,omitempty"`
	Conta string `json:"conta"`
}

// PixSplitRepasse is a share for another account.
type PixSplitRepasse struct {
	Tipo       string             `json:"tipo"`
	Valor      string             `json:"valor"`
	Favorecido PixSplitFavorecido `json:"favorecido"`
}

// PixSplitSpec is the division: divisaoTarifa "assumir_total" or
// "proporcional", minhaParte and up to 20 repasses.
type PixSplitSpec struct {
	DivisaoTarifa string            `json:"divisaoTarifa"`
	MinhaParte    PixSplitParte     `json:"minhaParte"`
	Repasses      []PixSplitRepasse `json:"repasses"`
}

// PixLancamento says when the split settles.
type PixLancamento struct {
	Imediato bool `json:"imediato"`
}

// SplitConfigRequest is the body of POST /v2/gn/split/config and
// PUT /v2/gn/split/config/{id}.
type SplitConfigRequest struct {
	Descricao  string        `json:"descricao,omitempty"`
	Txid       string        `json:"txid,omitempty"`
	Lancamento PixLancamento `json:"lancamento"`
	Split      PixSplitSpec  `json:"split"`
}

// SplitConfig is a split configuration (one revision).
type SplitConfig struct {
	ID         string        `json:"id"`
	Txid       string        `json:"txid,omitempty"`
	Status     string        `json:"status"`
	Revisao    int           `json:"revisao"`
	Descricao  string        `json:"descricao,omitempty"`
	Lancamento PixLancamento `json:"lancamento"`
	Split      PixSplitSpec  `json:"split"`
}

// SplitRef names the configuration linked to a charge.
type SplitRef struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Descricao string `json:"descricao,omitempty"`
}

// CobSplit is a charge with its split configuration
// (GET /v2/gn/split/cob[v]/{txid}).
type CobSplit struct {
	Cob
	Config SplitRef `json:"config"`
}

// DevolucaoRequest is the body of PUT /v2/pix/{e2eId}/devolucao/{id}.
// Natureza is optional (ORIGINAL or RETIRADA).
type DevolucaoRequest struct {
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza,omitempty"`
	Descricao string `json:"descricao,omitempty"`
}

// PixPage is a page of GET /v2/pix.
type PixPage struct {
	Parametros PixParametros `json:"parametros"`
	Pix        []PixRecebido `json:"pix"`
}

// PixPagador is the paying key of a send.
type PixPagador struct {
	Chave       string `json:"chave"`
	InfoPagador string `json:"infoPagador,omitempty"`
}

// PixSendRequest is the body of PUT /v3/gn/pix/{idEnvio}.
type PixSendRequest struct {
	Valor      string        `json:"valor"`
	Pagador    PixPagador    `json:"pagador"`
	Favorecido PixFavorecido `json:"favorecido"`
}

// PixEnviadoPage is a page of GET /v2/gn/pix/enviados.
type PixEnviadoPage struct {
	Parametros PixParametros `json:"parametros"`
	Pix        []PixEnviado  `json:"pix"`
}

// PixWebhook is the webhook of a key.
type PixWebhook struct {
	WebhookURL string `json:"webhookUrl"`
	Chave      string `json:"chave,omitempty"`
	Criacao    string `json:"criacao,omitempty"`
}

// PixWebhookPage is a page of GET /v2/webhook.
type PixWebhookPage struct {
	Parametros PixParametros `json:"parametros"`
	Webhooks   []PixWebhook  `json:"webhooks"`
}

// PixPayRequest is the body of the sandbox control route
// POST /sandbox/pix/pay: Txid or PixCopiaECola, optional Valor (default
// valor.original) and Conta (when a txid exists in several accounts).
type PixPayRequest struct {
	Txid          string `json:"txid,omitempty"`
	PixCopiaECola string `json:"pixCopiaECola,omitempty"`
	Valor         string `json:"valor,omitempty"`
	Conta         string `json:"conta,omitempty"`
}

// PixPayResult is the received Pix a sandbox payment created.
type PixPayResult struct {
	EndToEndID string `json:"endToEndId"`
	Txid       string `json:"txid"`
	Valor      string `json:"valor"`
	Horario    string `json:"horario"`
}
