package api

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Charges API (/v1) request and response types. Money is int64 cents,
// dates "YYYY-MM-DD", timestamps "YYYY-MM-DD HH:MM:SS" as the service
// sends them.

// Item is a charge item.
type Item struct {
	Name        string       `json:"name"`
	Value       int64        `json:"value"`            // unit value, cents
	Amount      int64        `json:"amount,omitempty"` // quantity; 0 = 1
	Marketplace *Marketplace `json:"marketplace,omitempty"`
}

// Marketplace is the split of an item between accounts.
type Marketplace struct {
	Mode     int       `json:"mode,omitempty"` // 1 or 2; 0 = service default (2)
	Repasses []Repasse `json:"repasses"`
}

// Repasse sends part of an item to another account: Percentage in
// hundredths of a percent (2500 = 25%) or Fixed in cents.
type Repasse struct {
	PayeeCode  string `json:"payee_code"`
	Percentage int64  `json:"percentage,omitempty"`
	Fixed      int64  `json:"fixed,omitempty"`
}

// Shipping is a shipping line; with PayeeCode its whole value goes to that
// account.
type Shipping struct {
	Name      string `json:"name"`
	Value     int64  `json:"value"`
	PayeeCode string `json:"payee_code,omitempty"`
}

// Metadata is set at creation.
type Metadata struct {
	CustomID        string `json:"custom_id,omitempty"`
	NotificationURL string `json:"notification_url,omitempty"`
}

// MetadataUpdate changes the fields that are not nil; an empty string
// clears a field.
type MetadataUpdate struct {
	CustomID        *string `json:"custom_id,omitempty"`
	NotificationURL *string `json:"notification_url,omitempty"`
}

// Address is a postal address.
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

// Discount: Type "percentage" (Value in hundredths of a percent) or
// "currency" (Value in cents).
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

// Configurations are a slip's fine (200 = 2%), daily interest (33 =
// 0.033%) and days_to_write_off (one-step slips only).
type Configurations struct {
	Fine           int64  `json:"fine"`
	Interest       int64  `json:"interest"`
	DaysToWriteOff *int64 `json:"days_to_write_off,omitempty"`
}

