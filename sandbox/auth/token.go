package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"remessa/sandbox/httpx"
)

// Token kinds (the "typ" claim).
const (
	tokV1      = "access"
	tokRefresh = "refresh"
	tokPix     = "pix"
)

type claims struct {
	Typ   string `json:"typ"`
	Sub   string `json:"sub"` // client_id
	Acc   string `json:"acc"` // account id
	Iat   int64  `json:"iat"`
	Exp   int64  `json:"exp"`
	Jti   string `json:"jti"`
	Scope string `json:"scope,omitempty"`
}

var jwtHeader = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func (s *Service) sign(c claims) string {
	p, _ := json.Marshal(c)
	head := jwtHeader + "." + base64.RawURLEncoding.EncodeToString(p)
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(head))
	return head + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

var (
	errNoToken      = errors.New("token de acesso ausente")
	errBadToken     = errors.New("token de acesso inválido")
	errExpiredToken = errors.New("token de acesso expirado")
	errNoApp        = errors.New("aplicação do token não existe mais")
)

// verified is a token whose signature was checked already.
type verified struct {
	typ, sub, acc string
	exp           int64
}

const verifiedCacheMax = 4096

// verify checks a token's signature, kind and expiry on the sandbox clock.
// Signature checks are cached per token (the expiry and the application
// are checked on every call).
func (s *Service) verify(tok, typ string) (*App, *claims, error) {
	if tok == "" {
		return nil, nil, errNoToken
	}
	if len(tok) > 4096 {
		return nil, nil, errBadToken
	}
	s.vmu.Lock()
	v, ok := s.vcache[tok]
	s.vmu.Unlock()
	if !ok {
		c, err := s.checkSignature(tok)
		if err != nil {
			return nil, nil, err
		}
		v = verified{typ: c.Typ, sub: c.Sub, acc: c.Acc, exp: c.Exp}
		s.vmu.Lock()
		if len(s.vcache) >= verifiedCacheMax {
			clear(s.vcache)
		}
		s.vcache[tok] = v
		s.vmu.Unlock()
	}
	if v.typ != typ {
		return nil, nil, errBadToken
	}
	if s.clk.Now().UnixMilli() >= v.exp*1000 {
		return nil, nil, errExpiredToken
	}
	app, ok := s.appByID(v.sub)
	if !ok || app.AccountID != v.acc {
		return nil, nil, errNoApp
	}
	return app, &claims{Typ: v.typ, Sub: v.sub, Acc: v.acc, Exp: v.exp}, nil
}

// checkSignature checks the HMAC of a token and decodes its claims.
func (s *Service) checkSignature(tok string) (*claims, error) {
	i := strings.LastIndexByte(tok, '.')
	if i < 0 || strings.Count(tok, ".") != 2 {
		return nil, errBadToken
	}
	sig, err := base64.RawURLEncoding.DecodeString(tok[i+1:])
	if err != nil {
		return nil, errBadToken
	}
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(tok[:i]))
	if !hmac.Equal(sig, m.Sum(nil)) {
		return nil, errBadToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(tok[strings.IndexByte(tok, '.')+1 : i])
	if err != nil {
		return nil, errBadToken
	}
	var c claims
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, errBadToken
	}
	return &c, nil
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// V1 wraps a charges API handler: it requires a Bearer token from POST
// /v1/authorize and puts the Principal in the request context; otherwise
// it answers 401 {"code":401,"error":"unauthorized","error_description":...}.
func (s *Service) V1(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		app, _, err := s.verify(bearer(r), tokV1)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="remessa-sandbox"`)
			httpx.V1Error(w, http.StatusUnauthorized, 401, "unauthorized", describe(err))
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), s.principalOf(app))))
	})
}

// Pix wraps a Pix API handler: it requires a Bearer token from POST
// /oauth/token (401 problem otherwise) and, when scopes is not empty, that
// the application has at least one of them (403 problem AcessoNegado).
func (s *Service) Pix(scopes []string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		app, _, err := s.verify(bearer(r), tokPix)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="remessa-sandbox"`)
			httpx.Problem(w, http.StatusUnauthorized, "NaoAutorizado", "Não autorizado", describe(err), nil)
			return
		}
		p := s.principalOf(app)
		if len(scopes) > 0 && !slices.ContainsFunc(scopes, func(sc string) bool { return slices.Contains(p.Scopes, sc) }) {
			httpx.Problem(w, http.StatusForbidden, "AcessoNegado", "Acesso Negado",
				"A aplicação não tem o escopo necessário para esta operação: "+strings.Join(scopes, " ou "), nil)
			return
		}
		h.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}

func describe(err error) string {
	switch err {
	case errNoToken:
		return "Token de acesso ausente: envie o cabeçalho Authorization: Bearer <token>"
	case errExpiredToken:
		return "Token de acesso expirado: obtenha um novo token"
	case errNoApp:
		return "Token de acesso de uma aplicação inexistente ou inativa"
	}
	return "Token de acesso inválido"
}

