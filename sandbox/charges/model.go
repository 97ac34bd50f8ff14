package charges

import (
	"time"

	"remessa/rules"
)

var saoPaulo = rules.SaoPaulo

// Charge statuses (real-service.md §1.3).
const (
	StatusNew        = "new"
	StatusWaiting    = "waiting"
	StatusIdentified = "identified"
	StatusApproved   = "approved"
	StatusPaid       = "paid"
	StatusUnpaid     = "unpaid"
	StatusRefunded   = "refunded"
	StatusContested  = "contested"
	StatusCanceled   = "canceled"
	StatusSettled    = "settled"
	StatusLink       = "link"
	StatusExpired    = "expired"
)

// Carnet statuses.
const (
	CarnetUpToDate = "up_to_date"
	CarnetUnpaid   = "unpaid"
	CarnetFinished = "finished"
	CarnetCanceled = "canceled"
)

// Payment methods.
const (
	MethodBillet = "banking_billet"
	MethodCard   = "credit_card"
)

// final reports whether a charge status is final ("resolved").
func final(status string) bool {
	switch status {
	case StatusPaid, StatusContested, StatusRefunded, StatusSettled, StatusCanceled:
		return true
	}
	return false
}

// Item is a charge item.
type Item struct {
	Name        string       `json:"name"`
	Value       int64        `json:"value"`
	Amount      int64        `json:"amount"`
	Marketplace *Marketplace `json:"marketplace,omitempty"`
}

// Marketplace is the split of an item.
type Marketplace struct {
	Mode     int       `json:"mode"`
	Repasses []Repasse `json:"repasses"`
}

// Repasse is one transfer to another account.
type Repasse struct {
	PayeeCode  string `json:"payee_code"`
	Percentage int64  `json:"percentage,omitempty"`
	Fixed      int64  `json:"fixed,omitempty"`
}

// Shipping is a shipping line.
type Shipping struct {
	Name      string `json:"name"`
	Value     int64  `json:"value"`
	PayeeCode string `json:"payee_code,omitempty"`
}

// Address is a postal address.
type Address struct {
	Street       string  `json:"street"`
	Number       string  `json:"number"`
	Neighborhood string  `json:"neighborhood"`
	Zipcode      string  `json:"zipcode"`
	City         string  `json:"city"`
	Complement   *string `json:"complement"`
	State        string  `json:"state"`
}

// JuridicalPerson is a company payer.
type JuridicalPerson struct {
	CorporateName string `json:"corporate_name"`
	CNPJ          string `json:"cnpj"`
}

// Customer is the payer.
type Customer struct {
	Name            string           `json:"name,omitempty"`
	CPF             string           `json:"cpf,omitempty"`
	Email           string           `json:"email,omitempty"`
	PhoneNumber     string           `json:"phone_number,omitempty"`
	Birth           string           `json:"birth,omitempty"`
	Address         *Address         `json:"address,omitempty"`
	JuridicalPerson *JuridicalPerson `json:"juridical_person,omitempty"`
}

// Document returns the payer's CPF or CNPJ (clean).
func (c Customer) Document() string {
	if c.JuridicalPerson != nil && c.JuridicalPerson.CNPJ != "" {
		return c.JuridicalPerson.CNPJ
	}
	return c.CPF
}

// Discount is an unconditional discount: Type "percentage" (Value in
// hundredths of a percent) or "currency" (Value in cents).
type Discount struct {
	Type  string `json:"type"`
	Value int64  `json:"value"`
}

// ConditionalDiscount is a discount valid until UntilDate.
type ConditionalDiscount struct {
	Type      string `json:"type"`
	Value     int64  `json:"value"`
	UntilDate string `json:"until_date"`
}

// Configurations are the slip's fine and interest.
type Configurations struct {
	Fine           int64  `json:"fine"`
	Interest       int64  `json:"interest"`
	DaysToWriteOff *int64 `json:"days_to_write_off,omitempty"`
}

// HistoryEntry is one line of a charge's or carnet's history.
type HistoryEntry struct {
	Message   string    `json:"message"`
	CreatedAt time.Time `json:"created_at"`
}