// BankingBillet is the slip payment form.
type BankingBillet struct {
	Customer            Customer             `json:"customer"`
	ExpireAt            string               `json:"expire_at"`
	Configurations      *Configurations      `json:"configurations,omitempty"`
	Message             string               `json:"message,omitempty"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// CreditCard is the card payment form.
type CreditCard struct {
	Customer       Customer  `json:"customer"`
	Installments   int       `json:"installments,omitempty"`
	PaymentToken   string    `json:"payment_token"`
	BillingAddress Address   `json:"billing_address"`
	Discount       *Discount `json:"discount,omitempty"`
	Message        string    `json:"message,omitempty"`
}

// Payment holds exactly one payment form.
type Payment struct {
	BankingBillet *BankingBillet `json:"banking_billet,omitempty"`
	CreditCard    *CreditCard    `json:"credit_card,omitempty"`
}

// ChargeRequest is the body of POST /v1/charge.
type ChargeRequest struct {
	Items     []Item     `json:"items"`
	Shippings []Shipping `json:"shippings,omitempty"`
	Metadata  *Metadata  `json:"metadata,omitempty"`
}

// OneStepRequest is the body of POST /v1/charge/one-step.
type OneStepRequest struct {
	Items     []Item     `json:"items"`
	Shippings []Shipping `json:"shippings,omitempty"`
	Metadata  *Metadata  `json:"metadata,omitempty"`
	Payment   Payment    `json:"payment"`
}

// LinkSettings are the settings of a payment link; on update only the
// fields set are changed.
type LinkSettings struct {
	Message                string               `json:"message,omitempty"`
	PaymentMethod          string               `json:"payment_method,omitempty"` // banking_billet, credit_card or all
	ExpireAt               string               `json:"expire_at,omitempty"`
	RequestDeliveryAddress *bool                `json:"request_delivery_address,omitempty"`
	BilletDiscount         *int64               `json:"billet_discount,omitempty"`
	CardDiscount           *int64               `json:"card_discount,omitempty"`
	ConditionalDiscount    *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// LinkCustomer is the payer of a one-step link.
type LinkCustomer struct {
	Email string `json:"email,omitempty"`
}

// OneStepLinkRequest is the body of POST /v1/charge/one-step/link.
type OneStepLinkRequest struct {
	Items     []Item        `json:"items"`
	Shippings []Shipping    `json:"shippings,omitempty"`
	Metadata  *Metadata     `json:"metadata,omitempty"`
	Customer  *LinkCustomer `json:"customer,omitempty"`
	Settings  LinkSettings  `json:"settings"`
}

// CardRetry is the body of POST /v1/charge/:id/retry.
type CardRetry struct {
	Customer       Customer `json:"customer"`
	BillingAddress Address  `json:"billing_address"`
	PaymentToken   string   `json:"payment_token"`
	Installments   int      `json:"installments,omitempty"`
}

// ChargeCreated is the answer of POST /v1/charge.
type ChargeCreated struct {
	ChargeID  int64   `json:"charge_id"`
	Status    string  `json:"status"`
	Total     int64   `json:"total"`
	CustomID  *string `json:"custom_id"`
	CreatedAt string  `json:"created_at"`
}

// PixCode is the Pix copy-and-paste code and its QR image (data URI).
type PixCode struct {
	QRCode      string `json:"qrcode"`
	QRCodeImage string `json:"qrcode_image"`
}

// PDFLink is the PDF of a charge.
type PDFLink struct {
	Charge string `json:"charge"`
}

// PaymentResult is the answer of pay, one-step and retry: slip fields for
// banking_billet, card fields for credit_card (Payment says which).
type PaymentResult struct {
	ChargeID int64   `json:"charge_id"`
	Status   string  `json:"status"`
	Total    int64   `json:"total"`
	Payment  string  `json:"payment"`
	CustomID *string `json:"custom_id"`
	// Slip.
	Barcode    string   `json:"barcode,omitempty"` // typed line
	Pix        *PixCode `json:"pix,omitempty"`
	Link       string   `json:"link,omitempty"`
	BilletLink string   `json:"billet_link,omitempty"`
	PDF        *PDFLink `json:"pdf,omitempty"`
	ExpireAt   string   `json:"expire_at,omitempty"`
	// Card.
	Installments     int    `json:"installments,omitempty"`
	InstallmentValue int64  `json:"installment_value,omitempty"`
	Reason           string `json:"reason,omitempty"` // refusal reason (status unpaid)
}

// LinkResult is the answer of the payment link routes.
type LinkResult struct {
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

// History is one history line.
type History struct {
	Message   string `json:"message"`
	CreatedAt string `json:"created_at"`
}

// BilletInfo is the slip of a queried charge.
type BilletInfo struct {
	Barcode             string               `json:"barcode"` // typed line
	Pix                 PixCode              `json:"pix"`
	Link                string               `json:"link"`
	BilletLink          string               `json:"billet_link"`
	PDF                 PDFLink              `json:"pdf"`
	ExpireAt            string               `json:"expire_at"`
	Configurations      Configurations       `json:"configurations"`
	Discount            *Discount            `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount `json:"conditional_discount,omitempty"`
}

// CardInfo is the card payment of a queried charge.
type CardInfo struct {
	Mask             string  `json:"mask"`
	Installments     int     `json:"installments"`
	InstallmentValue int64   `json:"installment_value"`
	Address          Address `json:"address"`
}

// CarnetRef tells which carnet parcel a charge is.
type CarnetRef struct {
	CarnetID int64 `json:"carnet_id"`
	Parcel   int   `json:"parcel"`
}

