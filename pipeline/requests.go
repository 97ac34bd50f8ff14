package pipeline

import (
	"time"

	"remessa/pipeline/results"
)

// The request structs below mirror the wire bodies of the service (field
// names and JSON tags as the API spells them), so the run stage can map
// them onto the api client's types one to one. Money in the charges API is
// integer cents; in the Pix API a decimal string ("150.00").

// Customer is the charges API customer.
type Customer struct {
	Name            string           `json:"name,omitempty"`
	CPF             string           `json:"cpf,omitempty"`
	Email           string           `json:"email,omitempty"`
	PhoneNumber     string           `json:"phone_number,omitempty"`
	Birth           string           `json:"birth,omitempty"`
	Address         *Address         `json:"address,omitempty"`
	JuridicalPerson *JuridicalPerson `json:"juridical_person,omitempty"`
}

// Address is a postal address (charges API).
type Address struct {
	Street       string `json:"street"`
	Number       string `json:"number"`
	Neighborhood string `json:"neighborhood"`
	Zipcode      string `json:"zipcode"`
	City         string `json:"city"`
	Complement   string `json:"complement,omitempty"`
	State        string `json:"state"`
}

// JuridicalPerson is a company payer.
type JuridicalPerson struct {
	CorporateName string `json:"corporate_name"`
	CNPJ          string `json:"cnpj"`
}

// ChargeItem is an item of a charge or carnet parcel.
type ChargeItem struct {
	Name        string       `json:"name"`
	Value       int64        `json:"value"`
	Amount      int64        `json:"amount"`
	Marketplace *Marketplace `json:"marketplace,omitempty"`
}

// Marketplace is an item's split.
type Marketplace struct {
	Mode     int       `json:"mode,omitempty"`
	Repasses []Repasse `json:"repasses"`
}

// Repasse is one transfer: Percentage in hundredths of a percent or Fixed
// in cents.
type Repasse struct {
	PayeeCode  string `json:"payee_code"`
	Percentage int64  `json:"percentage,omitempty"`
	Fixed      int64  `json:"fixed,omitempty"`
}

// Metadata is the charges API metadata. CustomID is left empty when the
// run stage derives it from the run and the row key.
type Metadata struct {
	CustomID        string `json:"custom_id,omitempty"`
	NotificationURL string `json:"notification_url,omitempty"`
}

// Configurations are the fine (hundredths of a percent), the daily
// interest (thousandths of a percent) and, for slips, days_to_write_off.
type Configurations struct {
	Fine           int64 `json:"fine,omitempty"`
	Interest       int64 `json:"interest,omitempty"`
	DaysToWriteOff *int  `json:"days_to_write_off,omitempty"`
}

// Discount is a discount: Type "percentage" (Value in hundredths of a
// percent) or "currency" (cents).
type Discount struct {
	Type  string `json:"type"`
	Value int64  `json:"value"`
}

// ConditionalDiscount is a discount for payment until UntilDate.
type ConditionalDiscount struct {
	Type      string `json:"type"`
	Value     int64  `json:"value"`
	UntilDate string `json:"until_date"`
}