// Billet is the slip attached to a charge.
type Billet struct {
	Customer            Customer             `json:"customer"`
	ExpireAt            string               `json:"expire_at"`
	Barcode             string               `json:"barcode"`    // 44 digits
	TypedLine           string               `json:"typed_line"` // formatted 47 digits
	BRCode              string               `json:"brcode"`
	QRImage             string               `json:"qrcode_image"`
	Configurations      Configurations       `json:"configurations"`
	Message             string               `json:"message,omitempty"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// Card is the card payment attached to a charge.
type Card struct {
	Customer         Customer  `json:"customer"`
	Installments     int       `json:"installments"`
	InstallmentValue int64     `json:"installment_value"`
	Brand            string    `json:"brand"`
	Mask             string    `json:"mask"`
	BillingAddress   Address   `json:"billing_address"`
	Discount         *Discount `json:"discount,omitempty"`
}

// Payment is the payment form of a charge.
type Payment struct {
	Method    string    `json:"method"`
	CreatedAt time.Time `json:"created_at"`
	Message   string    `json:"message,omitempty"`
	Billet    *Billet   `json:"banking_billet,omitempty"`
	Card      *Card     `json:"credit_card,omitempty"`
}

// Link holds the payment link settings of a charge.
type Link struct {
	Message                string               `json:"message,omitempty"`
	PaymentMethod          string               `json:"payment_method"`
	ExpireAt               string               `json:"expire_at"`
	RequestDeliveryAddress bool                 `json:"request_delivery_address"`
	BilletDiscount         int64                `json:"billet_discount"`
	CardDiscount           int64                `json:"card_discount"`
	ConditionalDiscount    *ConditionalDiscount `json:"conditional_discount,omitempty"`
	Email                  string               `json:"email,omitempty"`
	CreatedAt              time.Time            `json:"created_at"`
}

// Change is one status change of a notification token (GET
// /v1/notification/:token).
type Change struct {
	ID               int          `json:"id"`
	Type             string       `json:"type"`
	CustomID         *string      `json:"custom_id"`
	Status           ChangeStatus `json:"status"`
	Identifiers      Identifiers  `json:"identifiers"`
	CreatedAt        string       `json:"created_at"`
	Value            *int64       `json:"value,omitempty"`
	ReceivedByBankAt string       `json:"received_by_bank_at,omitempty"`
}

// ChangeStatus is the status pair of a Change.
type ChangeStatus struct {
	Current  string  `json:"current"`
	Previous *string `json:"previous"`
}

// Identifiers names the object of a Change.
type Identifiers struct {
	ChargeID int64 `json:"charge_id,omitempty"`
	CarnetID int64 `json:"carnet_id,omitempty"`
}

// Charge is a charge (a standalone one or a carnet parcel) as kept in
// memory and in the store.
type Charge struct {
	ID              int64          `json:"id"`
	Account         string         `json:"account"`
	CarnetID        int64          `json:"carnet_id,omitempty"`
	Parcel          int            `json:"parcel,omitempty"`
	Status          string         `json:"status"`
	Reason          string         `json:"reason,omitempty"`
	Total           int64          `json:"total"`
	CustomID        *string        `json:"custom_id"`
	NotificationURL *string        `json:"notification_url"`
	Items           []Item         `json:"items"`
	Shippings       []Shipping     `json:"shippings,omitempty"`
	CreatedAt       time.Time      `json:"created_at"`
	History         []HistoryEntry `json:"history"`
	Payment         *Payment       `json:"payment,omitempty"`
	Link            *Link          `json:"link,omitempty"`
	ViaLink         bool           `json:"via_link,omitempty"`
	NotifToken      string         `json:"notification_token,omitempty"` // standalone charges only
	DocToken        string         `json:"doc_token"`
	Changes         []Change       `json:"changes,omitempty"` // standalone charges only
	PaidValue       int64          `json:"paid_value,omitempty"`
	PaidAt          time.Time      `json:"paid_at,omitzero"`
	ReceivedByBank  string         `json:"received_by_bank_at,omitempty"`
	RefundedCents   int64          `json:"refunded,omitempty"`
	SettledAt       time.Time      `json:"settled_at,omitzero"`
}

// Carnet is a carnet and its parcels.
type Carnet struct {
	ID                  int64                `json:"id"`
	Account             string               `json:"account"`
	Status              string               `json:"status"`
	Repeats             int                  `json:"repeats"`
	SplitItems          bool                 `json:"split_items"`
	CustomID            *string              `json:"custom_id"`
	NotificationURL     *string              `json:"notification_url"`
	Items               []Item               `json:"items"`
	Customer            Customer             `json:"customer"`
	ExpireAt            string               `json:"expire_at"`
	Configurations      Configurations       `json:"configurations"`
	Message             string               `json:"message,omitempty"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
	Value               int64                `json:"value"`
	CreatedAt           time.Time            `json:"created_at"`
	History             []HistoryEntry       `json:"history"`
	NotifToken          string               `json:"notification_token"`
	DocToken            string               `json:"doc_token"`
	Changes             []Change             `json:"changes"`
	Parcels             []*Charge            `json:"parcels"`
}

// carnetStatus computes a carnet's status from its parcels.
func carnetStatus(c *Carnet) string {
	if c.Status == CarnetCanceled {
		return CarnetCanceled
	}
	allFinal, anyUnpaid := true, false
	for _, p := range c.Parcels {
		if !final(p.Status) {
			allFinal = false
		}
		if p.Status == StatusUnpaid {
			anyUnpaid = true
		}
	}
	switch {
	case allFinal:
		return CarnetFinished
	case anyUnpaid:
		return CarnetUnpaid
	}
	return CarnetUpToDate
}

const (
	timeLayout = "2006-01-02 15:04:05"
	dateLayout = "2006-01-02"
)

// efiTime formats t as the charges API does, in São Paulo time.
func efiTime(t time.Time) string { return t.In(saoPaulo).Format(timeLayout) }
