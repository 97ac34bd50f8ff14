package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Pix API methods. Every route answers *Error on failure with the
// service's dialect filled in (Problem for cobv, batches, split, refunds;
// Nome/Mensagem for cob and sends). Any 2xx is success: the split link
// routes answer 204 here and 201/200 in other readings of the docs.

func esc(s string) string { return url.PathEscape(s) }

// ListParams are the common list parameters: Inicio and Fim (required by
// the service), page (from 0) and page size (0 = the service default,
// 100; at most 1000).
type ListParams struct {
	Inicio, Fim    time.Time
	PaginaAtual    int
	ItensPorPagina int
}

func (p ListParams) values() url.Values {
	v := url.Values{}
	if !p.Inicio.IsZero() {
		v.Set("inicio", p.Inicio.UTC().Format(time.RFC3339))
	}
	if !p.Fim.IsZero() {
		v.Set("fim", p.Fim.UTC().Format(time.RFC3339))
	}
	if p.PaginaAtual > 0 {
		v.Set("paginacao.paginaAtual", strconv.Itoa(p.PaginaAtual))
	}
	if p.ItensPorPagina > 0 {
		v.Set("paginacao.itensPorPagina", strconv.Itoa(p.ItensPorPagina))
	}
	return v
}

func withQuery(path string, v url.Values) string {
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}

// ListCobParams filter GET /v2/cob and GET /v2/cobv.
type ListCobParams struct {
	ListParams
	CPF, CNPJ        string
	Status           string
	LocationPresente *bool
}

// ListCobVParams filter GET /v2/cobv; LoteCobVID (0 = none) keeps the
// charges of one batch.
type ListCobVParams struct {
	ListCobParams
	LoteCobVID int64
}

func (p ListCobParams) values() url.Values {
	v := p.ListParams.values()
	if p.CPF != "" {
		v.Set("cpf", p.CPF)
	}
	if p.CNPJ != "" {
		v.Set("cnpj", p.CNPJ)
	}
	if p.Status != "" {
		v.Set("status", p.Status)
	}
	if p.LocationPresente != nil {
		v.Set("locationPresente", strconv.FormatBool(*p.LocationPresente))
	}
	return v
}

// PutCob creates an immediate charge with the caller's txid (26-35
// alphanumerics).
func (c *Client) PutCob(ctx context.Context, txid string, req CobRequest) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodPut, "/v2/cob/"+esc(txid), req)
}

// CreateCob creates an immediate charge with a txid chosen by the service
// (POST /v2/cob; not retried after it may have been processed).
func (c *Client) CreateCob(ctx context.Context, req CobRequest) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodPost, "/v2/cob", req)
}

// PatchCob revises an immediate charge (only while ATIVA).
func (c *Client) PatchCob(ctx context.Context, txid string, req CobPatch) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodPatch, "/v2/cob/"+esc(txid), req)
}

// GetCob returns an immediate charge.
func (c *Client) GetCob(ctx context.Context, txid string) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodGet, "/v2/cob/"+esc(txid), nil)
}

// ListCob lists immediate charges created between Inicio and Fim.
func (c *Client) ListCob(ctx context.Context, p ListCobParams) (*CobPage, error) {
	return pixCall[CobPage](ctx, c, http.MethodGet, withQuery("/v2/cob", p.values()), nil)
}

// PutCobV creates a due-date charge.
func (c *Client) PutCobV(ctx context.Context, txid string, req CobVRequest) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodPut, "/v2/cobv/"+esc(txid), req)
}

// PatchCobV revises a due-date charge (only while ATIVA).
func (c *Client) PatchCobV(ctx context.Context, txid string, req CobPatch) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodPatch, "/v2/cobv/"+esc(txid), req)
}

// PatchCobVAbatimento sets a due-date charge's valor.abatimento to a
// fixed value of cents (modalidade 1), or removes it when cents is 0: the
// PATCH is partial and a member set to null is removed (a merge patch,
// RFC 7386), which CobPatch, whose empty members are left out, cannot say.
func (c *Client) PatchCobVAbatimento(ctx context.Context, txid string, cents int64) (*Cob, error) {
	if cents < 0 {
		return nil, fmt.Errorf("abatimento negativo: %d centavos", cents)
	}
	body := json.RawMessage(`{"valor":{"abatimento":null}}`)
	if cents > 0 {
		body = json.RawMessage(fmt.Sprintf(`{"valor":{"abatimento":{"modalidade":1,"valorPerc":"%d.%02d"}}}`, cents/100, cents%100))
	}
	return pixCall[Cob](ctx, c, http.MethodPatch, "/v2/cobv/"+esc(txid), body)
}

