package charges

import (
	"strconv"
)

// Response shapes. Links are built from the request's base URL at answer
// time (see docs/charges-api.md for the paths).

type pixOut struct {
	QRCode      string `json:"qrcode"`
	QRCodeImage string `json:"qrcode_image"`
}

type pdfCharge struct {
	Charge string `json:"charge"`
}

type configOut struct {
	Interest       int64  `json:"interest"`
	Fine           int64  `json:"fine"`
	DaysToWriteOff *int64 `json:"days_to_write_off,omitempty"`
}

func chargeLink(base, tok string) string  { return base + "/v1/documents/charge/" + tok + "/link" }
func billetLink(base, tok string) string  { return base + "/v1/documents/charge/" + tok + "/billet" }
func chargePDF(base, tok string) string   { return base + "/v1/documents/charge/" + tok + "/pdf" }
func paymentURL(base, tok string) string  { return base + "/v1/documents/link/" + tok }
func carnetLink(base, tok string) string  { return base + "/v1/documents/carnet/" + tok + "/link" }
func carnetCover(base, tok string) string { return base + "/v1/documents/carnet/" + tok + "/cover" }
func carnetPDF(base, tok string) string   { return base + "/v1/documents/carnet/" + tok + "/pdf" }
func coverPDF(base, tok string) string    { return base + "/v1/documents/carnet/" + tok + "/cover/pdf" }

type createResult struct {
	ChargeID  int64   `json:"charge_id"`
	Status    string  `json:"status"`
	Total     int64   `json:"total"`
	CustomID  *string `json:"custom_id"`
	CreatedAt string  `json:"created_at"`
}

func createView(c *Charge) createResult {
	return createResult{ChargeID: c.ID, Status: c.Status, Total: c.Total, CustomID: c.CustomID, CreatedAt: efiTime(c.CreatedAt)}
}

type slipResult struct {
	Barcode    string    `json:"barcode"`
	Pix        pixOut    `json:"pix"`
	Link       string    `json:"link"`
	BilletLink string    `json:"billet_link"`
	PDF        pdfCharge `json:"pdf"`
	ExpireAt   string    `json:"expire_at"`
	ChargeID   int64     `json:"charge_id"`
	Status     string    `json:"status"`
	Total      int64     `json:"total"`
	Payment    string    `json:"payment"`
	CustomID   *string   `json:"custom_id"`
}

type cardResult struct {
	Installments     int     `json:"installments"`
	InstallmentValue int64   `json:"installment_value"`
	ChargeID         int64   `json:"charge_id"`
	Status           string  `json:"status"`
	Reason           string  `json:"reason,omitempty"`
	Total            int64   `json:"total"`
	Payment          string  `json:"payment"`
	CustomID         *string `json:"custom_id"`
}

// paymentView is the answer of pay, one-step and retry.
func paymentView(c *Charge, base string) any {
	if c.Payment != nil && c.Payment.Card != nil {
		k := c.Payment.Card
		return cardResult{Installments: k.Installments, InstallmentValue: k.InstallmentValue, ChargeID: c.ID,
			Status: c.Status, Reason: c.Reason, Total: c.Total, Payment: MethodCard, CustomID: c.CustomID}
	}
	b := c.Payment.Billet
	return slipResult{Barcode: b.TypedLine, Pix: pixOut{b.BRCode, b.QRImage}, Link: chargeLink(base, c.DocToken),
		BilletLink: billetLink(base, c.DocToken), PDF: pdfCharge{chargePDF(base, c.DocToken)}, ExpireAt: b.ExpireAt,
		ChargeID: c.ID, Status: c.Status, Total: c.Total, Payment: MethodBillet, CustomID: c.CustomID}
}

type linkResult struct {
	ChargeID                 int64   `json:"charge_id"`
	Status                   string  `json:"status"`
	Total                    int64   `json:"total"`
	CustomID                 *string `json:"custom_id"`
	PaymentURL               string  `json:"payment_url"`
	PaymentMethod            string  `json:"payment_method"`
	BilletDiscount           int64   `json:"billet_discount"`
	CardDiscount             int64   `json:"card_discount"`
	ConditionalDiscountValue *int64  `json:"conditional_discount_value"`
	ConditionalDiscountType  *string `json:"conditional_discount_type"`
	ConditionalDiscountDate  *string `json:"conditional_discount_date"`
	RequestDeliveryAddress   bool    `json:"request_delivery_address"`
	Message                  *string `json:"message"`
	ExpireAt                 string  `json:"expire_at"`
	CreatedAt                string  `json:"created_at"`
}