// ChargePayment is the payment of a queried charge.
type ChargePayment struct {
	Method        string      `json:"method"`
	CreatedAt     string      `json:"created_at"`
	Message       *string     `json:"message"`
	BankingBillet *BilletInfo `json:"banking_billet,omitempty"`
	CreditCard    *CardInfo   `json:"credit_card,omitempty"`
	Carnet        *CarnetRef  `json:"carnet,omitempty"`
	PaidAt        string      `json:"paid_at,omitempty"`
	PaidValue     int64       `json:"paid_value,omitempty"`
}

// Charge is the answer of GET /v1/charge/:id.
type Charge struct {
	ChargeID        int64          `json:"charge_id"`
	Total           int64          `json:"total"`
	Status          string         `json:"status"`
	Reason          string         `json:"reason,omitempty"`
	CustomID        *string        `json:"custom_id"`
	CreatedAt       string         `json:"created_at"`
	NotificationURL *string        `json:"notification_url"`
	Items           []Item         `json:"items"`
	History         []History      `json:"history"`
	Shippings       []Shipping     `json:"shippings,omitempty"`
	Customer        *Customer      `json:"customer,omitempty"`
	Payment         *ChargePayment `json:"payment,omitempty"`
	Link            *LinkResult    `json:"link,omitempty"`
}

// ChargeListQuery filters GET /v1/charges. ChargeType (billet, card,
// carnet or subscription), BeginDate and EndDate are required.
type ChargeListQuery struct {
	ChargeType       string
	BeginDate        string
	EndDate          string
	Status           string
	DateOf           string // creation (default), payment or expired
	CustomerDocument string
	CustomID         string
	Value            *int64
	Limit            int // 0 = service default (100)
	Page             int // 1-based; 0 = 1
}

// ChargeSummary is one charge of a list.
type ChargeSummary struct {
	ID        int64   `json:"id"`
	Total     int64   `json:"total"`
	Status    string  `json:"status"`
	CustomID  *string `json:"custom_id"`
	CreatedAt string  `json:"created_at"`
	Customer  *struct {
		Name          string `json:"name,omitempty"`
		CPF           string `json:"cpf,omitempty"`
		CorporateName string `json:"corporate_name,omitempty"`
		CNPJ          string `json:"cnpj,omitempty"`
		PhoneNumber   string `json:"phone_number,omitempty"`
		Email         string `json:"email,omitempty"`
	} `json:"customer,omitempty"`
	Payment *struct {
		PaymentMethod    string `json:"payment_method"`
		PaidAt           string `json:"paid_at,omitempty"`
		ReceivedByBankAt string `json:"received_by_bank_at,omitempty"`
		PaidValue        int64  `json:"paid_value,omitempty"`
		BankingBillet    *struct {
			Barcode        string         `json:"barcode"`
			ExpireAt       string         `json:"expire_at"`
			Link           string         `json:"link"`
			PDF            PDFLink        `json:"pdf"`
			Configurations Configurations `json:"configurations"`
		} `json:"banking_billet,omitempty"`
		CreditCard *struct {
			Installments     int    `json:"installments"`
			InstallmentValue int64  `json:"installment_value"`
			Mask             string `json:"mask"`
		} `json:"credit_card,omitempty"`
		Carnet *struct {
			CarnetID       int64          `json:"carnet_id"`
			Parcel         int            `json:"parcel"`
			Barcode        string         `json:"barcode"`
			ExpireAt       string         `json:"expire_at"`
			Link           string         `json:"link"`
			Configurations Configurations `json:"configurations"`
		} `json:"carnet,omitempty"`
	} `json:"payment,omitempty"`
	Link *struct {
		PaymentURL    string `json:"payment_url"`
		PaymentMethod string `json:"payment_method"`
		ExpireAt      string `json:"expire_at"`
	} `json:"link,omitempty"`
}

