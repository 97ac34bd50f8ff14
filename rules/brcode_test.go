package rules

import (
	"strings"
	"testing"
)

func TestCRC16CheckValue(t *testing.T) {
	if got := CRC16("123456789"); got != "29B1" {
		t.Fatalf("CRC16(123456789) = %s, want 29B1", got)
	}
	if got := CRC16(""); got != "FFFF" {
		t.Fatalf("CRC16(\"\") = %s, want FFFF (init value, no final XOR)", got)
	}
}

// Vectors A-D of standards.md §2.3 [verified].
var brVectors = []struct {
	name, payload, crc string
	want               BRCode
	reencodes          bool // our encoder writes exactly the same payload
}{
	{"A static BCB manual",
		"00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D",
		"1D3D",
		BRCode{Key: "123e4567-e12b-12d1-a456-426655440000", MerchantName: "Fulano de Tal", MerchantCity: "BRASILIA"},
		true},
	{"B dynamic BCB manual (uppercase GUI)",
		"00020101021226770014BR.GOV.BCB.PIX2555pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a995204000053039865802BR5907EMPRESA6009SAO PAULO62070503***6304EEAB",
		"EEAB",
		BRCode{URL: "pix.example.com/qr/93598be0-1bd0-4997-8318-81776a1d8a99", MerchantName: "EMPRESA", MerchantCity: "SAO PAULO", Dynamic: true},
		false},
	{"C static e-mail key, info, amount, txid",
		"00020126590014br.gov.bcb.pix0122financeiro@example.com0211Pedido 123452040000530398654071234.565802BR5917LOJA EXEMPLO LTDA6009SAO PAULO62140510PEDIDO12346304A1A3",
		"A1A3",
		BRCode{Key: "financeiro@example.com", Info: "Pedido 1234", AmountCents: 123456, MerchantName: "LOJA EXEMPLO LTDA", MerchantCity: "SAO PAULO", Txid: "PEDIDO1234"},
		true},
	{"D dynamic",
		"00020101021226800014br.gov.bcb.pix2558qrpix.example.com/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f95204000053039865802BR5917LOJA EXEMPLO LTDA6008CURITIBA62070503***63041D11",
		"1D11",
		BRCode{URL: "qrpix.example.com/v2/cobv/0a1b2c3d4e5f60718293a4b5c6d7e8f9", MerchantName: "LOJA EXEMPLO LTDA", MerchantCity: "CURITIBA", Dynamic: true},
		true},
}

func TestBRCodeVectors(t *testing.T) {
	for _, v := range brVectors {
		t.Run(v.name, func(t *testing.T) {
			if got := CRC16(v.payload[:len(v.payload)-4]); got != v.crc {
				t.Fatalf("CRC16 = %s, want %s", got, v.crc)
			}
			b, err := ParseBRCode(v.payload)
			if err != nil {
				t.Fatal(err)
			}
			if b != v.want {
				t.Fatalf("ParseBRCode = %+v\nwant %+v", b, v.want)
			}
			enc, err := v.want.Encode()
			if err != nil {
				t.Fatal(err)
			}
			if v.reencodes && enc != v.payload {
				t.Fatalf("Encode = %s\nwant   %s", enc, v.payload)
			}
			if !v.reencodes && !strings.EqualFold(enc[:len(enc)-4], v.payload[:len(v.payload)-4]) {
				t.Fatalf("Encode = %s\nwant (case-insensitively) %s", enc, v.payload)
			}
		})
	}
}

