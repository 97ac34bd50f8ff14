package rules

// PaymentClass is how a payment compares with what its charge owed on the
// day it was paid, by the charge's own terms. Always
//
//	Paid = Face − Discount + FineInterest − Short + Over
//
// with Owed = Face − Discount + FineInterest, and at most one of Short and
// Over above zero.
type PaymentClass struct {
	Face         int64 // the charge's value as issued
	Discount     int64 // discount (and Pix abatimento) the terms granted on the day
	FineInterest int64 // fine and interest the terms charged on the day
	Owed         int64 // what the terms asked on the day
	Paid         int64 // what came in
	Short        int64 // paid below Owed: still owed ("pago a menor")
	Over         int64 // paid above Owed ("pago a maior")
}

// ClassifyPayment compares paid with what a charge of face value owed by
// its terms: discount granted and fine and interest charged on the paid
// day (SlipAmountDue's Discount and Fine+Interest, or CobvAmountDue's
// Abatimento+Desconto and Multa+Juros). What is below the owed amount is
// paid short, what is above it paid over: a partial payment is never a
// discount, and an overpayment never fine or interest. A discount is
// earned only by paying what is owed with it: a payment short of that
// (inside the discount window) gets none, and is short of the value
// without it.
func ClassifyPayment(face, discount, fineInterest, paid int64) PaymentClass {
	c := PaymentClass{Face: face, Discount: discount, FineInterest: fineInterest, Paid: paid}
	if paid < face-discount+fineInterest {
		c.Discount = 0
	}
	c.Owed = face - c.Discount + fineInterest
	if paid < c.Owed {
		c.Short = c.Owed - paid
	} else {
		c.Over = paid - c.Owed
	}
	return c
}
