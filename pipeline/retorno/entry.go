package retorno

// Entry is one event of one title as a retorno reports it: what the file
// writes (occurrence code, motivos, identifiers, values and dates) and
// what only the report says (the text of a rejection, the charge's txid).
// Money is in cents; dates are YYYY-MM-DD (São Paulo). An Entry is kept
// as it was written in retornos.db, so the same file can be written again.
type Entry struct {
	Key         string   `json:"key"` // the event's identity in its run (exactly once)
	Event       string   `json:"event"`
	Code        string   `json:"code"` // occurrence code in the file's layout ("" when the layout has none)
	Motivos     []string `json:"motivos,omitempty"`
	Text        string   `json:"text,omitempty"`
	Row         int      `json:"row"` // the row's index in the run
	SourceRow   int      `json:"source_row"`
	Parcel      int      `json:"parcel,omitempty"`
	SeuNumero   string   `json:"seu_numero"` // the row's key (the remessa's seu número)
	UsoEmpresa  string   `json:"uso_empresa,omitempty"`
	NossoNumero string   `json:"nosso_numero,omitempty"` // the service's number of the charge
	ERPNosso    string   `json:"erp_nosso_numero,omitempty"`
	ChargeID    int64    `json:"charge_id,omitempty"`
	Txid        string   `json:"txid,omitempty"`
	Payer       string   `json:"payer,omitempty"`
	PayerDoc    string   `json:"payer_document,omitempty"`
	Due         string   `json:"due,omitempty"`
	Value       int64    `json:"value_cents"`
	Paid        int64    `json:"paid_cents,omitempty"`
	// FineInterest, Discount (without the abatimento) and Abatimento are
	// the terms' split of a payment on its day (reports/conciliacao); Over
	// and Short what was paid above or below what the terms asked.
	FineInterest int64  `json:"fine_interest_cents,omitempty"`
	Discount     int64  `json:"discount_cents,omitempty"`
	Abatimento   int64  `json:"abatimento_cents,omitempty"`
	Over         int64  `json:"over_cents,omitempty"`
	Short        int64  `json:"short_cents,omitempty"`
	Refunded     int64  `json:"refunded_cents,omitempty"`
	Method       string `json:"method,omitempty"`
	Occurred     string `json:"occurred,omitempty"`
	Credit       string `json:"credit,omitempty"`
}
