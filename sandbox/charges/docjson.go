package charges

import (
	"encoding/json"
	"time"

	"remessa/internal/jsonw"
)

// The stored documents (a carnet with its parcels, a standalone charge)
// are written by hand as the answers are (viewjson.go), byte for byte what
// encoding/json writes: a time encoding/json refuses (a year outside
// 0-9999) makes the whole document go through encoding/json, which gives
// the same error. docjson_test.go fills every field by reflection at
// random and compares with encoding/json.

// marshalCarnet is json.Marshal(cn).
func marshalCarnet(cn *Carnet) ([]byte, error) {
	ok := true
	b := appendCarnetDoc(make([]byte, 0, 2048+1536*len(cn.Parcels)), cn, &ok)
	if !ok {
		return json.Marshal(cn)
	}
	return b, nil
}

// marshalChargeDoc is json.Marshal(c).
func marshalChargeDoc(c *Charge) ([]byte, error) {
	ok := true
	b := appendChargeDoc(make([]byte, 0, 2048), c, &ok)
	if !ok {
		return json.Marshal(c)
	}
	return b, nil
}

// appendTime appends t as encoding/json writes it; *ok becomes false
// when encoding/json would refuse it.
func appendTime(b []byte, t time.Time, ok *bool) []byte {
	b, good := jsonw.AppendTime(b, t)
	if !good {
		*ok = false
	}
	return b
}

func appendTimeField(b []byte, key string, t time.Time, ok *bool) []byte {
	return appendTime(appendKey(b, key, false), t, ok)
}

func appendConfigurations(b []byte, c *Configurations) []byte {
	b = appendIntField(b, "fine", c.Fine, true)
	b = appendIntField(b, "interest", c.Interest, false)
	if c.DaysToWriteOff != nil {
		b = appendIntField(b, "days_to_write_off", *c.DaysToWriteOff, false)
	}
	return append(b, '}')
}

func appendDiscount(b []byte, d *Discount) []byte {
	b = appendStrField(b, "type", d.Type, true)
	b = appendIntField(b, "value", d.Value, false)
	return append(b, '}')
}

func appendCondDiscount(b []byte, d *ConditionalDiscount) []byte {
	b = appendStrField(b, "type", d.Type, true)
	b = appendIntField(b, "value", d.Value, false)
	b = appendStrField(b, "until_date", d.UntilDate, false)
	return append(b, '}')
}

func appendHistoryDoc(b []byte, h []HistoryEntry, ok *bool) []byte {
	return jsonw.AppendArray(b, h, func(b []byte, e *HistoryEntry) []byte {
		b = appendStrField(b, "message", e.Message, true)
		b = appendTimeField(b, "created_at", e.CreatedAt, ok)
		return append(b, '}')
	})
}

func appendChanges(b []byte, cs []Change) []byte {
	return jsonw.AppendArray(b, cs, appendChange)
}

func appendChange(b []byte, c *Change) []byte {
	b = appendIntField(b, "id", int64(c.ID), true)
	b = appendStrField(b, "type", c.Type, false)
	b = appendStrPtrField(b, "custom_id", c.CustomID)
	b = appendKey(b, "status", false)
	b = appendStrField(b, "current", c.Status.Current, true)
	b = appendStrPtrField(b, "previous", c.Status.Previous)
	b = append(b, '}')
	b = appendKey(b, "identifiers", false)
	switch id := c.Identifiers; {
	case id.ChargeID != 0:
		b = appendIntField(b, "charge_id", id.ChargeID, true)
		if id.CarnetID != 0 {
			b = appendIntField(b, "carnet_id", id.CarnetID, false)
		}
		b = append(b, '}')
	case id.CarnetID != 0:
		b = appendIntField(b, "carnet_id", id.CarnetID, true)
		b = append(b, '}')
	default:
		b = append(b, "{}"...)
	}
	b = appendStrField(b, "created_at", c.CreatedAt, false)
	if c.Value != nil {
		b = appendIntField(b, "value", *c.Value, false)
	}
	if c.ReceivedByBankAt != "" {
		b = appendStrField(b, "received_by_bank_at", c.ReceivedByBankAt, false)
	}
	return append(b, '}')
}

