package pipeline

// This file is the job file's schema: the Go structs the YAML is decoded
// into. Field tags: yaml names the key, req:"true" makes it required, doc
// and doc_en describe it (used by the JSON Schema), enum lists allowed
// values, and kind tells the schema what a Value holds.

// JobSpec is the top level of a job file.
type JobSpec struct {
	Version     int            `yaml:"version" req:"true" enum:"1" doc:"versão do formato do arquivo de job; sempre 1" doc_en:"job file format version; always 1"`
	Name        string         `yaml:"name" doc:"nome do job, aparece nos relatórios" doc_en:"job name, shown in reports"`
	Service     string         `yaml:"service" enum:"embedded,sandbox,production" doc:"onde emitir: embedded (padrão, sandbox local embutido), sandbox (homologação da Efí) ou production" doc_en:"where to issue: embedded (default, in-process local sandbox), sandbox (Efí homologation) or production"`
	Endpoint    *EndpointSpec  `yaml:"endpoint" doc:"endereços e credenciais do serviço; credenciais só por ${VAR}" doc_en:"service addresses and credentials; credentials only through ${VAR}"`
	Input       InputSpec      `yaml:"input" req:"true" doc:"a planilha de pagadores" doc_en:"the spreadsheet of payers"`
	Issue       IssueSpec      `yaml:"issue" doc:"o que emitir para cada linha: exatamente um de carnets, cobv ou boletos (obrigatório, exceto para remessas CNAB: boletos)" doc_en:"what to issue for each row: exactly one of carnets, cobv or boletos (required, except for CNAB remessas: boletos)"`
	OnInvalid   string         `yaml:"on_invalid" enum:"stop,skip" doc:"stop (padrão): linhas inválidas impedem a execução; skip: emite as válidas e relata as inválidas" doc_en:"stop (default): invalid rows prevent the run; skip: issue the valid rows and report the invalid ones"`
	Concurrency int            `yaml:"concurrency" doc:"requisições simultâneas (padrão 4)" doc_en:"concurrent requests (default 4)"`
	Rate        map[string]int `yaml:"rate" doc:"limite de requisições por segundo por rota (ex.: \"POST /v1/carnet\": 10) ou \"default\"" doc_en:"requests per second per route (e.g. \"POST /v1/carnet\": 10) or \"default\""`
	Quota       map[string]int `yaml:"quota" doc:"cota diária de requisições por rota (padrão 15000)" doc_en:"daily request quota per route (default 15000)"`
	Reports     *ReportsSpec   `yaml:"reports" doc:"relatórios da execução" doc_en:"run reports"`
	Reminders   *RemindersSpec `yaml:"reminders" doc:"régua de cobrança: lembretes antes e depois do vencimento (remessa remind)" doc_en:"dunning schedule: reminders before and after the due date (remessa remind)"`
}

// EndpointSpec overrides the service addresses and carries credentials.
type EndpointSpec struct {
	BaseURL             string `yaml:"base_url" doc:"endereço da API de cobranças (/v1)" doc_en:"charges API address (/v1)"`
	PixBaseURL          string `yaml:"pix_base_url" doc:"endereço da API Pix (/v2)" doc_en:"Pix API address (/v2)"`
	ClientID            string `yaml:"client_id" secret:"true" doc:"Client_Id; apenas ${VAR}" doc_en:"Client_Id; ${VAR} only"`
	ClientSecret        string `yaml:"client_secret" secret:"true" doc:"Client_Secret; apenas ${VAR}" doc_en:"Client_Secret; ${VAR} only"`
	Certificate         string `yaml:"certificate" doc:"caminho do certificado .p12 ou .pem (API Pix)" doc_en:"path of the .p12 or .pem certificate (Pix API)"`
	CertificatePassword string `yaml:"certificate_password" secret:"true" doc:"senha do certificado; apenas ${VAR}" doc_en:"certificate password; ${VAR} only"`
	PayeeCode           string `yaml:"payee_code" doc:"identificador da conta emissora (para checar repasses à própria conta)" doc_en:"issuing account identifier (to check repasses to the own account)"`
	Conta               string `yaml:"conta" doc:"número da conta Pix emissora (para checar o split Pix)" doc_en:"issuing Pix account number (to check the Pix split)"`
}

