package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// tokenCache holds one API's access token and renews it before expiry,
// one renewal at a time: concurrent callers wait for the renewal in flight.
type tokenCache struct {
	fetch func(ctx context.Context) (string, time.Duration, error)
	now   func() time.Time

	mu       sync.Mutex
	tok      string
	renewAt  time.Time
	inflight *flight
	fetches  int // renewals made (tests)
}

type flight struct {
	done chan struct{}
	err  error
}

// renewMargin is how long before expiry a token is renewed: 30 s, or a
// quarter of the lifetime for short-lived tokens.
func renewMargin(ttl time.Duration) time.Duration { return min(30*time.Second, ttl/4) }

// get returns a valid token, renewing it when needed.
func (t *tokenCache) get(ctx context.Context) (string, error) {
	for {
		t.mu.Lock()
		if t.tok != "" && t.now().Before(t.renewAt) {
			tok := t.tok
			t.mu.Unlock()
			return tok, nil
		}
		if f := t.inflight; f != nil {
			t.mu.Unlock()
			select {
			case <-f.done:
				if f.err != nil {
					return "", f.err
				}
				continue
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		f := &flight{done: make(chan struct{})}
		t.inflight = f
		t.fetches++
		t.mu.Unlock()

		// The renewal is shared: a caller giving up must not cancel it for
		// the others, so it runs without the caller's cancellation.
		tok, ttl, err := t.fetch(context.WithoutCancel(ctx))
		t.mu.Lock()
		if err == nil {
			t.tok = tok
			t.renewAt = t.now().Add(ttl - renewMargin(ttl))
		}
		f.err = err
		t.inflight = nil
		close(f.done)
		t.mu.Unlock()
		if err != nil {
			return "", err
		}
		return tok, nil
	}
}

// drop forgets tok (after a 401) so the next get renews.
func (t *tokenCache) drop(tok string) {
	t.mu.Lock()
	if t.tok == tok {
		t.tok = ""
	}
	t.mu.Unlock()
}

// Renewals returns how many token requests the client made for api.
func (c *Client) Renewals(api API) int {
	t := &c.v1Tok
	if api == Pix {
		t = &c.pixTok
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fetches
}

// Token is the answer of POST /v1/authorize.
type Token struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token,omitempty"`
	ExpiresIn    int64  `json:"expires_in"`
	ExpireAt     string `json:"expire_at,omitempty"` // epoch milliseconds as a string
	TokenType    string `json:"token_type"`
}

// PixToken is the answer of POST /oauth/token.
type PixToken struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

var grantBody = []byte(`{"grant_type":"client_credentials"}`)

// Authorize calls POST /v1/authorize and returns the token object (the
// client's cache is not touched; v1 calls manage their own token).
func (c *Client) Authorize(ctx context.Context) (*Token, error) {
	resp, err := c.call(ctx, callSpec{api: V1, method: "POST", url: c.cfg.BaseURL + "/v1/authorize", path: "/v1/authorize",
		body: grantBody, hasBody: true, alwaysRetry: true})
	if err != nil {
		return nil, err
	}
	var t Token
	if err := json.Unmarshal(resp.Body, &t); err != nil {
		return nil, fmt.Errorf("api: POST /v1/authorize: decode answer: %w", err)
	}
	if t.AccessToken == "" {
		return nil, errors.New("api: POST /v1/authorize: answer without access_token")
	}
	return &t, nil
}

// PixAuthorize calls POST /oauth/token on the Pix API.
func (c *Client) PixAuthorize(ctx context.Context) (*PixToken, error) {
	resp, err := c.call(ctx, callSpec{api: Pix, method: "POST", url: c.cfg.PixBaseURL + "/oauth/token", path: "/oauth/token",
		body: grantBody, hasBody: true, alwaysRetry: true})
	if err != nil {
		return nil, err
	}
	var t PixToken
	if err := json.Unmarshal(resp.Body, &t); err != nil {
		return nil, fmt.Errorf("api: POST /oauth/token: decode answer: %w", err)
	}
	if t.AccessToken == "" {
		return nil, errors.New("api: POST /oauth/token: answer without access_token")
	}
	return &t, nil
}

func ttlOf(expiresIn int64, def time.Duration) time.Duration {
	if expiresIn <= 0 {
		return def
	}
	return time.Duration(expiresIn) * time.Second
}

func (c *Client) fetchV1Token(ctx context.Context) (string, time.Duration, error) {
	t, err := c.Authorize(ctx)
	if err != nil {
		return "", 0, err
	}
	return t.AccessToken, ttlOf(t.ExpiresIn, 600*time.Second), nil
}

func (c *Client) fetchPixToken(ctx context.Context) (string, time.Duration, error) {
	t, err := c.PixAuthorize(ctx)
	if err != nil {
		return "", 0, err
	}
	return t.AccessToken, ttlOf(t.ExpiresIn, 3600*time.Second), nil
}
