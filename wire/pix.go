// Package wire holds the JSON shapes of the service-spec
// (../shared/spec/service-spec.md) that both sides share: the client in
// remessa/api decodes them and the service in remessa/sandbox writes them.
// It has no HTTP and no behaviour in it, only the contract's structs, so
// the service does not depend on its own client (the client is a consumer
// of the contract, not its owner).
//
// Only the types both sides use live here. Money of the Pix API is a
// string with two decimals ("123.45") as on the wire; timestamps are
// ISO 8601 UTC strings.
package wire

// PixCalendario is the calendar of a charge. Cob uses Expiracao (seconds);
// cobv uses DataDeVencimento (YYYY-MM-DD) and ValidadeAposVencimento (days).
type PixCalendario struct {
	Criacao                string `json:"criacao,omitempty"`
	Expiracao              *int   `json:"expiracao,omitempty"`
	DataDeVencimento       string `json:"dataDeVencimento,omitempty"`
	ValidadeAposVencimento *int   `json:"validadeAposVencimento,omitempty"`
}

// PixPessoa is a devedor (payer) or recebedor: CPF or CNPJ plus Nome.
type PixPessoa struct {
	CPF          string `json:"cpf,omitempty"`
	CNPJ         string `json:"cnpj,omitempty"`
	Nome         string `json:"nome,omitempty"`
	NomeFantasia string `json:"nomeFantasia,omitempty"`
	Email        string `json:"email,omitempty"`
	Logradouro   string `json:"logradouro,omitempty"`
	Cidade       string `json:"cidade,omitempty"`
	UF           string `json:"uf,omitempty"`
	CEP          string `json:"cep,omitempty"`
}

// PixModalidade is multa, juros or abatimento of a cobv.
type PixModalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

// PixDataFixa is a fixed-date discount.
type PixDataFixa struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

// PixDesconto is the discount of a cobv (modalidade 1-2 with
// DescontoDataFixa, 3-6 with ValorPerc).
type PixDesconto struct {
	Modalidade       int           `json:"modalidade"`
	ValorPerc        string        `json:"valorPerc,omitempty"`
	DescontoDataFixa []PixDataFixa `json:"descontoDataFixa,omitempty"`
}

// PixInfoAdicional is a name/value pair shown to the payer.
type PixInfoAdicional struct {
	Nome  string `json:"nome"`
	Valor string `json:"valor"`
}

// PixHorario holds the times of a refund or a send.
type PixHorario struct {
	Solicitacao string `json:"solicitacao"`
	Liquidacao  string `json:"liquidacao,omitempty"`
}

// Devolucao is a refund: EM_PROCESSAMENTO, then DEVOLVIDO or
// NAO_REALIZADO (with Motivo).
type Devolucao struct {
	ID        string     `json:"id"`
	RtrID     string     `json:"rtrId"`
	Valor     string     `json:"valor"`
	Natureza  string     `json:"natureza,omitempty"`
	Descricao string     `json:"descricao,omitempty"`
	Horario   PixHorario `json:"horario"`
	Status    string     `json:"status"`
	Motivo    string     `json:"motivo,omitempty"`
}

// PixRecebido is a received Pix.
type PixRecebido struct {
	EndToEndID  string      `json:"endToEndId"`
	Txid        string      `json:"txid,omitempty"`
	Valor       string      `json:"valor"`
	Chave       string      `json:"chave,omitempty"`
	Horario     string      `json:"horario"`
	InfoPagador string      `json:"infoPagador,omitempty"`
	Devolucoes  []Devolucao `json:"devolucoes,omitempty"`
}

// PixContaBanco is a send destination given by bank data.
type PixContaBanco struct {
	Nome        string `json:"nome"`
	CPF         string `json:"cpf,omitempty"`
	CNPJ        string `json:"cnpj,omitempty"`
	CodigoBanco string `json:"codigoBanco"`
	Agencia     string `json:"agencia"`
	Conta       string `json:"conta"`
	TipoConta   string `json:"tipoConta"`
}

// PixIdentificacao names the owner of a destination key.
type PixIdentificacao struct {
	Nome string `json:"nome"`
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
}

// PixFavorecido is the destination of a send: Chave or ContaBanco.
type PixFavorecido struct {
	Chave         string            `json:"chave,omitempty"`
	CPF           string            `json:"cpf,omitempty"`
	CNPJ          string            `json:"cnpj,omitempty"`
	ContaBanco    *PixContaBanco    `json:"contaBanco,omitempty"`
	Identificacao *PixIdentificacao `json:"identificacao,omitempty"`
}

// PixSendResult is the answer of a send.
type PixSendResult struct {
	IDEnvio string     `json:"idEnvio"`
	E2EID   string     `json:"e2eId"`
	Valor   string     `json:"valor"`
	Horario PixHorario `json:"horario"`
	Status  string     `json:"status"`
}

// PixEnviado is a sent Pix: EM_PROCESSAMENTO, REALIZADO or NAO_REALIZADO.
type PixEnviado struct {
	EndToEndID  string        `json:"endToEndId"`
	IDEnvio     string        `json:"idEnvio"`
	Valor       string        `json:"valor"`
	Chave       string        `json:"chave"`
	Status      string        `json:"status"`
	InfoPagador string        `json:"infoPagador,omitempty"`
	Horario     PixHorario    `json:"horario"`
	Favorecido  PixFavorecido `json:"favorecido"`
	Devolucoes  []Devolucao   `json:"devolucoes,omitempty"`
	Motivo      string        `json:"motivo,omitempty"`
}
