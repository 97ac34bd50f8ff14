package pipeline

import (
	"remessa/formats"
	"remessa/pipeline/results"
)

// Field is one column the pipeline understands. Headers are matched by
// formats.MatchHeaders: case-, accent- and punctuation-insensitive, against
// the ID, the Label and the Aliases.
type Field struct {
	ID      string // field name, also usable in templates ({{ .value }})
	Label   string // default header written by templates (Portuguese)
	LabelEN string
	Aliases []string
	Type    string // text, key, document, email, phone, date, cep, uf, money, txid
	Doc     string // what goes there (Portuguese), for the instructions sheet
	DocEN   string
	Example string
	// Kinds that use the field; nil means every kind.
	Kinds []results.Kind
}

// Field IDs.
const (
	FKey           = "key"
	FName          = "name"
	FDocument      = "document"
	FEmail         = "email"
	FPhone         = "phone"
	FBirth         = "birth"
	FStreet        = "street"
	FNumber        = "number"
	FNeighborhood  = "neighborhood"
	FZipcode       = "zipcode"
	FCity          = "city"
	FState         = "state"
	FComplement    = "complement"
	FCorporateName = "corporate_name"
	FValue         = "value"
	FDueDate       = "due_date"
	FDescription   = "description"
	FTxid          = "txid"
	FMessage       = "message"
)

// Field ordinals, in Catalogue order (used on the per-row path instead of
// map lookups by name).
const (
	iKey = iota
	iName
	iDocument
	iEmail
	iPhone
	iBirth
	iStreet
	iNumber
	iNeighborhood
	iZipcode
	iCity
	iState
	iComplement
	iCorporateName
	iValue
	iDueDate
	iDescription
	iTxid
	iMessage
	numFields
)

