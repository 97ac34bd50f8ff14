package pix

import (
	"time"

	"remessa/wire"
)

// Charge statuses (cob and cobv).
const (
	StatusAtiva         = "ATIVA"
	StatusConcluida     = "CONCLUIDA"
	StatusRemovidaUser  = "REMOVIDA_PELO_USUARIO_RECEBEDOR"
	StatusRemovidaPSP   = "REMOVIDA_PELO_PSP"
	ItemCriada          = "CRIADA"
	ItemNegada          = "NEGADA"
	ItemProcessando     = "EM_PROCESSAMENTO"
	RefundProcessando   = "EM_PROCESSAMENTO"
	RefundDevolvido     = "DEVOLVIDO"
	RefundNaoRealizado  = "NAO_REALIZADO"
	SendProcessando     = "EM_PROCESSAMENTO"
	SendRealizado       = "REALIZADO"
	SendNaoRealizado    = "NAO_REALIZADO"
	SplitConfigAtiva    = "ATIVA"
	kindCob             = "cob"
	kindCobV            = "cobv"
	defaultExpiracao    = 86400
	defaultValidadeApos = 30
)

// Store kinds written by this module (one JSON document each, per account).
const (
	storeCharge = "pix.cob"      // id = txid; cob and cobv that exist
	storeLote   = "pix.lotecobv" // id = batch id
	storeSplit  = "pix.split"    // id = split config id; all revisions
	storePix    = "pix.recebido" // id = endToEndId; with its devolucoes
	storeEnvio  = "pix.enviado"  // id = idEnvio
	storeHook   = "pix.webhook"  // id = chave
	storeEVP    = "pix.evp"      // id = chave (EVP keys created by POST /v2/gn/evp)
)

// timeLayout is ISO 8601 UTC with milliseconds, as the Pix API answers.
const timeLayout = "2006-01-02T15:04:05.000Z"

func ts(t time.Time) string { return t.UTC().Format(timeLayout) }

// Valor is the amount section of a charge.
type Valor struct {
	Original            string      `json:"original"`
	ModalidadeAlteracao *int        `json:"modalidadeAlteracao,omitempty"`
	Multa               *Modalidade `json:"multa,omitempty"`
	Juros               *Modalidade `json:"juros,omitempty"`
	Abatimento          *Modalidade `json:"abatimento,omitempty"`
	Desconto            *Desconto   `json:"desconto,omitempty"`
}

// Wire types shared with the client through remessa/wire (the contract's
// JSON shapes; the sandbox never imports the client, see
// docs/sandbox-core.md, "Wire types"). Valor, Loc and Cob stay the
// server's own: the answer always carries valor.original, loc.location and
// loc.tipoCob, which the client's request-side types omit when empty.
type (
	Calendario    = wire.PixCalendario
	Pessoa        = wire.PixPessoa
	Modalidade    = wire.PixModalidade
	DataFixa      = wire.PixDataFixa
	Desconto      = wire.PixDesconto
	InfoAdicional = wire.PixInfoAdicional
	Devolucao     = wire.Devolucao
	HorarioDev    = wire.PixHorario
	Recebido      = wire.PixRecebido
)

// Loc is the payload location of a charge.
type Loc struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao,omitempty"`
}

// Cob is an immediate (cob) or due-date (cobv) charge as answered.
type Cob struct {
	Calendario         Calendario      `json:"calendario"`
	Txid               string          `json:"txid"`
	Revisao            int             `json:"revisao"`
	Loc                *Loc            `json:"loc,omitempty"`
	Location           string          `json:"location,omitempty"`
	Status             string          `json:"status"`
	Devedor            *Pessoa         `json:"devedor,omitempty"`
	Recebedor          *Pessoa         `json:"recebedor,omitempty"`
	Valor              Valor           `json:"valor"`
	Chave              string          `json:"chave"`
	SolicitacaoPagador string          `json:"solicitacaoPagador,omitempty"`
	InfoAdicionais     []InfoAdicional `json:"infoAdicionais,omitempty"`
	PixCopiaECola      string          `json:"pixCopiaECola,omitempty"`
	Pix                []Recebido      `json:"pix,omitempty"`
}

// charge is the stored form of a cob or cobv that exists.
type charge struct {
	Kind     string    `json:"kind"` // cob | cobv
	LoteID   string    `json:"loteId,omitempty"`
	SplitID  string    `json:"splitId,omitempty"`
	SplitRev int       `json:"splitRevisao,omitempty"`
	Created  time.Time `json:"created"`
	Cents    int64     `json:"cents"`
	Paid     []string  `json:"paid,omitempty"` // endToEndIds of received Pix
	LocID    int64     `json:"loc,omitempty"`  // with Host, rebuilds the derived fields (state.go)
	Host     string    `json:"host,omitempty"`
	Body     Cob       `json:"body"`
}

// received is the stored form of a received Pix.
type received struct {
	Cents int64     `json:"cents"`
	Time  time.Time `json:"time"`
	Kind  string    `json:"kind,omitempty"` // cob | cobv
	Body  Recebido  `json:"body"`
}