// AppOf returns the client_id a request acts for, from its Bearer token
// (either kind) or its Basic credentials' user name, without checking the
// secret. Faults use it to count the daily quota per application.
func (s *Service) AppOf(r *http.Request) (string, bool) {
	if tok := bearer(r); tok != "" {
		for _, typ := range []string{tokV1, tokPix} {
			if app, _, err := s.verify(tok, typ); err == nil {
				return app.ClientID, true
			}
		}
		return "", false
	}
	if id, _, ok := r.BasicAuth(); ok && id != "" {
		return id, true
	}
	return "", false
}

// Register serves the token routes: POST /v1/authorize and POST /oauth/token.
func (s *Service) Register(mux httpx.Mux) {
	mux.HandleFunc("POST /v1/authorize", s.authorize)
	mux.HandleFunc("POST /oauth/token", s.pixToken)
}

type grant struct {
	GrantType    string `json:"grant_type"`
	RefreshToken string `json:"refresh_token"`
}

// readGrant reads {grant_type, refresh_token} from a JSON or form body.
func readGrant(r *http.Request) (grant, string) {
	var g grant
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		return g, "Não foi possível ler o corpo da requisição"
	}
	if ct == "application/x-www-form-urlencoded" {
		v, err := url.ParseQuery(string(body))
		if err != nil {
			return g, "Corpo application/x-www-form-urlencoded inválido"
		}
		g.GrantType, g.RefreshToken = v.Get("grant_type"), v.Get("refresh_token")
		return g, ""
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return g, `Corpo vazio: envie {"grant_type":"client_credentials"}`
	}
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		return g, `JSON inválido: envie {"grant_type":"client_credentials"}`
	}
	if v, ok := raw["grant_type"].(string); ok {
		g.GrantType = v
	} else if raw["grant_type"] != nil {
		return g, "grant_type deve ser uma string"
	}
	if v, ok := raw["refresh_token"].(string); ok {
		g.RefreshToken = v
	}
	return g, ""
}

// authorize is POST /v1/authorize.
func (s *Service) authorize(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="remessa-sandbox"`)
		httpx.V1Error(w, http.StatusUnauthorized, 401, "invalid_client", "Credenciais ausentes: use autenticação HTTP Basic com Client_Id e Client_Secret")
		return
	}
	app, ok := s.authenticate(id, secret)
	if !ok {
		httpx.V1Error(w, http.StatusUnauthorized, 401, "invalid_client", "Credenciais inválidas ou inativas")
		return
	}
	g, msg := readGrant(r)
	if msg != "" {
		httpx.V1Error(w, http.StatusBadRequest, 400, "invalid_request", msg)
		return
	}
	switch g.GrantType {
	case "client_credentials":
	case "refresh_token":
		rapp, _, err := s.verify(g.RefreshToken, tokRefresh)
		if err != nil || rapp.ClientID != app.ClientID {
			httpx.V1Error(w, http.StatusBadRequest, 400, "invalid_grant", "refresh_token inválido ou expirado")
			return
		}
	default:
		httpx.V1Error(w, http.StatusBadRequest, 400, "unsupported_grant_type",
			`grant_type deve ser "client_credentials" (recebido "`+truncate(g.GrantType, 40)+`")`)
		return
	}
	now := s.clk.Now()
	exp := now.Add(s.v1TTL)
	base := claims{Sub: app.ClientID, Acc: app.AccountID, Iat: now.Unix()}
	access := base
	access.Typ, access.Exp, access.Jti = tokV1, exp.Unix(), hex.EncodeToString(randomBytes(8))
	refresh := base
	refresh.Typ, refresh.Exp, refresh.Jti = tokRefresh, now.Add(2*s.v1TTL).Unix(), hex.EncodeToString(randomBytes(8))
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"access_token":  s.sign(access),
		"refresh_token": s.sign(refresh),
		"expires_in":    int64(s.v1TTL / time.Second),
		"expire_at":     strconv.FormatInt(access.Exp*1000, 10),
		"token_type":    "Bearer",
	})
}

// pixToken is POST /oauth/token.
func (s *Service) pixToken(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="remessa-sandbox"`)
		httpx.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "Credenciais ausentes: use autenticação HTTP Basic com Client_Id e Client_Secret"})
		return
	}
	app, ok := s.authenticate(id, secret)
	if !ok {
		httpx.WriteJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client",
			"error_description": "Credenciais inválidas ou inativas"})
		return
	}
	g, msg := readGrant(r)
	if msg != "" {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": msg})
		return
	}
	if g.GrantType != "client_credentials" {
		httpx.WriteJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type",
			"error_description": `grant_type deve ser "client_credentials" (recebido "` + truncate(g.GrantType, 40) + `")`})
		return
	}
	now := s.clk.Now()
	scope := strings.Join(app.Scopes, " ")
	c := claims{Typ: tokPix, Sub: app.ClientID, Acc: app.AccountID, Iat: now.Unix(),
		Exp: now.Add(s.pixTTL).Unix(), Jti: hex.EncodeToString(randomBytes(8)), Scope: scope}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"access_token": s.sign(c),
		"token_type":   "Bearer",
		"expires_in":   int64(s.pixTTL / time.Second),
		"scope":        scope,
	})
}

func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
