package charges

import (
	"net/http"
	"strconv"
	"sync"

	"remessa/internal/jsonw"
	"remessa/sandbox/httpx"
)

// The answers of GET /v1/charge/:id (chargeOut) and of POST /v1/carnet and
// GET /v1/carnet/:id (carnetOut), the charges API's most frequent ones,
// are written by hand here instead of by encoding/json's reflection. The
// output is byte for byte what encoding/json writes for the same value
// (fields in declaration order, omitempty as encoding/json reads it,
// strings escaped as it escapes them, HTML characters included): a string
// with anything to escape is handed to encoding/json itself
// (jsonw.AppendString), and a value this file does not know (a parcel
// number that is neither a string nor an int) sends the whole answer
// through encoding/json. viewjson_test.go fills every field of every view
// by reflection, at random, and compares with encoding/json: a field added
// to a view and not written here fails it.

// writeV1Data answers 200 {"code":200,"data":data} as httpx.V1Data does;
// app appends data's JSON, or says false when encoding/json must.
func writeV1Data(w http.ResponseWriter, data any, app func([]byte) ([]byte, bool)) {
	bp := viewBufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"code":200,"data":`...)
	b, ok := app(b)
	if !ok {
		viewBufs.Put(bp)
		httpx.V1Data(w, data)
		return
	}
	b = append(b, '}')
	httpx.WriteJSONBytes(w, http.StatusOK, b)
	if cap(b) <= 1<<20 {
		*bp = b[:0]
		viewBufs.Put(bp)
	}
}

// viewBufs holds the buffers answers are written into.
var viewBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

// writeCharge answers GET /v1/charge/:id.
func writeCharge(w http.ResponseWriter, v *chargeOut) {
	writeV1Data(w, v, func(b []byte) ([]byte, bool) { return appendChargeOut(b, v), true })
}

// writeCarnet answers a carnet.
func writeCarnet(w http.ResponseWriter, v *carnetOut) {
	writeV1Data(w, v, func(b []byte) ([]byte, bool) { return appendCarnetOut(b, v) })
}

// appendKey appends `,"key":`, or `{"key":` for the first key of an
// object.
func appendKey(b []byte, key string, first bool) []byte {
	if first {
		b = append(b, '{')
	} else {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

func appendStrField(b []byte, key, v string, first bool) []byte {
	return jsonw.AppendString(appendKey(b, key, first), v)
}

func appendIntField(b []byte, key string, v int64, first bool) []byte {
	return strconv.AppendInt(appendKey(b, key, first), v, 10)
}

func appendStrPtrField(b []byte, key string, v *string) []byte {
	b = appendKey(b, key, false)
	if v == nil {
		return append(b, "null"...)
	}
	return jsonw.AppendString(b, *v)
}

func appendIntPtrField(b []byte, key string, v *int64) []byte {
	b = appendKey(b, key, false)
	if v == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *v, 10)
}

func appendBoolField(b []byte, key string, v bool) []byte {
	b = appendKey(b, key, false)
	return strconv.AppendBool(b, v)
}

func appendChargeOut(b []byte, c *chargeOut) []byte {
	b = appendIntField(b, "charge_id", c.ChargeID, true)
	b = appendIntField(b, "total", c.Total, false)
	b = appendStrField(b, "status", c.Status, false)
	if c.Reason != "" {
		b = appendStrField(b, "reason", c.Reason, false)
	}
	b = appendStrPtrField(b, "custom_id", c.CustomID)
	b = appendStrField(b, "created_at", c.CreatedAt, false)
	b = appendStrPtrField(b, "notification_url", c.NotificationURL)
	b = appendKey(b, "items", false)
	b = appendItems(b, c.Items)
	b = appendKey(b, "history", false)
	b = appendHistory(b, c.History)
	if len(c.Shippings) > 0 {
		b = appendKey(b, "shippings", false)
		b = appendShippings(b, c.Shippings)
	}
	if c.Customer != nil {
		b = appendKey(b, "customer", false)
		b = appendCustomer(b, c.Customer)
	}
	if p := c.Payment; p != nil {
		b = appendKey(b, "payment", false)
		b = appendPaymentOut(b, p)
	}
	if l := c.Link; l != nil {
		b = appendKey(b, "link", false)
		b = appendLinkResult(b, l)
	}
	return append(b, '}')
}

func appendItems(b []byte, items []Item) []byte {
	return jsonw.AppendArray(b, items, appendItem)
}

func appendItem(b []byte, it *Item) []byte {
	b = appendStrField(b, "name", it.Name, true)
	b = appendIntField(b, "value", it.Value, false)
	b = appendIntField(b, "amount", it.Amount, false)
	if mp := it.Marketplace; mp != nil {
		b = appendKey(b, "marketplace", false)
		b = appendIntField(b, "mode", int64(mp.Mode), true)
		b = appendKey(b, "repasses", false)
		b = jsonw.AppendArray(b, mp.Repasses, appendRepasse)
		b = append(b, '}')
	}
	return append(b, '}')
}

func appendRepasse(b []byte, r *Repasse) []byte {
	b = appendStrField(b, "payee_code", r.PayeeCode, true)
	if r.Percentage != 0 {
		b = appendIntField(b, "percentage", r.Percentage, false)
	}
	if r.Fixed != 0 {
		b = appendIntField(b, "fixed", r.Fixed, false)
	}
	return append(b, '}')
}

func appendHistory(b []byte, h []historyOut) []byte {
	return jsonw.AppendArray(b, h, func(b []byte, e *historyOut) []byte {
		b = appendStrField(b, "message", e.Message, true)
		b = appendStrField(b, "created_at", e.CreatedAt, false)
		return append(b, '}')
	})
}

func appendCustomer(b []byte, c *Customer) []byte {
	first := true
	str := func(key, v string) {
		if v != "" {
			b = appendStrField(b, key, v, first)
			first = false
		}
	}
	str("name", c.Name)
	str("cpf", c.CPF)
	str("email", c.Email)
	str("phone_number", c.PhoneNumber)
	str("birth", c.Birth)
	if c.Address != nil {
		b = appendKey(b, "address", first)
		first = false
		b = appendAddress(b, c.Address)
	}
	if j := c.JuridicalPerson; j != nil {
		b = appendKey(b, "juridical_person", first)
		first = false
		b = appendStrField(b, "corporate_name", j.CorporateName, true)
		b = appendStrField(b, "cnpj", j.CNPJ, false)
		b = append(b, '}')
	}
	if first {
		return append(b, "{}"...)
	}
	return append(b, '}')
}

func appendAddress(b []byte, a *Address) []byte {
	b = appendStrField(b, "street", a.Street, true)
	b = appendStrField(b, "number", a.Number, false)
	b = appendStrField(b, "neighborhood", a.Neighborhood, false)
	b = appendStrField(b, "zipcode", a.Zipcode, false)
	b = appendStrField(b, "city", a.City, false)
	b = appendStrPtrField(b, "complement", a.Complement)
	b = appendStrField(b, "state", a.State, false)
	return append(b, '}')
}

func appendPaymentOut(b []byte, p *paymentOut) []byte {
	b = appendStrField(b, "method", p.Method, true)
	b = appendStrField(b, "created_at", p.CreatedAt, false)
	b = appendStrPtrField(b, "message", p.Message)
	if o := p.BankingBillet; o != nil {
		b = appendKey(b, "banking_billet", false)
		b = appendStrField(b, "barcode", o.Barcode, true)
		b = appendKey(b, "pix", false)
		b = appendPix(b, &o.Pix)
		b = appendStrField(b, "link", o.Link, false)
		b = appendStrField(b, "billet_link", o.BilletLink, false)
		b = appendKey(b, "pdf", false)
		b = appendStrField(b, "charge", o.PDF.Charge, true)
		b = append(b, '}')
		b = appendStrField(b, "expire_at", o.ExpireAt, false)
		b = appendKey(b, "configurations", false)
		b = appendConfig(b, &o.Configurations)
		if d := o.Discount; d != nil {
			b = appendKey(b, "discount", false)
			b = appendStrField(b, "type", d.Type, true)
			b = appendIntField(b, "value", d.Value, false)
			b = append(b, '}')
		}
		if d := o.ConditionalDiscount; d != nil {
			b = appendKey(b, "conditional_discount", false)
			b = appendStrField(b, "type", d.Type, true)
			b = appendIntField(b, "value", d.Value, false)
			b = appendStrField(b, "until_date", d.UntilDate, false)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	if k := p.CreditCard; k != nil {
		b = appendKey(b, "credit_card", false)
		b = appendStrField(b, "mask", k.Mask, true)
		b = appendIntField(b, "installments", int64(k.Installments), false)
		b = appendIntField(b, "installment_value", k.InstallmentValue, false)
		b = appendKey(b, "address", false)
		b = appendAddress(b, &k.Address)
		b = append(b, '}')
	}
	if cr := p.Carnet; cr != nil {
		b = appendKey(b, "carnet", false)
		b = appendIntField(b, "carnet_id", cr.CarnetID, true)
		b = appendIntField(b, "parcel", int64(cr.Parcel), false)
		b = append(b, '}')
	}
	if p.PaidAt != "" {
		b = appendStrField(b, "paid_at", p.PaidAt, false)
	}
	if p.PaidValue != 0 {
		b = appendIntField(b, "paid_value", p.PaidValue, false)
	}
	return append(b, '}')
}

func appendPix(b []byte, p *pixOut) []byte {
	b = appendStrField(b, "qrcode", p.QRCode, true)
	b = appendStrField(b, "qrcode_image", p.QRCodeImage, false)
	return append(b, '}')
}

func appendConfig(b []byte, c *configOut) []byte {
	b = appendIntField(b, "interest", c.Interest, true)
	b = appendIntField(b, "fine", c.Fine, false)
	if c.DaysToWriteOff != nil {
		b = appendIntField(b, "days_to_write_off", *c.DaysToWriteOff, false)
	}
	return append(b, '}')
}

func appendLinkResult(b []byte, l *linkResult) []byte {
	b = appendIntField(b, "charge_id", l.ChargeID, true)
	b = appendStrField(b, "status", l.Status, false)
	b = appendIntField(b, "total", l.Total, false)
	b = appendStrPtrField(b, "custom_id", l.CustomID)
	b = appendStrField(b, "payment_url", l.PaymentURL, false)
	b = appendStrField(b, "payment_method", l.PaymentMethod, false)
	b = appendIntField(b, "billet_discount", l.BilletDiscount, false)
	b = appendIntField(b, "card_discount", l.CardDiscount, false)
	b = appendIntPtrField(b, "conditional_discount_value", l.ConditionalDiscountValue)
	b = appendStrPtrField(b, "conditional_discount_type", l.ConditionalDiscountType)
	b = appendStrPtrField(b, "conditional_discount_date", l.ConditionalDiscountDate)
	b = appendBoolField(b, "request_delivery_address", l.RequestDeliveryAddress)
	b = appendStrPtrField(b, "message", l.Message)
	b = appendStrField(b, "expire_at", l.ExpireAt, false)
	b = appendStrField(b, "created_at", l.CreatedAt, false)
	return append(b, '}')
}

// appendCarnetOut appends cn's JSON; false when a parcel number is neither
// a string nor an int (encoding/json then writes the answer).
func appendCarnetOut(b []byte, cn *carnetOut) ([]byte, bool) {
	b = appendIntField(b, "carnet_id", cn.CarnetID, true)
	b = appendStrField(b, "status", cn.Status, false)
	b = appendIntField(b, "repeats", int64(cn.Repeats), false)
	b = appendStrField(b, "cover", cn.Cover, false)
	b = appendStrField(b, "link", cn.Link, false)
	if cn.CarnetLink != "" {
		b = appendStrField(b, "carnet_link", cn.CarnetLink, false)
	}
	b = appendKey(b, "pdf", false)
	b = appendStrField(b, "carnet", cn.PDF.Carnet, true)
	b = appendStrField(b, "cover", cn.PDF.Cover, false)
	b = append(b, '}')
	b = appendIntField(b, "value", cn.Value, false)
	b = appendStrPtrField(b, "custom_id", cn.CustomID)
	b = appendStrPtrField(b, "notification_url", cn.NotificationURL)
	b = appendBoolField(b, "split_items", cn.SplitItems)
	b = appendKey(b, "charges", false)
	if cn.Charges == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range cn.Charges {
			if i > 0 {
				b = append(b, ',')
			}
			p := &cn.Charges[i]
			b = appendIntField(b, "charge_id", p.ChargeID, true)
			b = appendKey(b, "parcel", false)
			switch v := p.Parcel.(type) {
			case string:
				b = jsonw.AppendString(b, v)
			case int:
				b = strconv.AppendInt(b, int64(v), 10)
			default:
				return b, false
			}
			b = appendStrField(b, "status", p.Status, false)
			b = appendIntField(b, "value", p.Value, false)
			b = appendStrField(b, "expire_at", p.ExpireAt, false)
			b = appendStrField(b, "url", p.URL, false)
			if p.ParcelLink != "" {
				b = appendStrField(b, "parcel_link", p.ParcelLink, false)
			}
			b = appendKey(b, "pdf", false)
			b = appendStrField(b, "charge", p.PDF.Charge, true)
			b = append(b, '}')
			b = appendStrField(b, "barcode", p.Barcode, false)
			if p.Pix != nil {
				b = appendKey(b, "pix", false)
				b = appendPix(b, p.Pix)
			}
			b = appendKey(b, "configurations", false)
			b = appendConfig(b, &p.Configurations)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = appendStrField(b, "created_at", cn.CreatedAt, false)
	b = appendKey(b, "history", false)
	b = appendHistory(b, cn.History)
	return append(b, '}'), true
}
