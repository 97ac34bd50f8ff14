package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"remessa/sandbox/charges"
	"remessa/sandbox/outbox"
)

// Client calls the control routes of a running sandbox (what
// "remessa sandbox pay|clock|refund" use).
type Client struct {
	BaseURL string       // e.g. "http://127.0.0.1:8080"
	HTTP    *http.Client // default: 30 s timeout
}

// ErrUnreachable wraps a failure to reach the sandbox at all.
var ErrUnreachable = errors.New("sandbox inacessível")

// Error is a refusal answered by the sandbox.
type Error struct {
	Status   int
	Code     int    // charges API code, when the charges module refused
	Slug     string // error slug or Pix problem type
	Property string // JSON pointer or property, when known
	Message  string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d", e.Status)
	if e.Code != 0 {
		fmt.Fprintf(&b, " código %d", e.Code)
	}
	if e.Slug != "" {
		b.WriteString(" " + e.Slug)
	}
	if e.Property != "" {
		b.WriteString(" em " + e.Property)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// PixPayResult is the answer of POST /sandbox/pix/pay: Valor came in,
// Devido was owed that day (valor final = Original − Abatimento −
// Desconto + Multa + Juros), DiasAtraso the days juros counted.
type PixPayResult struct {
	EndToEndID string `json:"endToEndId"`
	Txid       string `json:"txid"`
	Valor      string `json:"valor"`
	Horario    string `json:"horario"`
	Devido     string `json:"devido,omitempty"`
	Original   string `json:"original,omitempty"`
	Abatimento string `json:"abatimento,omitempty"`
	Desconto   string `json:"desconto,omitempty"`
	Multa      string `json:"multa,omitempty"`
	Juros      string `json:"juros,omitempty"`
	DiasAtraso int    `json:"diasAtraso,omitempty"`
}

// Clock returns the sandbox's clock.
func (c *Client) Clock(ctx context.Context) (ClockState, error) {
	var s ClockState
	err := c.do(ctx, http.MethodGet, "/sandbox/clock", "", nil, &s)
	return s, err
}

// Advance moves the sandbox's clock forward.
func (c *Client) Advance(ctx context.Context, req AdvanceRequest) (ClockState, error) {
	var s ClockState
	err := c.do(ctx, http.MethodPost, "/sandbox/clock/advance", "", req, &s)
	return s, err
}

// PayCharge pays a slip, a carnet parcel or a card charge by charge id.
func (c *Client) PayCharge(ctx context.Context, id int64, req PayRequest, payeeCode string) (PayResult, error) {
	var r PayResult
	err := c.do(ctx, http.MethodPost, "/sandbox/charges/"+strconv.FormatInt(id, 10)+"/pay", payeeCode, req, &r)
	return r, err
}

// PayParcel pays parcel n of a carnet.
func (c *Client) PayParcel(ctx context.Context, carnetID int64, n int, req PayRequest, payeeCode string) (PayResult, error) {
	var r PayResult
	path := "/sandbox/carnets/" + strconv.FormatInt(carnetID, 10) + "/parcels/" + strconv.Itoa(n) + "/pay"
	err := c.do(ctx, http.MethodPost, path, payeeCode, req, &r)
	return r, err
}

// RefundCard refunds a paid card charge (cents 0 = all not yet refunded).
func (c *Client) RefundCard(ctx context.Context, id int64, cents int64, payeeCode string) (PayResult, error) {
	var r PayResult
	req := RefundRequest{}
	if cents > 0 {
		req.Value = &cents
	}
	err := c.do(ctx, http.MethodPost, "/sandbox/cards/"+strconv.FormatInt(id, 10)+"/refund", payeeCode, req, &r)
	return r, err
}

// PayPix pays a cob or cobv by txid or by its BR Code ("copia e cola");
// valor is "" (the charge's value) or a Pix amount "10.00".
func (c *Client) PayPix(ctx context.Context, txidOrBRCode, valor string) (PixPayResult, error) {
	body := map[string]string{}
	if strings.HasPrefix(txidOrBRCode, "000201") {
		body["pixCopiaECola"] = txidOrBRCode
	} else {
		body["txid"] = txidOrBRCode
	}
	if valor != "" {
		body["valor"] = valor
	}
	var r PixPayResult
	err := c.do(ctx, http.MethodPost, "/sandbox/pix/pay", "", body, &r)
	return r, err
}

func (c *Client) do(ctx context.Context, method, path, payeeCode string, in, out any) error {
	base := strings.TrimRight(c.BaseURL, "/")
	u, err := url.Parse(base + path)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("URL do sandbox %q inválida: use por exemplo http://127.0.0.1:8080", c.BaseURL)
	}
	if payeeCode != "" {
		u.RawQuery = url.Values{"payee_code": {payeeCode}}.Encode()
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%w em %s: %v", ErrUnreachable, base, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%w em %s: %v", ErrUnreachable, base, err)
	}
	if resp.StatusCode >= 300 {
		return decodeError(resp.StatusCode, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("resposta inesperada de %s %s (HTTP %d): %v", method, path, resp.StatusCode, err)
		}
	}
	return nil
}

// decodeError reads the three error shapes a control route may answer:
// the control routes' own, the charges API's and a Pix problem.
func decodeError(status int, raw []byte) error {
	var v struct {
		Error            string          `json:"error"`
		Property         string          `json:"property"`
		Message          string          `json:"message"`
		Code             int             `json:"code"`
		ErrorDescription json.RawMessage `json:"error_description"`
		Type             string          `json:"type"`
		Title            string          `json:"title"`
		Detail           string          `json:"detail"`
	}
	e := &Error{Status: status}
	if json.Unmarshal(raw, &v) != nil {
		e.Message = strings.TrimSpace(string(raw))
		if len(e.Message) > 200 {
			e.Message = e.Message[:200] + "…"
		}
		return e
	}
	e.Slug, e.Property, e.Message, e.Code = v.Error, v.Property, v.Message, v.Code
	if len(v.ErrorDescription) > 0 {
		var s string
		var pe struct{ Property, Message string }
		if json.Unmarshal(v.ErrorDescription, &s) == nil {
			e.Message = s
		} else if json.Unmarshal(v.ErrorDescription, &pe) == nil {
			e.Property, e.Message = pe.Property, pe.Message
		}
	}
	if v.Type != "" {
		e.Slug = v.Type[strings.LastIndex(v.Type, "/")+1:]
		e.Message = strings.TrimSpace(v.Title + " " + v.Detail)
	}
	return e
}

// Outbox lists the sandbox's outgoing deliveries; state is "", "pending"
// or "done".
func (c *Client) Outbox(ctx context.Context, state string) (outbox.Listing, error) {
	var l outbox.Listing
	path := "/sandbox/outbox"
	if state != "" {
		path += "?state=" + url.QueryEscape(state)
	}
	err := c.do(ctx, http.MethodGet, path, "", nil, &l)
	return l, err
}

// Resends lists what the resend routes accepted (GET /sandbox/resends),
// oldest first; account "" lists every account's.
func (c *Client) Resends(ctx context.Context, account string) ([]charges.Resend, error) {
	var a ResendsAnswer
	path := "/sandbox/resends"
	if account != "" {
		path += "?account=" + url.QueryEscape(account)
	}
	err := c.do(ctx, http.MethodGet, path, "", nil, &a)
	return a.Resends, err
}