// InputSpec says where the payers are.
type InputSpec struct {
	File    string            `yaml:"file" req:"true" doc:"arquivo .xlsx, .csv, .yaml ou uma remessa CNAB 240/400, relativo ao job" doc_en:".xlsx, .csv, .yaml file or a CNAB 240/400 remessa, relative to the job file"`
	Sheet   string            `yaml:"sheet" doc:"aba da planilha (padrão: a primeira)" doc_en:"worksheet (default: the first)"`
	Key     string            `yaml:"key" doc:"cabeçalho da coluna que identifica a linha entre execuções (padrão: a coluna do campo key)" doc_en:"header of the column that identifies a row across runs (default: the key field's column)"`
	Columns map[string]string `yaml:"columns" doc:"campo: cabeçalho, só onde o cabeçalho difere dos nomes padrão" doc_en:"field: header, only where the header differs from the default names"`
	Format  string            `yaml:"format" enum:"cnab240,cnab400" doc:"cnab240 ou cnab400 para um arquivo de remessa CNAB (padrão: reconhecido pela primeira linha)" doc_en:"cnab240 or cnab400 for a CNAB remessa file (default: recognised by its first line)"`
	Bank    string            `yaml:"bank" doc:"CNAB: código do banco que o header do arquivo deve trazer (ex.: 237)" doc_en:"CNAB: bank code the file header must carry (e.g. 237)"`
	Company string            `yaml:"company" doc:"CNAB: CNPJ ou CPF da empresa que o header do arquivo deve trazer" doc_en:"CNAB: the company's CNPJ or CPF the file header must carry"`
}

// IssueSpec holds exactly one kind of issuance.
type IssueSpec struct {
	Carnets *CarnetSpec `yaml:"carnets" nullempty:"true" doc:"carnês: POST /v1/carnet, um por linha" doc_en:"carnets: POST /v1/carnet, one per row"`
	Cobv    *CobvSpec   `yaml:"cobv" nullempty:"true" doc:"cobranças Pix com vencimento em lotes: PUT /v2/lotecobv/:id" doc_en:"due-date Pix charges in batches: PUT /v2/lotecobv/:id"`
	Boletos *SlipSpec   `yaml:"boletos" nullempty:"true" doc:"boletos em um passo: POST /v1/charge/one-step" doc_en:"one-step slips: POST /v1/charge/one-step"`
}

// CarnetSpec is the request of POST /v1/carnet for every row.
type CarnetSpec struct {
	Repeats             Value                    `yaml:"repeats" req:"true" kind:"int" doc:"número de parcelas, 2 a 12" doc_en:"number of parcels, 2 to 12"`
	FirstDue            Value                    `yaml:"first_due" kind:"date" doc:"vencimento da primeira parcela (data, data relativa ou coluna); padrão: coluna de vencimento" doc_en:"first parcel due date (date, relative date or column); default: the due date column"`
	Items               []ItemSpec               `yaml:"items" doc:"itens de cada parcela; padrão: um item com a descrição e o valor da linha" doc_en:"items of each parcel; default: one item with the row's description and value"`
	SplitItems          bool                     `yaml:"split_items" doc:"divide o valor dos itens entre as parcelas" doc_en:"divide the items' value among the parcels"`
	Fine                Value                    `yaml:"fine" kind:"percent" doc:"multa após o vencimento (ex.: 2%), até 10%" doc_en:"fine after the due date (e.g. 2%), up to 10%"`
	InterestPerDay      Value                    `yaml:"interest_per_day" kind:"percent" doc:"juros por dia (ex.: 0,033%), até 0,33%" doc_en:"interest per day (e.g. 0.033%), up to 0.33%"`
	Message             Value                    `yaml:"message" doc:"mensagem no carnê, até 80 caracteres" doc_en:"carnet message, up to 80 characters"`
	Discount            *DiscountSpec            `yaml:"discount" doc:"desconto fixo" doc_en:"fixed discount"`
	ConditionalDiscount *ConditionalDiscountSpec `yaml:"conditional_discount" doc:"desconto para pagamento até uma data" doc_en:"discount for payment until a date"`
	NotificationURL     Value                    `yaml:"notification_url" doc:"endereço que recebe as notificações de status" doc_en:"address that receives status notifications"`
	CustomID            Value                    `yaml:"custom_id" doc:"seu identificador (modelo, ex.: \"{{ .Matrícula }}-2027\"); padrão: derivado da execução e da chave" doc_en:"your identifier (template, e.g. \"{{ .Matrícula }}-2027\"); default: derived from the run and the key"`
}