// GetCobV returns a due-date charge (a batch item still processing or
// denied is not a charge: 404).
func (c *Client) GetCobV(ctx context.Context, txid string) (*Cob, error) {
	return pixCall[Cob](ctx, c, http.MethodGet, "/v2/cobv/"+esc(txid), nil)
}

// ListCobV lists due-date charges; LoteCobVID keeps one batch's.
func (c *Client) ListCobV(ctx context.Context, p ListCobVParams) (*CobVPage, error) {
	return pixCall[CobVPage](ctx, c, http.MethodGet, withQuery("/v2/cobv", p.query()), nil)
}

// CobVCode is what a batch's listing gives a created charge that the run
// keeps: its payment code, location and due date. Decoding only these
// members of GET /v2/cobv costs far less than a whole Cob.
type CobVCode struct {
	Calendario struct {
		DataDeVencimento string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Txid string `json:"txid"`
	Loc  *struct {
		Location string `json:"location"`
	} `json:"loc"`
	Location      string `json:"location"`
	PixCopiaECola string `json:"pixCopiaECola"`
}

// CobVCodePage is a page of GET /v2/cobv decoded as CobVCode.
type CobVCodePage struct {
	Parametros PixParametros `json:"parametros"`
	Cobs       []CobVCode    `json:"cobs"`
}

// ListCobVCodes is ListCobV decoding only each charge's CobVCode, in one
// pass over the answer (cobvcodes.go).
func (c *Client) ListCobVCodes(ctx context.Context, p ListCobVParams) (*CobVCodePage, error) {
	path := withQuery("/v2/cobv", p.query())
	resp, err := c.Do(ctx, Pix, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	var out CobVCodePage
	if len(bytes.TrimSpace(resp.Body)) == 0 || decodeCobVCodes(resp.Body, &out) == nil {
		return &out, nil
	}
	out = CobVCodePage{}
	if err := json.Unmarshal(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("api: %s %s: decode answer: %w", http.MethodGet, RedactString(path), err)
	}
	return &out, nil
}

func (p ListCobVParams) query() url.Values {
	v := p.ListCobParams.values()
	if p.LoteCobVID != 0 {
		v.Set("loteCobVId", strconv.FormatInt(p.LoteCobVID, 10))
	}
	return v
}

// PutLoteCobV creates a batch (id is an integer, as in the central bank's
// API) or re-sends it with exactly the same txids. The service answers
// 202 at once; poll GetLoteCobV until Done.
func (c *Client) PutLoteCobV(ctx context.Context, id string, req LoteCobVRequest) error {
	return c.pix(ctx, http.MethodPut, "/v2/lotecobv/"+esc(id), req, nil)
}

// PatchLoteCobV revises some items of a batch (no new txids); 202.
func (c *Client) PatchLoteCobV(ctx context.Context, id string, req LoteCobVPatch) error {
	return c.pix(ctx, http.MethodPatch, "/v2/lotecobv/"+esc(id), req, nil)
}

// GetLoteCobV returns a batch with the status of each item.
func (c *Client) GetLoteCobV(ctx context.Context, id string) (*LoteCobV, error) {
	return pixCall[LoteCobV](ctx, c, http.MethodGet, "/v2/lotecobv/"+esc(id), nil)
}

// WaitLoteCobV polls GET /v2/lotecobv/{id} every interval (default 1 s)
// until no item is EM_PROCESSAMENTO, and returns the final batch. It stops
// with ctx (give it a deadline).
func (c *Client) WaitLoteCobV(ctx context.Context, id string, interval time.Duration) (*LoteCobV, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		l, err := c.GetLoteCobV(ctx, id)
		if err != nil {
			return nil, err
		}
		if l.Done() {
			return l, nil
		}
		if err := c.sleep(ctx, interval); err != nil {
			return l, fmt.Errorf("api: lote %s ainda em processamento: %w", id, err)
		}
	}
}

// ListLoteCobVParams filter GET /v2/lotecobv: Status keeps batches with
// an item in that status (CRIADA, NEGADA, EM_PROCESSAMENTO); CPF or CNPJ
// batches with an item for that devedor.
type ListLoteCobVParams struct {
	ListParams
	Status    string
	CPF, CNPJ string
}

// ListLoteCobV lists batches created between Inicio and Fim.
func (c *Client) ListLoteCobV(ctx context.Context, p ListLoteCobVParams) (*LoteCobVPage, error) {
	v := p.ListParams.values()
	for k, s := range map[string]string{"status": p.Status, "cpf": p.CPF, "cnpj": p.CNPJ} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return pixCall[LoteCobVPage](ctx, c, http.MethodGet, withQuery("/v2/lotecobv", v), nil)
}

// CreateSplitConfig creates a split configuration with a service id
// (POST; not retried after it may have been processed).
func (c *Client) CreateSplitConfig(ctx context.Context, req SplitConfigRequest) (*SplitConfig, error) {
	return pixCall[SplitConfig](ctx, c, http.MethodPost, "/v2/gn/split/config", req)
}

// PutSplitConfig creates or revises the configuration id (a change makes
// a new revision).
func (c *Client) PutSplitConfig(ctx context.Context, id string, req SplitConfigRequest) (*SplitConfig, error) {
	return pixCall[SplitConfig](ctx, c, http.MethodPut, "/v2/gn/split/config/"+esc(id), req)
}

// GetSplitConfig returns a configuration: revisao < 0 means the latest.
func (c *Client) GetSplitConfig(ctx context.Context, id string, revisao int) (*SplitConfig, error) {
	path := "/v2/gn/split/config/" + esc(id)
	if revisao >= 0 {
		path += "?revisao=" + strconv.Itoa(revisao)
	}
	return pixCall[SplitConfig](ctx, c, http.MethodGet, path, nil)
}

func splitKind(cobv bool) string {
	if cobv {
		return "cobv"
	}
	return "cob"
}

// LinkSplit links an active charge (cobv true: a due-date charge) to a
// split configuration.
func (c *Client) LinkSplit(ctx context.Context, cobv bool, txid, splitConfigID string) error {
	return c.pix(ctx, http.MethodPut, "/v2/gn/split/"+splitKind(cobv)+"/"+esc(txid)+"/vinculo/"+esc(splitConfigID), nil, nil)
}

// UnlinkSplit removes a charge's split link.
func (c *Client) UnlinkSplit(ctx context.Context, cobv bool, txid string) error {
	return c.pix(ctx, http.MethodDelete, "/v2/gn/split/"+splitKind(cobv)+"/"+esc(txid)+"/vinculo", nil, nil)
}

// GetCobSplit returns a charge with its split configuration.
func (c *Client) GetCobSplit(ctx context.Context, cobv bool, txid string) (*CobSplit, error) {
	return pixCall[CobSplit](ctx, c, http.MethodGet, "/v2/gn/split/"+splitKind(cobv)+"/"+esc(txid), nil)
}

// GetPix returns a received Pix.
func (c *Client) GetPix(ctx context.Context, e2eID string) (*PixRecebido, error) {
	return pixCall[PixRecebido](ctx, c, http.MethodGet, "/v2/pix/"+esc(e2eID), nil)
}

// ListPixParams filter GET /v2/pix.
type ListPixParams struct {
	ListParams
	Txid      string
	CPF, CNPJ string
	// TxidPresente and DevolucaoPresente filter on whether a Pix has a
	// txid, and a refund; nil leaves the filter out.
	TxidPresente, DevolucaoPresente *bool
}

// ListPix lists received Pix between Inicio and Fim.
func (c *Client) ListPix(ctx context.Context, p ListPixParams) (*PixPage, error) {
	v := p.ListParams.values()
	for k, s := range map[string]string{"txid": p.Txid, "cpf": p.CPF, "cnpj": p.CNPJ} {
		if s != "" {
			v.Set(k, s)
		}
	}
	for k, b := range map[string]*bool{"txIdPresente": p.TxidPresente, "devolucaoPresente": p.DevolucaoPresente} {
		if b != nil {
			v.Set(k, strconv.FormatBool(*b))
		}
	}
	return pixCall[PixPage](ctx, c, http.MethodGet, withQuery("/v2/pix", v), nil)
}

// PutDevolucao asks for a refund of a received Pix; id (1-35
// alphanumerics) makes it idempotent: a reused id answers 409.
func (c *Client) PutDevolucao(ctx context.Context, e2eID, id string, req DevolucaoRequest) (*Devolucao, error) {
	return pixCall[Devolucao](ctx, c, http.MethodPut, "/v2/pix/"+esc(e2eID)+"/devolucao/"+esc(id), req)
}

// GetDevolucao returns a refund.
func (c *Client) GetDevolucao(ctx context.Context, e2eID, id string) (*Devolucao, error) {
	return pixCall[Devolucao](ctx, c, http.MethodGet, "/v2/pix/"+esc(e2eID)+"/devolucao/"+esc(id), nil)
}

// SendPix sends a Pix (PUT /v3/gn/pix/{idEnvio}, the current route).
func (c *Client) SendPix(ctx context.Context, idEnvio string, req PixSendRequest) (*PixSendResult, error) {
	return pixCall[PixSendResult](ctx, c, http.MethodPut, "/v3/gn/pix/"+esc(idEnvio), req)
}

// SendPixV2 is SendPix on the older /v2 route.
func (c *Client) SendPixV2(ctx context.Context, idEnvio string, req PixSendRequest) (*PixSendResult, error) {
	return pixCall[PixSendResult](ctx, c, http.MethodPut, "/v2/gn/pix/"+esc(idEnvio), req)
}

// GetPixEnviado returns a sent Pix by its endToEndId.
func (c *Client) GetPixEnviado(ctx context.Context, e2eID string) (*PixEnviado, error) {
	return pixCall[PixEnviado](ctx, c, http.MethodGet, "/v2/gn/pix/enviados/"+esc(e2eID), nil)
}

// GetPixEnviadoByID returns a sent Pix by its idEnvio.
func (c *Client) GetPixEnviadoByID(ctx context.Context, idEnvio string) (*PixEnviado, error) {
	return pixCall[PixEnviado](ctx, c, http.MethodGet, "/v2/gn/pix/enviados/id-envio/"+esc(idEnvio), nil)
}

// ListPixEnviados lists sent Pix between Inicio and Fim.
func (c *Client) ListPixEnviados(ctx context.Context, p ListParams) (*PixEnviadoPage, error) {
	return pixCall[PixEnviadoPage](ctx, c, http.MethodGet, withQuery("/v2/gn/pix/enviados", p.values()), nil)
}

// PutWebhook registers webhookURL for a key of the account (deliveries
// go to webhookURL + "/pix" unless it carries ?ignorar=).
func (c *Client) PutWebhook(ctx context.Context, chave, webhookURL string) (*PixWebhook, error) {
	return pixCall[PixWebhook](ctx, c, http.MethodPut, "/v2/webhook/"+esc(chave), PixWebhook{WebhookURL: webhookURL})
}

// GetWebhook returns the webhook of a key.
func (c *Client) GetWebhook(ctx context.Context, chave string) (*PixWebhook, error) {
	return pixCall[PixWebhook](ctx, c, http.MethodGet, "/v2/webhook/"+esc(chave), nil)
}

// DeleteWebhook removes the webhook of a key.
func (c *Client) DeleteWebhook(ctx context.Context, chave string) error {
	return c.pix(ctx, http.MethodDelete, "/v2/webhook/"+esc(chave), nil, nil)
}

// ListWebhooks lists the account's webhooks.
func (c *Client) ListWebhooks(ctx context.Context, p ListParams) (*PixWebhookPage, error) {
	return pixCall[PixWebhookPage](ctx, c, http.MethodGet, withQuery("/v2/webhook", p.values()), nil)
}

// CreateEVP creates a random key (EVP) for the account.
func (c *Client) CreateEVP(ctx context.Context) (string, error) {
	var out struct {
		Chave string `json:"chave"`
	}
	err := c.pix(ctx, http.MethodPost, "/v2/gn/evp", nil, &out)
	return out.Chave, err
}

// ListEVP lists the account's random keys.
func (c *Client) ListEVP(ctx context.Context) ([]string, error) {
	var out struct {
		Chaves []string `json:"chaves"`
	}
	err := c.pix(ctx, http.MethodGet, "/v2/gn/evp", nil, &out)
	return out.Chaves, err
}

// DeleteEVP removes a random key.
func (c *Client) DeleteEVP(ctx context.Context, chave string) error {
	return c.pix(ctx, http.MethodDelete, "/v2/gn/evp/"+esc(chave), nil, nil)
}

// SandboxPayPix pays a cob or cobv on the sandbox (control route
// POST /sandbox/pix/pay on the Pix base URL, no token): the charge becomes
// CONCLUIDA, a received Pix is created and its webhook fires. Only the
// sandbox has this route.
func (c *Client) SandboxPayPix(ctx context.Context, req PixPayRequest) (*PixPayResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	const path = "/sandbox/pix/pay"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.PixBaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("api: POST %s: %w", path, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.hc.Do(hr)
	if err != nil {
		return nil, fmt.Errorf("api: POST %s: %w: %s", path, ErrAmbiguous, RedactString(err.Error()))
	}
	defer resp.Body.Close()
	c.clock.observe(resp.Header)
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("api: POST %s: read answer: %w", path, err)
	}
	if resp.StatusCode >= 300 {
		return nil, parseError(http.MethodPost, path, resp.StatusCode, data)
	}
	var out PixPayResult
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("api: POST %s: decode answer: %w", path, err)
	}
	return &out, nil
}

// pixCall makes one Pix API call and decodes its answer into a new T; the
// pointer comes back with the error too (callers look at the error first).
func pixCall[T any](ctx context.Context, c *Client, method, path string, in any) (*T, error) {
	var out T
	return &out, c.pix(ctx, method, path, in, &out)
}
