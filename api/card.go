package api

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Card brands.
const (
	BrandVisa       = "visa"
	BrandMastercard = "mastercard"
	BrandAmex       = "amex"
	BrandDiners     = "diners"
	BrandElo        = "elo"
	BrandHipercard  = "hipercard"
)

// eloRanges are the Elo BIN ranges (first six digits), checked before
// Visa and Mastercard whose prefixes they overlap.
var eloRanges = [][2]int{
	{401178, 401179}, {431274, 431274}, {438935, 438935}, {451416, 451416}, {457393, 457393},
	{457631, 457632}, {504175, 504175}, {506699, 506778}, {509000, 509999}, {627780, 627780},
	{636297, 636297}, {636368, 636368}, {650031, 650033}, {650035, 650051}, {650405, 650439},
	{650485, 650538}, {650541, 650598}, {650700, 650718}, {650720, 650727}, {650901, 650920},
	{651652, 651679}, {655000, 655019}, {655021, 655058},
}

var brandPatterns = []struct {
	brand string
	re    *regexp.Regexp
}{
	{BrandHipercard, regexp.MustCompile(`^(606282|3841[046]0|637095|637568|637599|637609|637612)`)},
	{BrandAmex, regexp.MustCompile(`^3[47]`)},
	{BrandDiners, regexp.MustCompile(`^3(0[0-5]|[689])`)},
	{BrandMastercard, regexp.MustCompile(`^(5[1-5]|2(2(2[1-9]|[3-9][0-9])|[3-6][0-9]|7([01][0-9]|20)))`)},
	{BrandVisa, regexp.MustCompile(`^4`)},
}

// IdentifyBrand returns the brand of a card number (spaces and dashes
// allowed), or false when it is none of visa, mastercard, amex, diners,
// elo and hipercard. Like the client-side library it looks only at the
// prefix (BIN) and the length (13 to 19 digits), not at the check digit.
func IdentifyBrand(number string) (string, bool) {
	n := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' {
			return -1
		}
		return r
	}, number)
	if len(n) < 13 || len(n) > 19 {
		return "", false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return "", false
		}
	}
	bin, _ := strconv.Atoi(n[:6])
	for _, r := range eloRanges {
		if bin >= r[0] && bin <= r[1] {
			return BrandElo, true
		}
	}
	for _, p := range brandPatterns {
		if p.re.MatchString(n) {
			return p.brand, true
		}
	}
	return "", false
}

// InstallmentOption is one installment count offered for a card.
type InstallmentOption struct {
	Installment        int    `json:"installment"`
	HasInterest        bool   `json:"has_interest"`
	Value              int64  `json:"value"`    // cents per installment
	Currency           string `json:"currency"` // the value formatted "1.234,56"
	InterestPercentage int64  `json:"interest_percentage"`
}

// Installments are the installment options of a brand for a total.
type Installments struct {
	Rate         int64               `json:"rate"`
	Name         string              `json:"name"`
	Installments []InstallmentOption `json:"installments"`
}

