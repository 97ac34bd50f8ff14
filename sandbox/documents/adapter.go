package documents

import (
	"remessa/sandbox/charges"
)

// Source is what the document routes read: the charges module's document
// views by document token (*charges.Module implements it).
type Source interface {
	ChargeDocument(token string) (charges.SlipView, bool)
	LinkDocument(token string) (charges.SlipView, bool)
	CarnetDocument(token string) (charges.CarnetView, bool)
}

func party(p charges.Party) Party {
	out := Party{Name: p.Name, Document: p.Document}
	if a := p.Address; a != nil {
		out.Address = &Address{Street: a.Street, Number: a.Number, Complement: a.Complement,
			Neighborhood: a.Neighborhood, City: a.City, State: a.State, Zipcode: a.Zipcode}
	}
	return out
}

// SlipFromView copies a charges module view into a printable Slip.
func SlipFromView(v charges.SlipView) Slip {
	s := Slip{
		ChargeID: v.ChargeID, CarnetID: v.CarnetID, Parcel: v.Parcel, Repeats: v.Repeats, CustomID: v.CustomID,
		Beneficiary: party(v.Beneficiary), Payer: party(v.Payer), Barcode: v.Barcode, PixQRCode: v.PixQRCode,
		ValueCents: v.ValueCents, DueDate: v.DueDate, IssuedAt: v.IssuedAt, Fine: v.Fine, Interest: v.Interest,
		Messages: v.Messages, Status: v.Status,
	}
	for _, d := range v.Discounts {
		s.Discounts = append(s.Discounts, Discount{Type: d.Type, Value: d.Value, Until: d.Until})
	}
	return s
}

// CarnetFromView copies a charges module carnet view into a printable
// Carnet.
func CarnetFromView(v charges.CarnetView) Carnet {
	c := Carnet{CarnetID: v.CarnetID, CustomID: v.CustomID, Beneficiary: party(v.Beneficiary), Payer: party(v.Payer),
		Message: v.Message, CreatedAt: v.CreatedAt, Status: v.Status}
	for _, p := range v.Parcels {
		c.Parcels = append(c.Parcels, SlipFromView(p))
	}
	return c
}