// The sample copied by several public BR Code libraries (pixcode, Java
// builders) that ends in 630445C8. An independent Python CRC-16/CCITT-FALSE
// also gives 45C8 for it. standards.md says a vendor page shows 45C8 where
// 02A4 is right; that page's payload could not be reconstructed, so this is
// tested as the libraries publish it (see docs/rules.md).
func TestBRCodePublicDynamicSampleWithAmount(t *testing.T) {
	s := "00020101021226720014br.gov.bcb.pix2550bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd4415204000053039865406123.455802BR5913Fulano de Tal6008BRASILIA62190515RP12345678-2019630445C8"
	b, err := ParseBRCode(s)
	if err != nil {
		t.Fatal(err)
	}
	want := BRCode{URL: "bx.com.br/pix/8b3da2f3-9a41-40d1-a91a-bd93113bd441", AmountCents: 12345, MerchantName: "Fulano de Tal", MerchantCity: "BRASILIA", Txid: "RP12345678-2019", Dynamic: true}
	if b != want {
		t.Fatalf("got %+v\nwant %+v", b, want)
	}
}

func TestBRCodeRoundTrip(t *testing.T) {
	cases := []BRCode{
		{Key: "+5511987654321", MerchantName: "Joao", MerchantCity: "Recife"},
		{Key: "52998224725", MerchantName: "Maria da Silva", MerchantCity: "Belo Horizonte", AmountCents: 5, Txid: "ABC123"},
		{Key: "12ABC34501DE35", Info: "Mensalidade marco", MerchantName: "ESCOLA", MerchantCity: "SAO PAULO", PostalCode: "01310100", AmountCents: 999999999999},
		{URL: "pix.example.com/v2/cobv/abc", MerchantName: "EFI", MerchantCity: "OURO PRETO", Dynamic: true, PostalCode: "35400000"},
		{Key: strings.Repeat("a", 65) + "@example.com", MerchantName: "X", MerchantCity: "Y"}, // 77-char key fills 26
	}
	for _, c := range cases {
		s, err := c.Encode()
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		got, err := ParseBRCode(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got != c {
			t.Fatalf("round trip of %+v gave %+v (%s)", c, got, s)
		}
		if s[len(s)-8:len(s)-4] != "6304" || CRC16(s[:len(s)-4]) != s[len(s)-4:] {
			t.Fatalf("%s: CRC not last or wrong", s)
		}
	}
}

func TestBRCodeEncodeStripsAccents(t *testing.T) {
	b := BRCode{Key: "financeiro@example.com", MerchantName: "José Conceição", MerchantCity: "São Paulo"}
	s, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "5914Jose Conceicao6009Sao Paulo") {
		t.Fatalf("accents not stripped or lengths wrong: %s", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] > 0x7E {
			t.Fatalf("non-ASCII byte in %q", s)
		}
	}
}

