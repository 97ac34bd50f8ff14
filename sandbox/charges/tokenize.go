package charges

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
	"net/http"
	"strconv"
	"strings"
	"time"

	"remessa/rules"
	"remessa/sandbox/httpx"
	"remessa/sandbox/store"
)

// cardKey is an account's RSA key for card tokenization.
type cardKey struct {
	priv   *rsa.PrivateKey
	pubPEM string
}

type storedKey struct {
	PrivatePEM string `json:"private_pem"`
}

func decodeCardKey(raw []byte) (*cardKey, error) {
	var s storedKey
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	blk, _ := pem.Decode([]byte(s.PrivatePEM))
	if blk == nil {
		return nil, errors.New("no PEM block")
	}
	priv, err := x509.ParsePKCS1PrivateKey(blk.Bytes)
	if err != nil {
		return nil, err
	}
	return newCardKey(priv)
}

func newCardKey(priv *rsa.PrivateKey) (*cardKey, error) {
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	return &cardKey{priv: priv, pubPEM: string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}, nil
}

// cardToken is a payment_token. Card data is never stored: only brand,
// mask and the last digit (for the sandbox simulation).
type cardToken struct {
	Account   string    `json:"account"`
	Brand     string    `json:"brand"`
	Mask      string    `json:"mask"`
	Last      string    `json:"last"`
	Reuse     bool      `json:"reuse"`
	Used      bool      `json:"used"`
	CreatedAt time.Time `json:"created_at"`
}

// keyFor returns (creating and persisting on first use) the account's
// tokenization key.
func (m *Module) keyFor(ctx context.Context, account string) (*cardKey, error) {
	k, err := m.keys.Get(ctx, account, "rsa")
	if err != nil || k != nil {
		return k, err
	}
	m.keyMu.Lock()
	defer m.keyMu.Unlock()
	if k, err = m.keys.Get(ctx, account, "rsa"); err != nil || k != nil {
		return k, err
	}
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("charges: generate tokenization key: %w", err)
	}
	k, err = newCardKey(priv)
	if err != nil {
		return nil, err
	}
	privPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(priv)}))
	raw, err := json.Marshal(storedKey{PrivatePEM: privPEM})
	if err != nil {
		return nil, err
	}
	if err := m.d.Store.Tx(ctx, func(tx *store.Tx) error {
		// Another instance over the same database may have made the
		// account's key meanwhile: keep that one.
		cur, err := m.keys.TxGet(tx, account, "rsa")
		if err != nil || cur != nil {
			k = cur
			return err
		}
		return m.keys.PutRaw(tx, account, "rsa", raw, k)
	}); err != nil {
		return nil, err
	}
	return k, nil
}

func cors(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Content-Type, Account-Code")
}

func (m *Module) accountByPayee(code string) (string, *Error) {
	if m.d.Auth != nil {
		if a, ok := m.d.Auth.AccountByPayeeCode(code); ok {
			return a.ID, nil
		}
	}
	return "", &Error{Status: http.StatusUnauthorized, Code: CodeInvalidAccount, Slug: "invalid_account",
		Desc: "Identificador de conta inválido"}
}

// handlePubkey serves GET /v1/pubkey?code=<payee_code>.
func (m *Module) handlePubkey(w http.ResponseWriter, r *http.Request) {
	cors(w)
	account, e := m.accountByPayee(r.URL.Query().Get("code"))
	if e != nil {
		e.write(w)
		return
	}
	k, err := m.keyFor(r.Context(), account)
	if err != nil {
		m.log.Error().Err(err).Msg("tokenization key")
		errInternal.write(w)
		return
	}
	httpx.V1Data(w, k.pubPEM)
}

// cardData is the JSON the payer's browser encrypts. Expiration fields
// come as strings in the JS library and as numbers from some clients.
type cardData struct {
	Brand           *string    `json:"brand"`
	Number          *string    `json:"number"`
	CVV             *string    `json:"cvv"`
	ExpirationMonth *flexValue `json:"expiration_month"`
	ExpirationYear  *flexValue `json:"expiration_year"`
	Reuse           *bool      `json:"reuse"`
	HolderName      *string    `json:"holder_name"`
	HolderDocument  *string    `json:"holder_document"`
	Salt            *string    `json:"salt"`
}

// flexValue accepts a JSON string or integer and keeps its text.
type flexValue string

// UnmarshalJSON accepts "05" or 5.
func (f *flexValue) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*f = flexValue(v)
		return nil
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return fmt.Errorf("esperado texto ou inteiro")
	}
	*f = flexValue(s)
	return nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// validCard checks decrypted card data.