// Catalogue is every field, in template column order.
var Catalogue = []Field{
	{ID: FKey, Label: "Código", LabelEN: "Key", Type: "key",
		Aliases: []string{"chave", "código", "codigo", "id", "matrícula", "matricula", "identificador", "referência", "contrato", "key", "row_key"},
		Doc:     "identificador único da linha, o mesmo em todas as execuções (matrícula, contrato)", DocEN: "unique row identifier, the same across runs (enrolment, contract)", Example: TemplateExampleKey},
	{ID: FName, Label: "Nome", LabelEN: "Name", Type: "text",
		Aliases: []string{"nome", "responsável", "responsavel", "pagador", "nome do pagador", "nome completo", "cliente", "devedor", "payer", "payer.name", "payer_name", "customer"},
		Doc:     "nome do pagador (pessoa física; para empresa, use Razão social)", DocEN: "payer name (a person; for a company use Razão social)", Example: "Maria José da Conceição"},
	{ID: FDocument, Label: "CPF/CNPJ", LabelEN: "CPF/CNPJ", Type: "document",
		Aliases: []string{"cpf", "cnpj", "cpf_cnpj", "cpf/cnpj", "cpf ou cnpj", "documento", "document", "doc", "payer.document", "payer.cpf"},
		Doc:     "CPF (11 dígitos) ou CNPJ (14, pode ter letras); com ou sem máscara; formate a coluna como texto", DocEN: "CPF (11 digits) or CNPJ (14, may have letters); with or without mask; format the column as text", Example: "529.982.247-25"},
	{ID: FEmail, Label: "E-mail", LabelEN: "Email", Type: "email",
		Aliases: []string{"email", "e-mail", "correio eletrônico", "payer.email"},
		Doc:     "e-mail do pagador (opcional)", DocEN: "payer e-mail (optional)", Example: "maria@example.com"},
	{ID: FPhone, Label: "Telefone", LabelEN: "Phone", Type: "phone",
		Aliases: []string{"telefone", "celular", "fone", "whatsapp", "phone", "phone_number", "payer.phone"},
		Doc:     "DDD + número, com ou sem máscara (opcional)", DocEN: "area code + number, with or without mask (optional)", Example: "(11) 98765-4321"},
	{ID: FBirth, Label: "Nascimento", LabelEN: "Birth", Type: "date",
		Aliases: []string{"nascimento", "data de nascimento", "birth", "birth_date", "birthdate"},
		Doc:     "data de nascimento dd/mm/aaaa (opcional)", DocEN: "birth date dd/mm/yyyy (optional)", Example: "15/03/1985"},
	{ID: FStreet, Label: "Logradouro", LabelEN: "Street", Type: "text",
		Aliases: []string{"logradouro", "rua", "endereço", "endereco", "street", "address"},
		Doc:     "rua, avenida (opcional; se houver, informe o endereço completo)", DocEN: "street (optional; if given, give the whole address)", Example: "Rua das Flores"},
	{ID: FNumber, Label: "Número", LabelEN: "Number", Type: "text",
		Aliases: []string{"número", "numero", "nº", "n", "num", "number"},
		Doc:     "número do endereço", DocEN: "street number", Example: "123"},
	{ID: FNeighborhood, Label: "Bairro", LabelEN: "Neighborhood", Type: "text",
		Aliases: []string{"bairro", "neighborhood", "district"},
		Doc:     "bairro", DocEN: "neighbourhood", Example: "Centro"},
	{ID: FZipcode, Label: "CEP", LabelEN: "Zip code", Type: "cep",
		Aliases: []string{"cep", "zipcode", "zip", "zip_code", "postal_code"},
		Doc:     "CEP com 8 dígitos; formate a coluna como texto", DocEN: "8-digit CEP; format the column as text", Example: "01310-100"},
	{ID: FCity, Label: "Cidade", LabelEN: "City", Type: "text",
		Aliases: []string{"cidade", "município", "municipio", "city"},
		Doc:     "cidade", DocEN: "city", Example: "São Paulo"},
	{ID: FState, Label: "UF", LabelEN: "State", Type: "uf",
		Aliases: []string{"uf", "estado", "state"},
		Doc:     "sigla do estado (SP, RJ, ...)", DocEN: "state code (SP, RJ, ...)", Example: "SP"},
	{ID: FComplement, Label: "Complemento", LabelEN: "Complement", Type: "text",
		Aliases: []string{"complemento", "complement"},
		Doc:     "complemento (opcional)", DocEN: "complement (optional)", Example: "Apto 12"},
	{ID: FCorporateName, Label: "Razão social", LabelEN: "Corporate name", Type: "text",
		Aliases: []string{"razão social", "razao social", "empresa", "corporate_name", "company"},
		Doc:     "razão social, quando o pagador é empresa (CNPJ)", DocEN: "company name, when the payer is a company (CNPJ)", Example: ""},
	{ID: FValue, Label: "Valor", LabelEN: "Value", Type: "money",
		Aliases: []string{"valor", "valor (r$)", "mensalidade", "preço", "preco", "value", "amount", "valor original"},
		Doc:     "valor em reais, ex.: 1.234,56", DocEN: "amount in reais, e.g. 1.234,56", Example: "150,00"},
	{ID: FDueDate, Label: "Vencimento", LabelEN: "Due date", Type: "date",
		Aliases: []string{"vencimento", "data de vencimento", "data vencimento", "due_date", "due", "expire_at", "data_vencimento"},
		Doc:     "data de vencimento dd/mm/aaaa (se o job não fixar uma)", DocEN: "due date dd/mm/yyyy (unless the job sets one)", Example: ""},
	{ID: FDescription, Label: "Descrição", LabelEN: "Description", Type: "text",
		Aliases: []string{"descrição", "descricao", "description", "item", "produto", "serviço", "servico", "referente"},
		Doc:     "descrição do item cobrado", DocEN: "description of the item charged", Example: "Mensalidade"},
	{ID: FTxid, Label: "Txid", LabelEN: "Txid", Type: "txid", Kinds: []results.Kind{results.Cobv},
		Aliases: []string{"txid", "tx_id"},
		Doc:     "identificador da cobrança Pix, 26 a 35 letras e dígitos (opcional; senão é gerado)", DocEN: "Pix charge identifier, 26 to 35 letters and digits (optional; generated otherwise)", Example: ""},
	{ID: FMessage, Label: "Mensagem", LabelEN: "Message", Type: "text",
		Aliases: []string{"mensagem", "message", "instruções", "instrucoes", "observação", "observacao"},
		Doc:     "mensagem para esta linha (opcional; substitui a do job)", DocEN: "message for this row (optional; replaces the job's)", Example: ""},
}

// FieldByID returns the catalogue field with that ID.
func FieldByID(id string) (Field, bool) {
	for _, f := range Catalogue {
		if f.ID == id {
			return f, true
		}
	}
	return Field{}, false
}

func (f Field) usedBy(k results.Kind) bool {
	if f.Kinds == nil {
		return true
	}
	for _, x := range f.Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// fieldSpecs returns the formats field specs for a kind; required lists
// the fields that must have a column.
func fieldSpecs(k results.Kind, required map[string]bool) []formats.FieldSpec {
	var fs []formats.FieldSpec
	for _, f := range Catalogue {
		if !f.usedBy(k) {
			continue
		}
		aliases := append([]string{f.Label, f.LabelEN}, f.Aliases...)
		fs = append(fs, formats.FieldSpec{Name: f.ID, Aliases: aliases, Required: required[f.ID]})
	}
	return fs
}

// TemplateFields returns the fields a template for kind k gets, in order:
// the ones a person fills for that kind.
func TemplateFields(k results.Kind) []Field {
	var out []Field
	for _, f := range Catalogue {
		if !f.usedBy(k) {
			continue
		}
		switch f.ID {
		case FCorporateName, FTxid, FMessage, FBirth, FComplement:
			continue
		}
		if k == results.Cobv {
			switch f.ID {
			case FPhone, FNumber, FNeighborhood, FDescription:
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