func appendCarnetDoc(b []byte, cn *Carnet, ok *bool) []byte {
	b = appendIntField(b, "id", cn.ID, true)
	b = appendStrField(b, "account", cn.Account, false)
	b = appendStrField(b, "status", cn.Status, false)
	b = appendIntField(b, "repeats", int64(cn.Repeats), false)
	b = appendBoolField(b, "split_items", cn.SplitItems)
	b = appendStrPtrField(b, "custom_id", cn.CustomID)
	b = appendStrPtrField(b, "notification_url", cn.NotificationURL)
	b = appendKey(b, "items", false)
	b = appendItems(b, cn.Items)
	b = appendKey(b, "customer", false)
	b = appendCustomer(b, &cn.Customer)
	b = appendStrField(b, "expire_at", cn.ExpireAt, false)
	b = appendKey(b, "configurations", false)
	b = appendConfigurations(b, &cn.Configurations)
	if cn.Message != "" {
		b = appendStrField(b, "message", cn.Message, false)
	}
	if cn.Discount != nil {
		b = appendDiscount(appendKey(b, "discount", false), cn.Discount)
	}
	if cn.ConditionalDiscount != nil {
		b = appendCondDiscount(appendKey(b, "conditional_discount", false), cn.ConditionalDiscount)
	}
	b = appendIntField(b, "value", cn.Value, false)
	b = appendTimeField(b, "created_at", cn.CreatedAt, ok)
	b = appendKey(b, "history", false)
	b = appendHistoryDoc(b, cn.History, ok)
	b = appendStrField(b, "notification_token", cn.NotifToken, false)
	b = appendStrField(b, "doc_token", cn.DocToken, false)
	b = appendKey(b, "changes", false)
	b = appendChanges(b, cn.Changes)
	b = appendKey(b, "parcels", false)
	b = jsonw.AppendArray(b, cn.Parcels, func(b []byte, p **Charge) []byte {
		if *p == nil {
			return append(b, "null"...)
		}
		return appendChargeDoc(b, *p, ok)
	})
	return append(b, '}')
}