func linkView(c *Charge, base string) linkResult {
	l := c.Link
	out := linkResult{ChargeID: c.ID, Status: c.Status, Total: c.Total, CustomID: c.CustomID,
		PaymentURL: paymentURL(base, c.DocToken), PaymentMethod: l.PaymentMethod, BilletDiscount: l.BilletDiscount,
		CardDiscount: l.CardDiscount, RequestDeliveryAddress: l.RequestDeliveryAddress, ExpireAt: l.ExpireAt,
		CreatedAt: efiTime(l.CreatedAt)}
	if cd := l.ConditionalDiscount; cd != nil {
		out.ConditionalDiscountValue, out.ConditionalDiscountType, out.ConditionalDiscountDate = ptr(cd.Value), ptr(cd.Type), ptr(cd.UntilDate)
	}
	if l.Message != "" {
		out.Message = ptr(l.Message)
	}
	return out
}

type historyOut struct {
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
}

func historyView(h []HistoryEntry) []historyOut {
	out := make([]historyOut, len(h))
	for i, e := range h {
		out[i] = historyOut{e.Message, efiTime(e.CreatedAt)}
	}
	return out
}

type billetOut struct {
	Barcode             string               `json:"barcode"`
	Pix                 pixOut               `json:"pix"`
	Link                string               `json:"link"`
	BilletLink          string               `json:"billet_link"`
	PDF                 pdfCharge            `json:"pdf"`
	ExpireAt            string               `json:"expire_at"`
	Configurations      configOut            `json:"configurations"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

type cardOut struct {
	Mask             string  `json:"mask"`
	Installments     int     `json:"installments"`
	InstallmentValue int64   `json:"installment_value"`
	Address          Address `json:"address"`
}

type carnetRef struct {
	CarnetID int64 `json:"carnet_id"`
	Parcel   int   `json:"parcel"`
}

type paymentOut struct {
	Method        string     `json:"method"`
	CreatedAt     string     `json:"created_at"`
	Message       *string    `json:"message"`
	BankingBillet *billetOut `json:"banking_billet,omitempty"`
	CreditCard    *cardOut   `json:"credit_card,omitempty"`
	Carnet        *carnetRef `json:"carnet,omitempty"`
	PaidAt        string     `json:"paid_at,omitempty"`
	PaidValue     int64      `json:"paid_value,omitempty"`
}

type chargeOut struct {
	ChargeID        int64        `json:"charge_id"`
	Total           int64        `json:"total"`
	Status          string       `json:"status"`
	Reason          string       `json:"reason,omitempty"`
	CustomID        *string      `json:"custom_id"`
	CreatedAt       string       `json:"created_at"`
	NotificationURL *string      `json:"notification_url"`
	Items           []Item       `json:"items"`
	History         []historyOut `json:"history"`
	Shippings       []Shipping   `json:"shippings,omitempty"`
	Customer        *Customer    `json:"customer,omitempty"`
	Payment         *paymentOut  `json:"payment,omitempty"`
	Link            *linkResult  `json:"link,omitempty"`
}

// chargeCustomer is the payer as far as the charge knows it.
func chargeCustomer(c *Charge, cn *Carnet) *Customer {
	switch {
	case cn != nil:
		return &cn.Customer
	case c.Payment != nil && c.Payment.Billet != nil:
		return &c.Payment.Billet.Customer
	case c.Payment != nil && c.Payment.Card != nil:
		return &c.Payment.Card.Customer
	case c.Link != nil && c.Link.Email != "":
		return &Customer{Email: c.Link.Email}
	}
	return nil
}

func billetView(c *Charge, b *Billet, base string) *billetOut {
	return &billetOut{Barcode: b.TypedLine, Pix: pixOut{b.BRCode, b.QRImage}, Link: chargeLink(base, c.DocToken),
		BilletLink: billetLink(base, c.DocToken), PDF: pdfCharge{chargePDF(base, c.DocToken)}, ExpireAt: b.ExpireAt,
		Configurations: configOut{b.Configurations.Interest, b.Configurations.Fine, b.Configurations.DaysToWriteOff},
		Discount:       b.Discount, ConditionalDiscount: b.ConditionalDiscount}
}

// chargeView is GET /v1/charge/:id. cn is the carnet of a parcel.
func chargeView(c *Charge, cn *Carnet, base string) chargeOut {
	out := chargeOut{ChargeID: c.ID, Total: c.Total, Status: c.Status, Reason: c.Reason, CustomID: c.CustomID,
		CreatedAt: efiTime(c.CreatedAt), NotificationURL: c.NotificationURL, Items: c.Items,
		History: historyView(c.History), Shippings: c.Shippings, Customer: chargeCustomer(c, cn)}
	if cn != nil {
		out.CustomID, out.NotificationURL = cn.CustomID, cn.NotificationURL
	}
	if out.Items == nil {
		out.Items = []Item{}
	}
	if p := c.Payment; p != nil {
		po := &paymentOut{Method: p.Method, CreatedAt: efiTime(p.CreatedAt)}
		if p.Message != "" {
			po.Message = ptr(p.Message)
		}
		if p.Billet != nil {
			po.BankingBillet = billetView(c, p.Billet, base)
		}
		if p.Card != nil {
			po.CreditCard = &cardOut{Mask: p.Card.Mask, Installments: p.Card.Installments,
				InstallmentValue: p.Card.InstallmentValue, Address: p.Card.BillingAddress}
		}
		if c.CarnetID != 0 {
			po.Carnet = &carnetRef{CarnetID: c.CarnetID, Parcel: c.Parcel}
		}
		if !c.PaidAt.IsZero() {
			po.PaidAt = efiTime(c.PaidAt)
			po.PaidValue = c.PaidValue
		}
		out.Payment = po
	}
	if c.Link != nil {
		lv := linkView(c, base)
		out.Link = &lv
	}
	return out
}

// --- carnets ---

type parcelOut struct {
	ChargeID       int64     `json:"charge_id"`
	Parcel         any       `json:"parcel"` // string on creation, integer on query
	Status         string    `json:"status"`
	Value          int64     `json:"value"`
	ExpireAt       string    `json:"expire_at"`
	URL            string    `json:"url"`
	ParcelLink     string    `json:"parcel_link,omitempty"`
	PDF            pdfCharge `json:"pdf"`
	Barcode        string    `json:"barcode"`
	Pix            *pixOut   `json:"pix,omitempty"`
	Configurations configOut `json:"configurations"`
}

type carnetPDFOut struct {
	Carnet string `json:"carnet"`
	Cover  string `json:"cover"`
}

type carnetOut struct {
	CarnetID        int64        `json:"carnet_id"`
	Status          string       `json:"status"`
	Repeats         int          `json:"repeats"`
	Cover           string       `json:"cover"`
	Link            string       `json:"link"`
	CarnetLink      string       `json:"carnet_link,omitempty"`
	PDF             carnetPDFOut `json:"pdf"`
	Value           int64        `json:"value"`
	CustomID        *string      `json:"custom_id"`
	NotificationURL *string      `json:"notification_url"`
	SplitItems      bool         `json:"split_items"`
	Charges         []parcelOut  `json:"charges"`
	CreatedAt       string       `json:"created_at"`
	History         []historyOut `json:"history"`
}

func carnetView(cn *Carnet, base string, creation bool) carnetOut {
	out := carnetOut{CarnetID: cn.ID, Status: cn.Status, Repeats: cn.Repeats, Cover: carnetCover(base, cn.DocToken),
		Link: carnetLink(base, cn.DocToken), PDF: carnetPDFOut{carnetPDF(base, cn.DocToken), coverPDF(base, cn.DocToken)},
		Value: cn.Value, CustomID: cn.CustomID, NotificationURL: cn.NotificationURL, SplitItems: cn.SplitItems,
		CreatedAt: efiTime(cn.CreatedAt), History: historyView(cn.History)}
	if creation {
		out.CarnetLink = out.Link
	}
	out.Charges = make([]parcelOut, len(cn.Parcels))
	for i, p := range cn.Parcels {
		b := p.Payment.Billet
		po := parcelOut{ChargeID: p.ID, Parcel: p.Parcel, Status: p.Status, Value: p.Total, ExpireAt: b.ExpireAt,
			URL: chargeLink(base, p.DocToken), PDF: pdfCharge{chargePDF(base, p.DocToken)}, Barcode: b.TypedLine,
			Pix: &pixOut{b.BRCode, b.QRImage}, Configurations: configOut{Interest: b.Configurations.Interest, Fine: b.Configurations.Fine}}
		if creation {
			po.Parcel = itoa(p.Parcel)
			po.ParcelLink = po.URL
		}
		out.Charges[i] = po
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