func TestBRCodeEncodeErrors(t *testing.T) {
	ok := BRCode{Key: "financeiro@example.com", MerchantName: "LOJA", MerchantCity: "CURITIBA"}
	mod := func(f func(*BRCode)) BRCode { b := ok; f(&b); return b }
	cases := []struct {
		name  string
		b     BRCode
		field string
		value string
	}{
		{"name 26", mod(func(b *BRCode) { b.MerchantName = strings.Repeat("N", 26) }), "59", strings.Repeat("N", 26)},
		{"name empty", mod(func(b *BRCode) { b.MerchantName = "" }), "59", `""`},
		{"city 16", mod(func(b *BRCode) { b.MerchantCity = "SANTA RITA DO SAPUCAI" }), "60", "SANTA RITA DO SAPUCAI"},
		{"city accented still 16", mod(func(b *BRCode) { b.MerchantCity = "São José dos Pin" + "h" }), "60", "Sao Jose dos Pinh"},
		{"non-latin name", mod(func(b *BRCode) { b.MerchantName = "Loja 東京" }), "59", "Loja 東京"},
		{"key too long", mod(func(b *BRCode) { b.Key = strings.Repeat("k", 78) }), "26-01", strings.Repeat("k", 78)},
		{"no key", mod(func(b *BRCode) { b.Key = "" }), "26-01", `""`},
		{"26 over 99", mod(func(b *BRCode) {
			b.Key = "123e4567-e12b-12d1-a456-426655440000"
			b.Info = strings.Repeat("i", 38)
		}), "26", strings.Repeat("i", 38)},
		{"url too long", BRCode{URL: strings.Repeat("u", 78), MerchantName: "A", MerchantCity: "B", Dynamic: true}, "26-25", strings.Repeat("u", 78)},
		{"dynamic no url", BRCode{MerchantName: "A", MerchantCity: "B", Dynamic: true}, "26-25", `""`},
		{"dynamic with amount", BRCode{URL: "x.com/a", MerchantName: "A", MerchantCity: "B", Dynamic: true, AmountCents: 100}, "54", "1.00"},
		{"txid 26", mod(func(b *BRCode) { b.Txid = strings.Repeat("T", 26) }), "62-05", strings.Repeat("T", 26)},
		{"txid dash", mod(func(b *BRCode) { b.Txid = "RP-1" }), "62-05", "RP-1"},
		{"negative amount", mod(func(b *BRCode) { b.AmountCents = -1 }), "54", "-1"},
		{"amount too long", mod(func(b *BRCode) { b.AmountCents = 100000000000000 }), "54", "1000000000000.00"},
		{"dynamic with key", BRCode{URL: "x.com/a", Key: "a@b.co", MerchantName: "A", MerchantCity: "B", Dynamic: true}, "26-01", "a@b.co"},
		{"dynamic with txid", BRCode{URL: "x.com/a", Txid: "ABC", MerchantName: "A", MerchantCity: "B", Dynamic: true}, "62-05", "ABC"},
		{"static with URL", mod(func(b *BRCode) { b.URL = "x.com/a" }), "26-25", "x.com/a"},
		{"bad CEP", mod(func(b *BRCode) { b.PostalCode = "1234" }), "61", "1234"},
	}
	for _, c := range cases {
		_, err := c.b.Encode()
		if err == nil {
			t.Errorf("%s: want error", c.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.field) || !strings.Contains(msg, c.value) {
			t.Errorf("%s: error %q should name field %s and value %s", c.name, msg, c.field, c.value)
		}
	}
	// Exactly at the limits is fine: name 25, city 15, EVP + 37-char info = 99.
	edge := BRCode{Key: "123e4567-e12b-12d1-a456-426655440000", Info: strings.Repeat("i", 37),
		MerchantName: strings.Repeat("N", 25), MerchantCity: strings.Repeat("C", 15)}
	if _, err := edge.Encode(); err != nil {
		t.Fatalf("limits exactly: %v", err)
	}
	// A scheme on the URL is removed, not counted.
	b := BRCode{URL: "https://pix.example.com/qr/1", MerchantName: "A", MerchantCity: "B", Dynamic: true}
	s, err := b.Encode()
	if err != nil || !strings.Contains(s, "2520pix.example.com/qr/1") {
		t.Fatalf("URL scheme: %s, %v", s, err)
	}
}

func TestParseBRCodeErrors(t *testing.T) {
	a := brVectors[0].payload
	withCRC := func(body string) string { return body + CRC16(body) }
	body := a[:len(a)-4]
	cases := map[string]string{
		"empty":             "",
		"wrong crc":         a[:len(a)-4] + "1D3E",
		"no crc":            a[:len(a)-8],
		"changed byte":      strings.Replace(a, "Fulano", "Fulana", 1),
		"length overruns":   withCRC(strings.Replace(body, "6008BRASILIA", "6099BRASILIA", 1)),
		"bad length digits": withCRC(strings.Replace(body, "6008BRASILIA", "60X8BRASILIA", 1)),
		"out of order":      withCRC(strings.Replace(body, "5802BR5913Fulano de Tal", "5913Fulano de Tal5802BR", 1)),
		"no 00 first":       withCRC(strings.Replace(body, "000201", "", 1)),
		"wrong GUI":         withCRC(strings.Replace(body, "br.gov.bcb.pix", "br.gov.bcb.pax", 1)),
		"wrong currency":    withCRC(strings.Replace(body, "5303986", "5303840", 1)),
		"no name":           withCRC(strings.Replace(body, "5913Fulano de Tal", "", 1)),
		"zero length":       withCRC(strings.Replace(body, "5802BR", "5800", 1)),
		"62 broken":         withCRC(strings.Replace(body, "62070503***", "62070509***", 1)),
		"bad amount":        withCRC(strings.Replace(body, "5802BR", "54041,005802BR", 1)),
		"negative amount":   withCRC(strings.Replace(body, "5802BR", "5405-1.005802BR", 1)),
		"non-ascii":         withCRC(strings.Replace(body, "5913Fulano de Tal", "5913Fulano dé Ta", 1)),
	}
	for name, s := range cases {
		if _, err := ParseBRCode(s); err == nil {
			t.Errorf("%s: want error for %q", name, s)
		}
	}
	// Lowercase CRC hex is accepted.
	if _, err := ParseBRCode(a[:len(a)-4] + "1d3d"); err != nil {
		t.Errorf("lowercase CRC: %v", err)
	}
}

func FuzzParseBRCode(f *testing.F) {
	for _, v := range brVectors {
		f.Add(v.payload)
	}
	f.Add("")
	f.Add("6304FFFF")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBRCode(s)
		if err != nil {
			return
		}
		if CRC16(s[:len(s)-4]) != strings.ToUpper(s[len(s)-4:]) {
			t.Fatalf("accepted bad CRC: %q", s)
		}
		// Whatever we accept and can re-encode must parse back the same.
		enc, err := b.Encode()
		if err != nil {
			return
		}
		b2, err := ParseBRCode(enc)
		if err != nil {
			t.Fatalf("re-encoded %q does not parse: %v", enc, err)
		}
		if b2 != b {
			t.Fatalf("round trip %+v -> %q -> %+v", b, enc, b2)
		}
	})
}