func appendChargeDoc(b []byte, c *Charge, ok *bool) []byte {
	b = appendIntField(b, "id", c.ID, true)
	b = appendStrField(b, "account", c.Account, false)
	if c.CarnetID != 0 {
		b = appendIntField(b, "carnet_id", c.CarnetID, false)
	}
	if c.Parcel != 0 {
		b = appendIntField(b, "parcel", int64(c.Parcel), false)
	}
	b = appendStrField(b, "status", c.Status, false)
	if c.Reason != "" {
		b = appendStrField(b, "reason", c.Reason, false)
	}
	b = appendIntField(b, "total", c.Total, false)
	b = appendStrPtrField(b, "custom_id", c.CustomID)
	b = appendStrPtrField(b, "notification_url", c.NotificationURL)
	b = appendKey(b, "items", false)
	b = appendItems(b, c.Items)
	if len(c.Shippings) > 0 {
		b = appendKey(b, "shippings", false)
		b = appendShippings(b, c.Shippings)
	}
	b = appendTimeField(b, "created_at", c.CreatedAt, ok)
	b = appendKey(b, "history", false)
	b = appendHistoryDoc(b, c.History, ok)
	if p := c.Payment; p != nil {
		b = appendKey(b, "payment", false)
		b = appendStrField(b, "method", p.Method, true)
		b = appendTimeField(b, "created_at", p.CreatedAt, ok)
		if p.Message != "" {
			b = appendStrField(b, "message", p.Message, false)
		}
		if bl := p.Billet; bl != nil {
			b = appendKey(b, "banking_billet", false)
			b = appendKey(b, "customer", true)
			b = appendCustomer(b, &bl.Customer)
			b = appendStrField(b, "expire_at", bl.ExpireAt, false)
			b = appendStrField(b, "barcode", bl.Barcode, false)
			b = appendStrField(b, "typed_line", bl.TypedLine, false)
			b = appendStrField(b, "brcode", bl.BRCode, false)
			b = appendStrField(b, "qrcode_image", bl.QRImage, false)
			b = appendKey(b, "configurations", false)
			b = appendConfigurations(b, &bl.Configurations)
			if bl.Message != "" {
				b = appendStrField(b, "message", bl.Message, false)
			}
			if bl.Discount != nil {
				b = appendDiscount(appendKey(b, "discount", false), bl.Discount)
			}
			if bl.ConditionalDiscount != nil {
				b = appendCondDiscount(appendKey(b, "conditional_discount", false), bl.ConditionalDiscount)
			}
			b = append(b, '}')
		}
		if k := p.Card; k != nil {
			b = appendKey(b, "credit_card", false)
			b = appendKey(b, "customer", true)
			b = appendCustomer(b, &k.Customer)
			b = appendIntField(b, "installments", int64(k.Installments), false)
			b = appendIntField(b, "installment_value", k.InstallmentValue, false)
			b = appendStrField(b, "brand", k.Brand, false)
			b = appendStrField(b, "mask", k.Mask, false)
			b = appendKey(b, "billing_address", false)
			b = appendAddress(b, &k.BillingAddress)
			if k.Discount != nil {
				b = appendDiscount(appendKey(b, "discount", false), k.Discount)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if l := c.Link; l != nil {
		b = appendKey(b, "link", false)
		first := true
		if l.Message != "" {
			b = appendStrField(b, "message", l.Message, true)
			first = false
		}
		b = appendStrField(b, "payment_method", l.PaymentMethod, first)
		b = appendStrField(b, "expire_at", l.ExpireAt, false)
		b = appendBoolField(b, "request_delivery_address", l.RequestDeliveryAddress)
		b = appendIntField(b, "billet_discount", l.BilletDiscount, false)
		b = appendIntField(b, "card_discount", l.CardDiscount, false)
		if l.ConditionalDiscount != nil {
			b = appendCondDiscount(appendKey(b, "conditional_discount", false), l.ConditionalDiscount)
		}
		if l.Email != "" {
			b = appendStrField(b, "email", l.Email, false)
		}
		b = appendTimeField(b, "created_at", l.CreatedAt, ok)
		b = append(b, '}')
	}
	if c.ViaLink {
		b = appendBoolField(b, "via_link", true)
	}
	if c.NotifToken != "" {
		b = appendStrField(b, "notification_token", c.NotifToken, false)
	}
	b = appendStrField(b, "doc_token", c.DocToken, false)
	if len(c.Changes) > 0 {
		b = appendKey(b, "changes", false)
		b = appendChanges(b, c.Changes)
	}
	if c.PaidValue != 0 {
		b = appendIntField(b, "paid_value", c.PaidValue, false)
	}
	if !c.PaidAt.IsZero() {
		b = appendTimeField(b, "paid_at", c.PaidAt, ok)
	}
	if c.ReceivedByBank != "" {
		b = appendStrField(b, "received_by_bank_at", c.ReceivedByBank, false)
	}
	if c.RefundedCents != 0 {
		b = appendIntField(b, "refunded", c.RefundedCents, false)
	}
	if !c.SettledAt.IsZero() {
		b = appendTimeField(b, "settled_at", c.SettledAt, ok)
	}
	return append(b, '}')
}

// appendShippings appends a non-empty list of shippings.
func appendShippings(b []byte, ss []Shipping) []byte {
	return jsonw.AppendArray(b, ss, func(b []byte, s *Shipping) []byte {
		b = appendStrField(b, "name", s.Name, true)
		b = appendIntField(b, "value", s.Value, false)
		if s.PayeeCode != "" {
			b = appendStrField(b, "payee_code", s.PayeeCode, false)
		}
		return append(b, '}')
	})
}