func validCard(c *cardData, now time.Time) *Error {
	if c.Brand == nil {
		return required("/brand")
	}
	if !validBrands[*c.Brand] {
		return invalidBrand(*c.Brand)
	}
	if c.Number == nil {
		return required("/number")
	}
	n := strings.ReplaceAll(*c.Number, " ", "")
	if !allDigits(n) || len(n) < 13 || len(n) > 19 {
		return invalid("/number", "Número do cartão inválido: de 13 a 19 dígitos")
	}
	*c.Number = n
	if c.CVV == nil {
		return required("/cvv")
	}
	if !allDigits(*c.CVV) || len(*c.CVV) < 3 || len(*c.CVV) > 4 {
		return invalid("/cvv", "Código de segurança inválido: 3 ou 4 dígitos")
	}
	if c.ExpirationMonth == nil {
		return required("/expiration_month")
	}
	mon, err := strconv.Atoi(string(*c.ExpirationMonth))
	if err != nil || mon < 1 || mon > 12 {
		return invalid("/expiration_month", "Mês de validade inválido: de 1 a 12")
	}
	if c.ExpirationYear == nil {
		return required("/expiration_year")
	}
	ys := string(*c.ExpirationYear)
	year, err := strconv.Atoi(ys)
	if err != nil || (len(ys) != 2 && len(ys) != 4) {
		return invalid("/expiration_year", "Ano de validade inválido: use AAAA")
	}
	if len(ys) == 2 {
		year += 2000
	}
	today := rules.Today(now)
	if year < today.Year() || (year == today.Year() && mon < int(today.Month())) {
		return invalid("/expiration_year", "Cartão vencido")
	}
	if year > today.Year()+20 {
		return invalid("/expiration_year", "Ano de validade inválido")
	}
	if c.HolderDocument != nil && *c.HolderDocument != "" {
		if !rules.ValidCPF(*c.HolderDocument) && !rules.ValidCNPJ(*c.HolderDocument) {
			return invalid("/holder_document", "Documento do titular inválido")
		}
	}
	return nil
}

// handleCardJSONP serves GET /v1/card/{payee_code}/jsonp?data=<cipher>.
func (m *Module) handleCardJSONP(w http.ResponseWriter, r *http.Request) {
	cors(w)
	account, e := m.accountByPayee(r.PathValue("payee_code"))
	if e != nil {
		e.write(w)
		return
	}
	tok, e := m.tokenize(r.Context(), account, r.URL.Query().Get("data"))
	if e != nil {
		e.write(w)
		return
	}
	httpx.V1Data(w, tok)
}

// PaymentTokenResult is the data of a tokenization answer.
type PaymentTokenResult struct {
	PaymentToken string `json:"payment_token"`
	CardMask     string `json:"card_mask"`
}

func (m *Module) tokenize(ctx context.Context, account, data string) (*PaymentTokenResult, *Error) {
	if data == "" {
		return nil, required("/data")
	}
	data = strings.ReplaceAll(data, " ", "+")
	cipher, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		if cipher, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(data, "=")); err != nil {
			return nil, invalid("/data", "data deve ser o cartão cifrado em base64")
		}
	}
	k, err := m.keyFor(ctx, account)
	if err != nil {
		m.log.Error().Err(err).Msg("tokenization key")
		return nil, errInternal
	}
	// PKCS #1 v1.5, as the real service's tokenization: clients (its JS
	// library, api.Client) encrypt with it.
	//lint:ignore SA1019 the real service's card tokenization is PKCS #1 v1.5
	plain, err := rsa.DecryptPKCS1v15(nil, k.priv, cipher)
	if err != nil {
		return nil, invalid("/data", "Não foi possível decifrar os dados do cartão com a chave pública desta conta (GET /v1/pubkey)")
	}
	var card cardData
	if de := httpx.DecodeBytes(plain, &card); de != nil {
		return nil, fromDecode(de)
	}
	if e := validCard(&card, m.now()); e != nil {
		return nil, e
	}
	num := *card.Number
	t := &cardToken{Account: account, Brand: *card.Brand, Mask: maskCard(num), Last: num[len(num)-1:],
		Reuse: card.Reuse != nil && *card.Reuse, CreatedAt: m.now()}
	id := randomHex(20)
	if err := m.d.Store.Tx(ctx, func(tx *store.Tx) error { return m.tokens.Put(tx, account, id, t) }); err != nil {
		m.log.Error().Err(err).Msg("persist card token")
		return nil, errInternal
	}
	return &PaymentTokenResult{PaymentToken: id, CardMask: t.Mask}, nil
}

// handleInstallmentsJSONP serves GET /v1/installments/{payee_code}/jsonp.
func (m *Module) handleInstallmentsJSONP(w http.ResponseWriter, r *http.Request) {
	cors(w)
	if _, e := m.accountByPayee(r.PathValue("payee_code")); e != nil {
		e.write(w)
		return
	}
	opts, e := installmentsQuery(r)
	if e != nil {
		e.write(w)
		return
	}
	httpx.V1Data(w, opts)
}

func installmentsQuery(r *http.Request) (InstallmentOptions, *Error) {
	q := r.URL.Query()
	brand := q.Get("brand")
	if brand == "" {
		return InstallmentOptions{}, required("/brand")
	}
	ts := q.Get("total")
	if ts == "" {
		return InstallmentOptions{}, required("/total")
	}
	total, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || total < 1 {
		return InstallmentOptions{}, invalid("/total", "total deve ser um inteiro positivo em centavos (recebido %q)", ts)
	}
	return installmentsFor(brand, total)
}

func (m *Module) handleOptions(w http.ResponseWriter, r *http.Request) {
	cors(w)
	w.WriteHeader(http.StatusNoContent)
}

// takeToken checks and marks payment_token id used for account, read in
// u's transaction (the returned copy is persisted in it).
func (m *Module) takeToken(u *update, account, id string) (*cardToken, *Error) {
	if u.tx == nil {
		return nil, errInternal
	}
	t, err := m.tokens.TxGet(u.tx, account, id)
	if err != nil {
		return nil, errInternal
	}
	if t == nil || t.Account != account {
		return nil, errf(CodeInvalidToken, "invalid_payment_token", "payment_token inválido ou de outra conta")
	}
	if t.Used && !t.Reuse {
		return nil, errf(CodeTokenUsed, "payment_token_used", "Este payment_token já foi utilizado; gere um novo (ou use reuse: true)")
	}
	cp := *t
	cp.Used = true
	return &cp, nil
}