// Installments lists the installment options for brand and total (cents)
// with the application's token (GET /v1/installments).
func (c *Client) Installments(ctx context.Context, brand string, total int64) (*Installments, error) {
	var out Installments
	q := url.Values{"brand": {brand}, "total": {strconv.FormatInt(total, 10)}}
	if err := c.v1(ctx, "GET", "/v1/installments?"+q.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// InstallmentsForPayee lists the installment options the way the payer's
// browser does, by account identifier and without credentials
// (GET /v1/installments/:payee_code/jsonp).
func (c *Client) InstallmentsForPayee(ctx context.Context, payeeCode, brand string, total int64) (*Installments, error) {
	var out Installments
	q := url.Values{"brand": {brand}, "total": {strconv.FormatInt(total, 10)}}
	if err := c.public(ctx, "/v1/installments/"+url.PathEscape(payeeCode)+"/jsonp", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CardData is the card a payer types. It is encrypted on the client and
// never sent in clear, logged or kept.
type CardData struct {
	Brand           string
	Number          string
	CVV             string
	ExpirationMonth string // "01".."12"
	ExpirationYear  string // "2029"
	Reuse           bool   // the token may serve more than one charge
	HolderName      string
	HolderDocument  string
}

// String hides the card data.
func (CardData) String() string { return "api.CardData{REDACTED}" }

// GoString hides the card data from %#v.
func (CardData) GoString() string { return "api.CardData{REDACTED}" }

// PaymentToken is the result of tokenization.
type PaymentToken struct {
	PaymentToken string `json:"payment_token"`
	CardMask     string `json:"card_mask"`
}

// PaymentToken tokenizes a card the way the payer's browser does in the
// sandbox: it fetches the account's RSA public key (GET
// /v1/pubkey?code=payee_code), encrypts the card JSON with RSA PKCS#1 v1.5
// and sends it to GET /v1/card/:payee_code/jsonp. No credentials are sent.
func (c *Client) PaymentToken(ctx context.Context, payeeCode string, card CardData) (*PaymentToken, error) {
	if card.Brand == "" {
		if b, ok := IdentifyBrand(card.Number); ok {
			card.Brand = b
		}
	}
	var keyPEM string
	if err := c.public(ctx, "/v1/pubkey", url.Values{"code": {payeeCode}}, &keyPEM); err != nil {
		return nil, err
	}
	blk, _ := pem.Decode([]byte(keyPEM))
	if blk == nil {
		return nil, errors.New("api: GET /v1/pubkey: answer is not a PEM public key")
	}
	key, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("api: GET /v1/pubkey: parse public key: %w", err)
	}
	rsaKey, ok := key.(*rsa.PublicKey)
	if !ok {
		return nil, errors.New("api: GET /v1/pubkey: not an RSA key")
	}
	plain, err := json.Marshal(struct {
		Brand           string `json:"brand"`
		Number          string `json:"number"`
		CVV             string `json:"cvv"`
		ExpirationMonth string `json:"expiration_month"`
		ExpirationYear  string `json:"expiration_year"`
		Reuse           bool   `json:"reuse"`
		HolderName      string `json:"holder_name,omitempty"`
		HolderDocument  string `json:"holder_document,omitempty"`
	}{card.Brand, card.Number, card.CVV, card.ExpirationMonth, card.ExpirationYear, card.Reuse, card.HolderName, card.HolderDocument})
	if err != nil {
		return nil, fmt.Errorf("api: encode card data: %w", err)
	}
	// The real service decrypts card data with RSA PKCS #1 v1.5: its
	// tokenization scheme, which a client cannot choose.
	//lint:ignore SA1019 the real service's card tokenization is PKCS #1 v1.5
	cipher, err := rsa.EncryptPKCS1v15(rand.Reader, rsaKey, plain)
	if err != nil {
		return nil, fmt.Errorf("api: encrypt card data: %w", err)
	}
	var out PaymentToken
	q := url.Values{"data": {base64.StdEncoding.EncodeToString(cipher)}}
	if err := c.public(ctx, "/v1/card/"+url.PathEscape(payeeCode)+"/jsonp", q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// public makes an unauthenticated GET to the charges API base (the routes
// a payer's browser calls) and unwraps {code, data} into out. The query
// is left out of errors (it may carry the encrypted card).
func (c *Client) public(ctx context.Context, path string, q url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.cfg.BaseURL+path+"?"+q.Encode(), nil)
	if err != nil {
		return fmt.Errorf("api: GET %s: %w", path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("api: GET %s: %s", path, RedactString(strings.ReplaceAll(err.Error(), q.Encode(), "…")))
	}
	defer resp.Body.Close()
	c.clock.observe(resp.Header)
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("api: GET %s: read answer: %w", path, err)
	}
	if resp.StatusCode >= 300 {
		return parseError("GET", path, resp.StatusCode, body)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Data == nil {
		return fmt.Errorf("api: GET %s: answer without data", path)
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("api: GET %s: decode answer: %w", path, err)
	}
	return nil
}
