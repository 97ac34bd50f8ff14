// Package actions runs follow-up actions on the charges of an earlier run,
// as jobs: cancel, change_due_date, resend, settle, second_copy and
// abatimento (a cobv's, set or removed). An
// action job names the run (from_run), optionally a sheet of keys and a
// filter, and one action; it goes validate → plan (per row, what will
// change, with totals) → confirm (production) → run → report through a
// journal in an action folder (<run>/acoes/<id>/), so it resumes after
// kill -9 and never applies anything twice, and it records each effect in
// the source run's ledger (pipeline/status) so `remessa status` and the
// reconciliation include it. docs/follow-up.md describes it.
package actions

// Spec is an action job file. Field tags as in pipeline.JobSpec (the same
// strict decoder reads it).
type Spec struct {
	Version     int         `yaml:"version" req:"true" enum:"1" doc:"versão do formato do arquivo de job; sempre 1" doc_en:"job file format version; always 1"`
	Name        string      `yaml:"name" doc:"nome da ação, aparece no relatório" doc_en:"action name, shown in the report"`
	FromRun     string      `yaml:"from_run" req:"true" doc:"pasta da execução cujas cobranças a ação altera (relativa ao job)" doc_en:"folder of the run whose charges the action changes (relative to the job)"`
	Input       *InputSpec  `yaml:"input" doc:"planilha com as chaves das linhas da execução a alterar" doc_en:"sheet with the keys of the run's rows to change"`
	Filter      *FilterSpec `yaml:"filter" doc:"quais cobranças da execução (padrão: todas)" doc_en:"which charges of the run (default: all)"`
	Action      ActionSpec  `yaml:"action" req:"true" doc:"a ação: exatamente um de cancel, change_due_date, resend, settle, second_copy, abatimento" doc_en:"the action: exactly one of cancel, change_due_date, resend, settle, second_copy, abatimento"`
	Concurrency int         `yaml:"concurrency" doc:"requisições simultâneas (padrão 4)" doc_en:"concurrent requests (default 4)"`
}

// InputSpec names rows of the run by key, from a sheet.
type InputSpec struct {
	File  string `yaml:"file" req:"true" doc:"arquivo .xlsx, .csv ou .yaml, relativo ao job" doc_en:".xlsx, .csv or .yaml file, relative to the job file"`
	Sheet string `yaml:"sheet" doc:"aba da planilha (padrão: a primeira)" doc_en:"worksheet (default: the first)"`
	Key   string `yaml:"key" req:"true" doc:"cabeçalho da coluna com a chave das linhas da execução" doc_en:"header of the column holding the run's row keys"`
}

// FilterSpec selects charges of the run.
type FilterSpec struct {
	Status    []string `yaml:"status" doc:"situações: as do serviço (waiting, unpaid, paid, settled, canceled, ATIVA, CONCLUIDA…) ou open, overdue (vencida), paid, cancelled" doc_en:"states: the service's (waiting, unpaid, paid, settled, canceled, ATIVA, CONCLUIDA…) or open, overdue, paid, cancelled"`
	DueBefore string   `yaml:"due_before" doc:"só vencimentos antes desta data" doc_en:"only due dates before this date"`
	DueFrom   string   `yaml:"due_from" doc:"só vencimentos nesta data ou depois" doc_en:"only due dates on or after this date"`
	Keys      []string `yaml:"keys" doc:"só estas chaves de linha" doc_en:"only these row keys"`
	Parcels   []int    `yaml:"parcels" doc:"carnês: só estas parcelas (1 a 12)" doc_en:"carnets: only these parcels (1 to 12)"`
}