// ChargeList is the answer of GET /v1/charges.
type ChargeList struct {
	Code   int             `json:"code"`
	Data   []ChargeSummary `json:"data"`
	Params struct {
		BeginDate  string `json:"begin_date"`
		EndDate    string `json:"end_date"`
		Pagination struct {
			Limit  int `json:"limit"`
			Offset int `json:"offset"`
			Page   int `json:"page"`
			Total  int `json:"total"`
		} `json:"pagination"`
	} `json:"params"`
}

// NotificationChange is one status change of GET /v1/notification/:token.
type NotificationChange struct {
	ID       int     `json:"id"`
	Type     string  `json:"type"` // charge, carnet, carnet_charge, ...
	CustomID *string `json:"custom_id"`
	Status   struct {
		Current  string  `json:"current"`
		Previous *string `json:"previous"`
	} `json:"status"`
	Identifiers struct {
		ChargeID int64 `json:"charge_id,omitempty"`
		CarnetID int64 `json:"carnet_id,omitempty"`
	} `json:"identifiers"`
	CreatedAt        string `json:"created_at"`
	Value            *int64 `json:"value,omitempty"`
	ReceivedByBankAt string `json:"received_by_bank_at,omitempty"`
}

// ParcelNumber is a parcel number the service sends as a string on
// creation and as an integer on query.
type ParcelNumber int

// UnmarshalJSON accepts 3 and "3".
func (p *ParcelNumber) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err == nil {
		*p = ParcelNumber(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("parcel: want a number, got %s", b)
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("parcel: want a number, got %q", s)
	}
	*p = ParcelNumber(n)
	return nil
}

// CarnetConfigurations are a carnet's fine and interest.
type CarnetConfigurations struct {
	Fine     int64 `json:"fine"`
	Interest int64 `json:"interest"`
}

// CarnetRequest is the body of POST /v1/carnet.
type CarnetRequest struct {
	Items               []Item                `json:"items"`
	Customer            Customer              `json:"customer"`
	ExpireAt            string                `json:"expire_at"` // first parcel
	Repeats             int                   `json:"repeats"`
	SplitItems          bool                  `json:"split_items,omitempty"`
	Metadata            *Metadata             `json:"metadata,omitempty"`
	Configurations      *CarnetConfigurations `json:"configurations,omitempty"`
	Message             string                `json:"message,omitempty"`
	Discount            *Discount             `json:"discount,omitempty"`
	ConditionalDiscount *ConditionalDiscount  `json:"conditional_discount,omitempty"`
}

// Parcel is one parcel of a carnet.
type Parcel struct {
	ChargeID       int64          `json:"charge_id"`
	Parcel         ParcelNumber   `json:"parcel"`
	Status         string         `json:"status"`
	Value          int64          `json:"value"`
	ExpireAt       string         `json:"expire_at"`
	URL            string         `json:"url"`
	ParcelLink     string         `json:"parcel_link,omitempty"`
	PDF            PDFLink        `json:"pdf"`
	Barcode        string         `json:"barcode"` // typed line
	Pix            *PixCode       `json:"pix,omitempty"`
	Configurations Configurations `json:"configurations"`
}

// Carnet is the answer of POST /v1/carnet and GET /v1/carnet/:id.
type Carnet struct {
	CarnetID   int64  `json:"carnet_id"`
	Status     string `json:"status"`
	Repeats    int    `json:"repeats"`
	Cover      string `json:"cover"`
	Link       string `json:"link"`
	CarnetLink string `json:"carnet_link,omitempty"`
	PDF        struct {
		Carnet string `json:"carnet"`
		Cover  string `json:"cover"`
	} `json:"pdf"`
	Value           int64     `json:"value"`
	CustomID        *string   `json:"custom_id"`
	NotificationURL *string   `json:"notification_url"`
	SplitItems      bool      `json:"split_items"`
	Charges         []Parcel  `json:"charges"`
	CreatedAt       string    `json:"created_at"`
	History         []History `json:"history"`
}

// ParcelDue is one item of PUT /v1/carnet/:id/parcels.
type ParcelDue struct {
	Parcel   int    `json:"parcel"`
	ExpireAt string `json:"expire_at"`
}
