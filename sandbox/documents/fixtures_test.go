package documents

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"remessa/rules"
)

// Vector V2 of standards.md §1.7: R$ 1.500,75 due 2026-03-10 (factor 1381).
const (
	vectorBarcode = "36493138100001500750000123456789012345678901"
	vectorLine    = "36490.00019 23456.789017 23456.789017 3 13810000150075"
	// Vector D of standards.md §2.3 (dynamic BR Code, CRC 1D11).
	vectorBRCode = "00020101021226800014br.gov.bcb.pix2558qrpix.example.com/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6008CURITIBA62070503***63041D11"
)

func day(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func sampleSlip() Slip {
	return Slip{
		ChargeID:    1234567,
		CustomID:    "MENS-2026-03-0042",
		Beneficiary: Party{Name: "Escola Pequeno Príncipe Ltda", Document: "09089356000118"},
		Payer: Party{Name: "José da Conceição Araújo", Document: "52998224725", Address: &Address{
			Street: "Rua das Acácias", Number: "123", Complement: "apto 45", Neighborhood: "Água Verde",
			City: "Curitiba", State: "PR", Zipcode: "80240010"}},
		Barcode:    vectorBarcode,
		PixQRCode:  vectorBRCode,
		ValueCents: 150075,
		DueDate:    day("2026-03-10"),
		IssuedAt:   day("2026-02-20"),
		Fine:       200,
		Interest:   33,
		Discounts:  []Discount{{Type: "currency", Value: 5000, Until: day("2026-03-05")}},
		Messages: []string{
			"Mensalidade de março - 6º ano B.",
			"Não receber após 30 dias do vencimento. Dúvidas: secretaria@escola.example.com.br",
		},
	}
}

func sampleCarnet(t testing.TB, n int) Carnet {
	c := Carnet{
		CarnetID:    8800123,
		CustomID:    "CARNE-2026-ALUNO-42",
		Beneficiary: Party{Name: "Escola Pequeno Príncipe Ltda", Document: "09089356000118"},
		Payer:       sampleSlip().Payer,
		Message:     "Anuidade 2026 - pague até o vencimento e ganhe desconto.",
		CreatedAt:   day("2026-01-15"),
	}
	for i := 1; i <= n; i++ {
		due := rules.AddMonthsClamped(day("2026-02-10"), i-1)
		free := fmt.Sprintf("%025d", 4400000+i)
		bc, err := rules.BuildBarcode(rules.BankEfi, due, 35000+int64(i), free)
		if err != nil {
			t.Fatal(err)
		}
		s := sampleSlip()
		s.ChargeID = int64(2000000 + i)
		s.CustomID = ""
		s.CarnetID = c.CarnetID
		s.Parcel, s.Repeats = i, n
		s.Barcode = bc
		s.ValueCents = 35000 + int64(i)
		s.DueDate = due
		s.IssuedAt = c.CreatedAt
		s.Discounts = nil
		s.Messages = []string{fmt.Sprintf("Parcela %d de %d da anuidade.", i, n)}
		br, err := rules.BRCode{Key: "123e4567-e12b-12d1-a456-426655440000", MerchantName: "ESCOLA PEQUENO PRINCIPE",
			MerchantCity: "CURITIBA", AmountCents: s.ValueCents, Txid: fmt.Sprintf("CARNE8800123P%02d", i)}.Encode()
		if err != nil {
			t.Fatal(err)
		}
		s.PixQRCode = br
		if i == 1 {
			s.Status = "paid"
		}
		c.Parcels = append(c.Parcels, s)
	}
	return c
}

// writeSample keeps a rendered file when REMESSA_SAMPLE_DIR is set, so a
// person can look at it (pdftoppm -png).
func writeSample(t *testing.T, name string, b []byte) {
	dir := os.Getenv("REMESSA_SAMPLE_DIR")
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