// ActionSpec holds exactly one action.
type ActionSpec struct {
	Cancel        *CancelSpec     `yaml:"cancel" nullempty:"true" doc:"cancela: carnê inteiro (ou parcel: N), boleto, cobv (status REMOVIDA_PELO_USUARIO_RECEBEDOR)" doc_en:"cancel: whole carnet (or parcel: N), slip, cobv (status REMOVIDA_PELO_USUARIO_RECEBEDOR)"`
	ChangeDueDate *DueSpec        `yaml:"change_due_date" doc:"novo vencimento: date (uma data) ou days (dias a somar)" doc_en:"new due date: date (a date) or days (days to add)"`
	Resend        *ResendSpec     `yaml:"resend" nullempty:"true" doc:"reenvia o boleto ou carnê por e-mail" doc_en:"e-mail the slip or carnet again"`
	Settle        *SettleSpec     `yaml:"settle" nullempty:"true" doc:"marca como pago fora do banco (baixa manual)" doc_en:"mark as paid outside the bank (manual settlement)"`
	SecondCopy    *SecondCopySpec `yaml:"second_copy" nullempty:"true" doc:"baixa o PDF do boleto ou carnê de cada pagador numa pasta por chave, e um zip" doc_en:"download each payer's slip or carnet PDF into a folder per key, and a zip"`
	Abatimento    *AbatimentoSpec `yaml:"abatimento" doc:"concede ou cancela o abatimento de cobv (PATCH valor.abatimento); boletos e carnês não têm abatimento no serviço" doc_en:"grant or cancel a cobv's rebate (PATCH valor.abatimento); slips and carnets have no rebate in the service"`
}

// AbatimentoSpec is a cobv's new abatimento, a fixed value: one of cents
// (every charge selected), by_key (each row key its own) or remove.
type AbatimentoSpec struct {
	Cents  int64            `yaml:"cents" doc:"abatimento em centavos (1234 = R$ 12,34) para todas as cobv selecionadas" doc_en:"rebate in cents (1234 = R$ 12.34) for every cobv selected"`
	ByKey  map[string]int64 `yaml:"by_key" doc:"ou: o abatimento em centavos de cada chave de linha (chave: centavos, mais de zero); só essas linhas" doc_en:"or: each row key's rebate in cents (key: cents, above zero); only those rows"`
	Remove bool             `yaml:"remove" doc:"ou: cancela o abatimento das cobv selecionadas" doc_en:"or: cancel the rebate of the cobv selected"`
}

// CancelSpec: the whole carnet, or one parcel.
type CancelSpec struct {
	Parcel int `yaml:"parcel" doc:"carnês: só esta parcela (1 a 12)" doc_en:"carnets: only this parcel (1 to 12)"`
}

// SettleSpec: the open parcels, or one.
type SettleSpec struct {
	Parcel int `yaml:"parcel" doc:"carnês: só esta parcela (1 a 12)" doc_en:"carnets: only this parcel (1 to 12)"`
}

// DueSpec is the new due date.
type DueSpec struct {
	Date string `yaml:"date" doc:"nova data de vencimento (10/03/2027, 2027-03-10, dia 15 do próximo mês)" doc_en:"new due date (10/03/2027, 2027-03-10, day 15 of next month)"`
	Days int    `yaml:"days" doc:"ou: dias a somar ao vencimento atual de cada cobrança" doc_en:"or: days to add to each charge's current due date"`
	// Dates is a new due date per row key (a CNAB remessa's 06
	// movements: each title its own date); only those rows are changed.
	Dates  map[string]string `yaml:"dates" doc:"ou: a nova data de cada chave de linha (chave: data); só essas linhas" doc_en:"or: each row key's new due date (key: date); only those rows"`
	Parcel int               `yaml:"parcel" doc:"carnês: só esta parcela (1 a 12)" doc_en:"carnets: only this parcel (1 to 12)"`
}

// ResendSpec: e-mail again.
type ResendSpec struct {
	Email string `yaml:"email" doc:"envia para este e-mail em vez do e-mail do pagador" doc_en:"send to this address instead of the payer's"`
}

// SecondCopySpec: PDFs by key, and a zip.
type SecondCopySpec struct {
	Dir string `yaml:"dir" doc:"pasta dos PDFs, dentro da pasta da ação (padrão segundas-vias)" doc_en:"PDF folder, inside the action folder (default segundas-vias)"`
}