func BenchmarkBRCodeEncode(b *testing.B) {
	c := BRCode{Key: "financeiro@example.com", Info: "Pedido 1234", AmountCents: 123456, MerchantName: "LOJA EXEMPLO LTDA", MerchantCity: "SAO PAULO", Txid: "PEDIDO1234"}
	for b.Loop() {
		if _, err := c.Encode(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBRCode(b *testing.B) {
	s := brVectors[2].payload
	for b.Loop() {
		if _, err := ParseBRCode(s); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParseBRCodeBody fuzzes the TLV body and appends a correct CRC, so the
// structure checks (not only the CRC) are exercised.
func FuzzParseBRCodeBody(f *testing.F) {
	for _, v := range brVectors {
		f.Add(v.payload[:len(v.payload)-8])
	}
	f.Fuzz(func(t *testing.T, body string) {
		s := body + "6304"
		s += CRC16(s)
		b, err := ParseBRCode(s)
		if err != nil {
			return
		}
		if b.MerchantName == "" || b.MerchantCity == "" || (b.Key == "" && b.URL == "") {
			t.Fatalf("accepted incomplete code %q: %+v", s, b)
		}
		enc, err := b.Encode()
		if err != nil {
			return
		}
		b2, err := ParseBRCode(enc)
		if err != nil || b2 != b {
			t.Fatalf("round trip %+v -> %q -> %+v, %v", b, enc, b2, err)
		}
	})
}

// TestCRC16Update: the CRC continued over the rest of a string is the
// string's, wherever it is cut.
func TestCRC16Update(t *testing.T) {
	const s = "123456789"
	for cut := 0; cut <= len(s); cut++ {
		if got := CRC16Update(CRC16Update(0xFFFF, s[:cut]), s[cut:]); got != 0x29B1 {
			t.Fatalf("cut at %d: %04X, want 29B1", cut, got)
		}
	}
}