// SlipSpec is the request of POST /v1/charge/one-step with banking_billet.
type SlipSpec struct {
	Due                 Value                    `yaml:"due" kind:"date" doc:"vencimento (expire_at); padrão: coluna de vencimento" doc_en:"due date (expire_at); default: the due date column"`
	Items               []ItemSpec               `yaml:"items" doc:"itens; padrão: um item com a descrição e o valor da linha" doc_en:"items; default: one item with the row's description and value"`
	Fine                Value                    `yaml:"fine" kind:"percent" doc:"multa (ex.: 2%), até 10%" doc_en:"fine (e.g. 2%), up to 10%"`
	InterestPerDay      Value                    `yaml:"interest_per_day" kind:"percent" doc:"juros por dia (ex.: 0,033%), até 0,33%" doc_en:"interest per day (e.g. 0.033%), up to 0.33%"`
	DaysToWriteOff      Value                    `yaml:"days_to_write_off" kind:"int" doc:"dias após o vencimento até a baixa, 0 a 120" doc_en:"days after the due date until write-off, 0 to 120"`
	Message             Value                    `yaml:"message" doc:"mensagem no boleto: até 4 linhas de 100 caracteres" doc_en:"slip message: up to 4 lines of 100 characters"`
	Discount            *DiscountSpec            `yaml:"discount" doc:"desconto fixo" doc_en:"fixed discount"`
	ConditionalDiscount *ConditionalDiscountSpec `yaml:"conditional_discount" doc:"desconto para pagamento até uma data" doc_en:"discount for payment until a date"`
	NotificationURL     Value                    `yaml:"notification_url" doc:"endereço que recebe as notificações de status" doc_en:"address that receives status notifications"`
	CustomID            Value                    `yaml:"custom_id" doc:"seu identificador (modelo); padrão: derivado da execução e da chave" doc_en:"your identifier (template); default: derived from the run and the key"`
}

// ItemSpec is one item of a carnet parcel or a slip.
type ItemSpec struct {
	Name        Value            `yaml:"name" req:"true" doc:"nome do item (texto ou modelo)" doc_en:"item name (text or template)"`
	Value       Value            `yaml:"value" kind:"money" doc:"valor unitário (ex.: \"R$ 150,00\" ou \"{{ .Valor }}\"); padrão: coluna de valor" doc_en:"unit value (e.g. \"R$ 150,00\" or \"{{ .Valor }}\"); default: the value column"`
	Amount      Value            `yaml:"amount" kind:"int" doc:"quantidade (padrão 1)" doc_en:"quantity (default 1)"`
	Marketplace *MarketplaceSpec `yaml:"marketplace" doc:"repasses deste item (split de marketplace)" doc_en:"repasses of this item (marketplace split)"`
}

// MarketplaceSpec is the marketplace split of an item.
type MarketplaceSpec struct {
	Mode     int           `yaml:"mode" enum:"1,2" doc:"1: tarifa só da conta emissora; 2 (padrão): proporcional" doc_en:"1: fee from the issuing account only; 2 (default): proportional"`
	Repasses []RepasseSpec `yaml:"repasses" req:"true" doc:"contas que recebem parte do item" doc_en:"accounts that receive part of the item"`
}

// RepasseSpec is one repasse: a percentage or a fixed value.
type RepasseSpec struct {
	PayeeCode  Value `yaml:"payee_code" req:"true" doc:"identificador da conta (32 hexadecimais)" doc_en:"account identifier (32 hex)"`
	Percentage Value `yaml:"percentage" kind:"percent" doc:"porcentagem (ex.: 10% ou \"{{ .Comissão }}\")" doc_en:"percentage (e.g. 10% or \"{{ .Comissão }}\")"`
	Fixed      Value `yaml:"fixed" kind:"money" doc:"valor fixo (exige mode 1)" doc_en:"fixed value (requires mode 1)"`
}