// CarnetRequest is the body of POST /v1/carnet.
type CarnetRequest struct {
	Items               []ChargeItem         `json:"items"`
	Customer            Customer             `json:"customer"`
	ExpireAt            string               `json:"expire_at"`
	Repeats             int                  `json:"repeats"`
	SplitItems          bool                 `json:"split_items"`
	Metadata            *Metadata            `json:"metadata,omitempty"`
	Configurations      *Configurations      `json:"configurations,omitempty"`
	Message             string               `json:"message,omitempty"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// SlipRequest is the body of POST /v1/charge/one-step with a slip.
type SlipRequest struct {
	Items    []ChargeItem `json:"items"`
	Metadata *Metadata    `json:"metadata,omitempty"`
	Payment  SlipPayment  `json:"payment"`
}

// SlipPayment is the payment of a one-step slip.
type SlipPayment struct {
	BankingBillet BankingBillet `json:"banking_billet"`
}

// BankingBillet is payment.banking_billet.
type BankingBillet struct {
	Customer            Customer             `json:"customer"`
	ExpireAt            string               `json:"expire_at"`
	Configurations      *Configurations      `json:"configurations,omitempty"`
	Message             string               `json:"message,omitempty"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// CobvRequest is one creation request inside a lotecobv batch (the body
// of PUT /v2/cobv/:txid plus its txid). Txid is empty when the run stage
// derives it from the run and the row key.
type CobvRequest struct {
	Calendario         Calendario `json:"calendario"`
	Txid               string     `json:"txid,omitempty"`
	Devedor            Devedor    `json:"devedor"`
	Valor              CobvValor  `json:"valor"`
	Chave              string     `json:"chave"`
	SolicitacaoPagador string     `json:"solicitacaoPagador,omitempty"`
}

// Calendario of a cobv.
type Calendario struct {
	DataDeVencimento       string `json:"dataDeVencimento"`
	ValidadeAposVencimento int    `json:"validadeAposVencimento"`
}

// Devedor is the payer of a cobv: cpf or cnpj and nome, optional address.
type Devedor struct {
	CPF        string `json:"cpf,omitempty"`
	CNPJ       string `json:"cnpj,omitempty"`
	Nome       string `json:"nome"`
	Email      string `json:"email,omitempty"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

// CobvValor is the valor of a cobv: Original "150.00" and optional
// modalities with valorPerc as a two-decimal string.
type CobvValor struct {
	Original   string        `json:"original"`
	Multa      *Modalidade   `json:"multa,omitempty"`
	Juros      *Modalidade   `json:"juros,omitempty"`
	Abatimento *Modalidade   `json:"abatimento,omitempty"`
	Desconto   *CobvDesconto `json:"desconto,omitempty"`
}

// Modalidade is a multa, juros or abatimento. When it comes from a
// constant in the job, every item points to the same value: read only.
type Modalidade struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

// CobvDesconto is a cobv desconto: fixed dates (modalidade 1-2) or a value
// per day paid early (3-6).
type CobvDesconto struct {
	Modalidade       int         `json:"modalidade"`
	ValorPerc        string      `json:"valorPerc,omitempty"`
	DescontoDataFixa []DataValor `json:"descontoDataFixa,omitempty"`
}

// DataValor is one fixed-date discount.
type DataValor struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

// PixSplitConfig is the body of PUT /v2/gn/split/config/:id.
type PixSplitConfig struct {
	Descricao  string     `json:"descricao,omitempty"`
	Lancamento Lancamento `json:"lancamento"`
	Split      PixSplit   `json:"split"`
}

// Lancamento of a split configuration.
type Lancamento struct {
	Imediato bool `json:"imediato"`
}

// PixSplit is the split section.
type PixSplit struct {
	DivisaoTarifa string         `json:"divisaoTarifa"`
	MinhaParte    PixSplitPart   `json:"minhaParte"`
	Repasses      []PixSplitPart `json:"repasses"`
}

// PixSplitPart is minhaParte (no Favorecido) or a repasse; Valor is a
// two-decimal string (a percentage for "porcentagem").
type PixSplitPart struct {
	Tipo       string      `json:"tipo"`
	Valor      string      `json:"valor"`
	Favorecido *Favorecido `json:"favorecido,omitempty"`
}

// Favorecido of a Pix split repasse.
type Favorecido struct {
	CPF   string `json:"cpf,omitempty"`
	CNPJ  string `json:"cnpj,omitempty"`
	Conta string `json:"conta"`
}

// Item is one accepted input row, fully resolved into the request the run
// stage sends. Exactly one of Carnet, Cobv and Slip is set.
type Item struct {
	Index       int    // 0-based among the input's data rows
	SourceRow   int    // row number as the spreadsheet shows it
	Key         string // row key
	PayerName   string
	PayerDoc    string // CPF or CNPJ, clean
	AmountCents int64  // what the row asks for: all parcels of a carnet, the value of a slip or cobv
	DueDate     time.Time
	// Parcels are the carnet's parcel due dates and values (nil otherwise).
	Parcels []ParcelPlan

	Carnet *CarnetRequest
	Cobv   *CobvRequest
	Slip   *SlipRequest
	// PixSplit is the cobv's split configuration, nil without a split.
	// SplitKey identifies equal configurations (one config serves many charges).
	PixSplit *PixSplitConfig
	SplitKey string

	// Split is who gets what, per due month (results.Share, the own
	// account with Own set).
	Split []results.Share
	// Warnings are non-blocking remarks about this row (restored zeros,
	// a likely duplicate).
	Warnings []results.Problem
}

// ParcelPlan is one parcel of a carnet as planned.
type ParcelPlan struct {
	Number     int
	DueDate    time.Time
	ValueCents int64
}
