package api

import (
	"fmt"
	"testing"
)

func TestIdentifyBrand(t *testing.T) {
	cases := map[string]string{
		"4012001038443335":    BrandVisa,
		"4111 1111 1111 1111": BrandVisa,
		"5555666677778884":    BrandMastercard,
		"5105105105105100":    BrandMastercard,
		"2221000000000009":    BrandMastercard,
		"2720990000000007":    BrandMastercard,
		"378282246310005":     BrandAmex,
		"371449635398431":     BrandAmex,
		"30569309025904":      BrandDiners,
		"38520000023237":      BrandDiners,
		"36490102462661":      BrandDiners,
		"6362970000457013":    BrandElo,
		"5090000000000000":    BrandElo,
		"4011780000000000":    BrandElo, // an Elo BIN inside the Visa range
		"6504050000000000":    BrandElo,
		"6062825624254001":    BrandHipercard,
		"3841001111222233334": BrandHipercard,
	}
	for number, want := range cases {
		got, ok := IdentifyBrand(number)
		if !ok || got != want {
			t.Errorf("IdentifyBrand(%q) = %q, %v; want %q", number, got, ok, want)
		}
	}
	for _, bad := range []string{"", "1234", "6011111111111117", "2721000000000000", "abcdabcdabcdabcd", "40120010384433351234"} {
		if got, ok := IdentifyBrand(bad); ok {
			t.Errorf("IdentifyBrand(%q) = %q, want none", bad, got)
		}
	}
}

func TestCardDataIsNotPrinted(t *testing.T) {
	c := CardData{Number: "4012001038443335", CVV: "123"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v %+v %#v", c, c, c)} {
		if contains(s, "4012001038443335") || contains(s, "123") {
			t.Fatalf("card data printed: %s", s)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestParcelNumber(t *testing.T) {
	var p struct {
		A ParcelNumber `json:"a"`
		B ParcelNumber `json:"b"`
	}
	if err := jsonUnmarshalString(`{"a":"3","b":4}`, &p); err != nil || p.A != 3 || p.B != 4 {
		t.Fatalf("%+v %v", p, err)
	}
	if err := jsonUnmarshalString(`{"a":"x"}`, &p); err == nil {
		t.Fatal("accepted a non-number parcel")
	}
}
