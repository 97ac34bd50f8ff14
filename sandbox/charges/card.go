package charges

import (
	"fmt"
	"math/big"
	"strings"
)

// Brands accepted for card tokens and payments.
var validBrands = map[string]bool{"visa": true, "mastercard": true, "amex": true, "diners": true, "elo": true, "hipercard": true}

// installmentBrands are the brands GET /v1/installments lists.
var installmentBrands = map[string]bool{"visa": true, "mastercard": true, "amex": true, "elo": true, "hipercard": true}

// brandRate is the sandbox's monthly interest rate per brand in hundredths
// of a percent (199 = 1,99% a month). Installment 1 has no interest; from
// installment 2 on the Price (French amortisation) formula applies.
var brandRate = map[string]int64{
	"visa": 199, "mastercard": 199, "elo": 229, "hipercard": 239, "amex": 249, "diners": 249,
}

// MaxInstallments is the largest installment count offered.
const MaxInstallments = 12

// minInstallment is the smallest installment value offered (R$ 5,00).
const minInstallment = 500

func invalidBrand(brand string) *Error {
	return errf(CodeInvalidBrand, "invalid_brand", "Bandeira inválida: %q. Use visa, mastercard, amex, diners, elo ou hipercard", brand)
}

// Installment is one option of the installments answer.
type Installment struct {
	Installment        int    `json:"installment"`
	HasInterest        bool   `json:"has_interest"`
	Value              int64  `json:"value"`
	Currency           string `json:"currency"`
	InterestPercentage int64  `json:"interest_percentage"`
}

// InstallmentOptions is the answer of GET /v1/installments.
type InstallmentOptions struct {
	Rate         int64         `json:"rate"`
	Name         string        `json:"name"`
	Installments []Installment `json:"installments"`
}

// roundCents rounds a value in cents given as a rational to whole cents
// the way the spec says card fees are rounded: simple rounding at two
// decimals of the real amount (a third decimal of 5 or more rounds up).
// For a positive x that is floor(x + 1/2).
func roundCents(x *big.Rat) int64 {
	h := new(big.Rat).Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(h.Num(), h.Denom()) // truncation = floor for positive
	return q.Int64()
}

// installmentValue is the value of each of n installments of total cents
// at rate hundredths of a percent a month: total/1 for n = 1, otherwise
// the Price formula total·i·(1+i)^n / ((1+i)^n − 1), rounded per roundCents.
func installmentValue(total int64, n int, rate int64) int64 {
	if n <= 1 || rate == 0 {
		if n <= 1 {
			return total
		}
		return roundCents(big.NewRat(total, int64(n)))
	}
	i := big.NewRat(rate, 10000)
	onePlus := new(big.Rat).Add(big.NewRat(1, 1), i)
	pow := big.NewRat(1, 1)
	for k := 0; k < n; k++ {
		pow.Mul(pow, onePlus)
	}
	num := new(big.Rat).Mul(big.NewRat(total, 1), i)
	num.Mul(num, pow)
	den := new(big.Rat).Sub(pow, big.NewRat(1, 1))
	return roundCents(num.Quo(num, den))
}

// formatCurrency formats cents as "1.234,56" (no currency symbol).
func formatCurrency(cents int64) string {
	neg := cents < 0
	if neg {
		cents = -cents
	}
	s := fmt.Sprintf("%d", cents/100)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	out := fmt.Sprintf("%s,%02d", b.String(), cents%100)
	if neg {
		return "-" + out
	}
	return out
}

// installmentsFor lists the options for brand and total (cents).
func installmentsFor(brand string, total int64) (InstallmentOptions, *Error) {
	if !installmentBrands[brand] {
		return InstallmentOptions{}, invalidBrand(brand)
	}
	if total < minInstallment {
		return InstallmentOptions{}, minTotal(total)
	}
	if total > maxSlipCents {
		return InstallmentOptions{}, invalid("/total", "total acima do máximo de %d centavos", int64(maxSlipCents))
	}
	rate := brandRate[brand]
	out := InstallmentOptions{Rate: rate, Name: brand}
	for n := 1; n <= MaxInstallments; n++ {
		v := installmentValue(total, n, rate)
		if n > 1 && v < minInstallment {
			break
		}
		opt := Installment{Installment: n, Value: v, Currency: formatCurrency(v)}
		if n > 1 {
			opt.HasInterest = true
			opt.InterestPercentage = rate
		}
		out.Installments = append(out.Installments, opt)
	}
	return out, nil
}

// Sandbox card simulation by the last digit of the card number.
var cardRefusals = map[byte]string{
	'1': "Dados do cartão inválidos.",
	'2': "Transação não autorizada por motivos de segurança.",
	'3': "Transação não autorizada, tente novamente mais tarde.",
}

// cardOutcome returns the refusal reason for a card whose number ends in
// last, or "" when the sandbox approves it.
func cardOutcome(last byte) string { return cardRefusals[last] }

// maskCard keeps the last 4 digits: "XXXXXXXXXXXX1111".
func maskCard(number string) string {
	if len(number) <= 4 {
		return number
	}
	return strings.Repeat("X", len(number)-4) + number[len(number)-4:]
}
