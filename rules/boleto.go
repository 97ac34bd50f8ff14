package rules

import (
	"fmt"
	"strings"
	"time"
)

// BankEfi is the compensation code of Efí S.A. – Instituição de Pagamento.
const BankEfi = "364"

var (
	factorBase  = civil(1997, 10, 7) // factor 0 of the original count
	factorFirst = civil(2000, 7, 3)  // factor 1000, first encodable date
)

func daysBetween(a, b time.Time) int {
	return int(dateOf(b).Sub(dateOf(a)).Hours() / 24)
}

// DueFactor returns the 4-digit due-date factor of the civil date d,
// applying the February 2025 reset (2025-02-21 is 9999, 2025-02-22 is
// 1000) and its future repetitions: factor = ((d - 1997-10-07) - 1000) mod
// 9000 + 1000. Dates before 2000-07-03 have no factor.
func DueFactor(d time.Time) (int, error) {
	if dateOf(d).Before(factorFirst) {
		return 0, fmt.Errorf("vencimento %s: anterior a 2000-07-03, sem fator de vencimento", dateOf(d).Format(time.DateOnly))
	}
	days := daysBetween(factorBase, d)
	return (days-1000)%9000 + 1000, nil
}

// DateFromFactor decodes a due-date factor (1000..9999) into the civil date
// closest to ref among the dates that carry that factor (the factor repeats
// every 9000 days). Factor 0 (no due date) is not a date and is an error.
func DateFromFactor(f int, ref time.Time) (time.Time, error) {
	if f < 1000 || f > 9999 {
		return time.Time{}, fmt.Errorf("fator de vencimento %d: fora do intervalo 1000..9999", f)
	}
	r := daysBetween(factorBase, ref)
	// candidate day counts are f + 9000k, k >= 0
	k := (r - f) / 9000
	if k < 0 {
		k = 0
	}
	best := f + 9000*k
	for _, c := range []int{f + 9000*(k+1), f + 9000*(k-1)} {
		if c < f {
			continue
		}
		if abs(c-r) < abs(best-r) {
			best = c
		}
	}
	return factorBase.AddDate(0, 0, best), nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Mod10 returns the FEBRABAN modulo-10 check digit of digits: weights
// 2,1,2,1,... from the rightmost digit, products >= 10 reduced by 9,
// dv = (10 - sum mod 10) mod 10. Non-digit characters are ignored.
func Mod10(digits string) int {
	sum, w := 0, 2
	for i := len(digits) - 1; i >= 0; i-- {
		c := digits[i]
		if c < '0' || c > '9' {
			continue
		}
		p := int(c-'0') * w
		if p >= 10 {
			p -= 9
		}
		sum += p
		if w == 2 {
			w = 1
		} else {
			w = 2
		}
	}
	return (10 - sum%10) % 10
}

// Mod11Boleto returns the general check digit of a boleto barcode computed
// over the 43 digits without position 5: weights 2..9 cycling from the
// right, dv = 11 - sum mod 11, and 0, 10 or 11 become 1. Non-digit
// characters are ignored.
func Mod11Boleto(digits43 string) int {
	sum, w := 0, 2
	for i := len(digits43) - 1; i >= 0; i-- {
		c := digits43[i]
		if c < '0' || c > '9' {
			continue
		}
		sum += int(c-'0') * w
		w++
		if w > 9 {
			w = 2
		}
	}
	dv := 11 - sum%11
	if dv == 0 || dv == 10 || dv == 11 {
		return 1
	}
	return dv
}

// BuildBarcode builds the 44-digit boleto barcode: bank (3 digits),
// currency 9, general check digit, due factor (0000 when due is the zero
// time), amount in cents (10 digits) and the 25-digit free field.
func BuildBarcode(bank string, due time.Time, cents int64, freeField string) (string, error) {
	if len(bank) != 3 || !allDigits(bank) {
		return "", fmt.Errorf("código do banco %q: esperados 3 dígitos", bank)
	}
	if len(freeField) != 25 || !allDigits(freeField) {
		return "", fmt.Errorf("campo livre %q: esperados 25 dígitos", freeField)
	}
	if cents < 0 || cents > 9999999999 {
		return "", fmt.Errorf("valor %d centavos: fora do intervalo do código de barras (0 a 9999999999)", cents)
	}
	factor := 0
	if !due.IsZero() {
		f, err := DueFactor(due)
		if err != nil {
			return "", err
		}
		factor = f
	}
	body := fmt.Sprintf("%s9%04d%010d%s", bank, factor, cents, freeField) // 43 digits
	dv := Mod11Boleto(body)
	return body[:4] + string(rune('0'+dv)) + body[4:], nil
}

// CheckBarcode reports whether barcode is 44 digits with a right general
// check digit.
func CheckBarcode(barcode string) error {
	if len(barcode) != 44 || !allDigits(barcode) {
		return fmt.Errorf("código de barras %q: esperados 44 dígitos", barcode)
	}
	want := Mod11Boleto(barcode[:4] + barcode[5:])
	if got := int(barcode[4] - '0'); got != want {
		return fmt.Errorf("código de barras %q: dígito verificador geral %d, esperado %d", barcode, got, want)
	}
	return nil
}

// TypedLine converts a 44-digit barcode into the formatted typed line
// ("linha digitável"), e.g. "36490.00019 23456.789017 23456.789017 3 13810000150075".
func TypedLine(barcode string) (string, error) {
	if err := CheckBarcode(barcode); err != nil {
		return "", err
	}
	free := barcode[19:44]
	f1 := barcode[0:4] + free[0:5]
	f2 := free[5:15]
	f3 := free[15:25]
	f1 += string(rune('0' + Mod10(f1)))
	f2 += string(rune('0' + Mod10(f2)))
	f3 += string(rune('0' + Mod10(f3)))
	return f1[:5] + "." + f1[5:] + " " + f2[:5] + "." + f2[5:] + " " + f3[:5] + "." + f3[5:] +
		" " + barcode[4:5] + " " + barcode[5:19], nil
}

// BarcodeFromTypedLine converts a typed line, formatted or as 47 bare
// digits (spaces and dots are ignored), back into the 44-digit barcode,
// checking the three field check digits and the general check digit.
func BarcodeFromTypedLine(line string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '.':
		case c >= '0' && c <= '9':
			b.WriteByte(c)
		default:
			return "", fmt.Errorf("linha digitável %q: caractere inválido %q na posição %d", line, c, i+1)
		}
	}
	d := b.String()
	if len(d) != 47 {
		return "", fmt.Errorf("linha digitável %q: esperados 47 dígitos, encontrados %d", line, len(d))
	}
	fields := [3][2]int{{0, 9}, {10, 20}, {21, 31}}
	for i, f := range fields {
		want := Mod10(d[f[0]:f[1]])
		if got := int(d[f[1]] - '0'); got != want {
			return "", fmt.Errorf("linha digitável %q: dígito verificador do campo %d é %d, esperado %d", line, i+1, got, want)
		}
	}
	bc := d[0:4] + d[32:33] + d[33:47] + d[4:9] + d[10:20] + d[21:31]
	if err := CheckBarcode(bc); err != nil {
		return "", fmt.Errorf("linha digitável %q: %w", line, err)
	}
	return bc, nil
}