// DiscountSpec is a discount (charges API).
type DiscountSpec struct {
	Type  string `yaml:"type" req:"true" enum:"percentage,currency" doc:"percentage ou currency" doc_en:"percentage or currency"`
	Value Value  `yaml:"value" req:"true" kind:"percent_or_money" doc:"5% (percentage) ou R$ 10,00 (currency)" doc_en:"5% (percentage) or R$ 10,00 (currency)"`
}

// ConditionalDiscountSpec is a discount for payment until a date.
type ConditionalDiscountSpec struct {
	Type          string `yaml:"type" req:"true" enum:"percentage,currency" doc:"percentage ou currency" doc_en:"percentage or currency"`
	Value         Value  `yaml:"value" req:"true" kind:"percent_or_money" doc:"5% ou R$ 10,00" doc_en:"5% or R$ 10,00"`
	UntilDate     Value  `yaml:"until_date" kind:"date" doc:"data limite (data ou data relativa)" doc_en:"last day (date or relative date)"`
	DaysBeforeDue int    `yaml:"days_before_due" doc:"ou: tantos dias antes do vencimento" doc_en:"or: this many days before the due date"`
}

// CobvSpec is the due-date Pix charge (cobv) of every row, sent in batches.
type CobvSpec struct {
	Due                    Value            `yaml:"due" kind:"date" doc:"dataDeVencimento; padrão: coluna de vencimento" doc_en:"dataDeVencimento; default: the due date column"`
	ValidadeAposVencimento int              `yaml:"validade_apos_vencimento" doc:"dias em que a cobrança ainda pode ser paga após o vencimento (padrão 30)" doc_en:"days the charge can still be paid after the due date (default 30)"`
	Chave                  Value            `yaml:"chave" req:"true" doc:"chave Pix que recebe" doc_en:"receiving Pix key"`
	Solicitacao            Value            `yaml:"solicitacao" doc:"solicitacaoPagador, até 140 caracteres" doc_en:"solicitacaoPagador, up to 140 characters"`
	Valor                  Value            `yaml:"valor" kind:"money" doc:"valor original; padrão: coluna de valor" doc_en:"original value; default: the value column"`
	Txid                   Value            `yaml:"txid" doc:"txid (modelo ou coluna); padrão: coluna txid, senão derivado da execução e da chave" doc_en:"txid (template or column); default: the txid column, else derived from the run and the key"`
	Multa                  *PixModSpec      `yaml:"multa" doc:"multa: modalidade 1 valor fixo, 2 percentual" doc_en:"fine: modalidade 1 fixed value, 2 percent"`
	Juros                  *PixModSpec      `yaml:"juros" doc:"juros: modalidade 1-8 (BCB)" doc_en:"interest: modalidade 1-8 (BCB)"`
	Abatimento             *PixModSpec      `yaml:"abatimento" doc:"abatimento: modalidade 1 valor fixo, 2 percentual" doc_en:"rebate: modalidade 1 fixed value, 2 percent"`
	Desconto               *PixDescontoSpec `yaml:"desconto" doc:"desconto: modalidade 1-2 com datas, 3-6 por dia de antecipação" doc_en:"discount: modalidade 1-2 with dates, 3-6 per day paid early"`
	Split                  *PixSplitSpec    `yaml:"split" doc:"configuração de split Pix (até 20 contas)" doc_en:"Pix split configuration (up to 20 accounts)"`
	Batch                  *BatchSpec       `yaml:"batch" doc:"tamanho dos lotes" doc_en:"batch sizes"`
}

// PixModSpec is a multa, juros or abatimento of a cobv.
type PixModSpec struct {
	Modalidade int   `yaml:"modalidade" req:"true" doc:"modalidade do BCB" doc_en:"BCB modalidade"`
	Valor      Value `yaml:"valor" req:"true" kind:"percent_or_money" doc:"2% (percentual) ou R$ 5,00 (valor)" doc_en:"2% (percent) or R$ 5,00 (value)"`
}

// PixDescontoSpec is the desconto of a cobv.
type PixDescontoSpec struct {
	Modalidade int            `yaml:"modalidade" req:"true" doc:"1 valor fixo até data(s), 2 percentual até data(s), 3-6 por dia de antecipação" doc_en:"1 fixed until date(s), 2 percent until date(s), 3-6 per day paid early"`
	Valor      Value          `yaml:"valor" kind:"percent_or_money" doc:"para modalidades 3-6" doc_en:"for modalidades 3-6"`
	Datas      []PixDataValor `yaml:"datas" doc:"para modalidades 1-2: 1 a 3 datas com valor" doc_en:"for modalidades 1-2: 1 to 3 dates with a value"`
}

// PixDataValor is one date of a desconto.
type PixDataValor struct {
	Data  Value `yaml:"data" req:"true" kind:"date" doc:"data (ou \"-5d\": 5 dias antes do vencimento)" doc_en:"date (or \"-5d\": 5 days before the due date)"`
	Valor Value `yaml:"valor" req:"true" kind:"percent_or_money" doc:"valor ou percentual" doc_en:"value or percent"`
}

// PixSplitSpec is a Pix split configuration (PUT /v2/gn/split/config/:id).
type PixSplitSpec struct {
	DivisaoTarifa string        `yaml:"divisao_tarifa" enum:"assumir_total,proporcional" doc:"assumir_total (padrão) ou proporcional" doc_en:"assumir_total (default) or proporcional"`
	MinhaParte    PixPartSpec   `yaml:"minha_parte" req:"true" doc:"a parte da conta emissora" doc_en:"the issuing account's part"`
	Repasses      []PixPartSpec `yaml:"repasses" req:"true" doc:"até 20 contas favorecidas" doc_en:"up to 20 receiving accounts"`
	Descricao     string        `yaml:"descricao" doc:"descrição da configuração (até 80)" doc_en:"configuration description (up to 80)"`
}

// PixPartSpec is minhaParte or one repasse of a Pix split.
type PixPartSpec struct {
	Tipo  string `yaml:"tipo" req:"true" enum:"porcentagem,fixo" doc:"porcentagem ou fixo" doc_en:"porcentagem or fixo"`
	Valor Value  `yaml:"valor" req:"true" kind:"percent_or_money" doc:"60% (porcentagem) ou R$ 5,00 (fixo)" doc_en:"60% (porcentagem) or R$ 5,00 (fixo)"`
	CPF   Value  `yaml:"cpf" doc:"CPF do favorecido" doc_en:"favorecido's CPF"`
	CNPJ  Value  `yaml:"cnpj" doc:"CNPJ do favorecido" doc_en:"favorecido's CNPJ"`
	Conta Value  `yaml:"conta" doc:"conta Efí do favorecido" doc_en:"favorecido's Efí account"`
}

// BatchSpec sets the size of cobv batches.
type BatchSpec struct {
	Size      int    `yaml:"size" doc:"cobranças por lote, 1 a 1000 (padrão 1000)" doc_en:"charges per batch, 1 to 1000 (default 1000)"`
	MaxBytes  int    `yaml:"max_bytes" doc:"tamanho máximo do corpo de um lote em bytes (padrão 1048576)" doc_en:"largest batch body in bytes (default 1048576)"`
	Descricao string `yaml:"descricao" doc:"descrição dos lotes" doc_en:"batch description"`
}

// ReportsSpec says where reports go.
type ReportsSpec struct {
	Dir     string   `yaml:"dir" doc:"pasta dos relatórios (padrão remessa-out)" doc_en:"reports folder (default remessa-out)"`
	Formats []string `yaml:"formats" enum:"xlsx,html,csv,json" doc:"formatos: xlsx, html, csv, json" doc_en:"formats: xlsx, html, csv, json"`
	Lang    string   `yaml:"lang" enum:"pt,en" doc:"idioma: pt (padrão) ou en" doc_en:"language: pt (default) or en"`
}
