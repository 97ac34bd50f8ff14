package api

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseErrorDialects(t *testing.T) {
	e := parseError("POST", "/v1/carnet", 400, []byte(`{"code":3500034,"error":"validation_error","error_description":{"property":"/parcels/0/expire_at","message":"A string não corresponde ao modelo"}}`))
	if e.Code != 3500034 || e.Err != "validation_error" || e.Property != "/parcels/0/expire_at" || e.Description != "A string não corresponde ao modelo" || e.Problem != nil {
		t.Fatalf("property form %+v", e)
	}
	if s := e.Error(); s != "api: POST /v1/carnet: 400 3500034 validation_error: /parcels/0/expire_at: A string não corresponde ao modelo" {
		t.Fatalf("Error() %q", s)
	}
	e = parseError("PUT", "/v1/carnet/1/parcels", 400, []byte(`{"code":3500101,"error":"update_parcels","error_description":"Parcela 2"}`))
	if e.Code != 3500101 || e.Description != "Parcela 2" || e.Property != "" {
		t.Fatalf("string form %+v", e)
	}
	e = parseError("PUT", "/v2/cobv/abc", 400, []byte(`{"type":"https://pix.bcb.gov.br/api/v2/error/CobVOperacaoInvalida","title":"Cobrança inválida.","status":400,"detail":"A requisição não respeita o schema.","violacoes":[{"razao":"O campo cobv.valor.original não é string","propriedade":"cobv.valor.original"}]}`))
	if e.Problem == nil || e.Problem.TypeName() != "CobVOperacaoInvalida" || e.Problem.Status != 400 || len(e.Problem.Violacoes) != 1 ||
		e.Problem.Violacoes[0].Propriedade != "cobv.valor.original" || e.Code != 0 {
		t.Fatalf("problem %+v", e)
	}
	if s := e.Error(); !strings.Contains(s, "CobVOperacaoInvalida") || !strings.Contains(s, "cobv.valor.original: O campo") {
		t.Fatalf("problem Error() %q", s)
	}
	e = parseError("PUT", "/v2/gn/pix/x", 400, []byte(`{"nome":"chave_invalida","mensagem":"Chave Pix inválida"}`))
	if e.Nome != "chave_invalida" || e.Mensagem != "Chave Pix inválida" || !strings.Contains(e.Error(), "chave_invalida: Chave Pix inválida") {
		t.Fatalf("nome/mensagem %+v", e)
	}
	e = parseError("GET", "/v1/x", 502, []byte("<html>Bad Gateway</html>"))
	if e.Status != 502 || e.Description != "<html>Bad Gateway</html>" {
		t.Fatalf("non-JSON %+v", e)
	}
	e = parseError("POST", "/oauth/token", 401, []byte(`{"error":"invalid_client","error_description":"Credenciais inválidas"}`))
	if e.Err != "invalid_client" || e.Description != "Credenciais inválidas" {
		t.Fatalf("oauth %+v", e)
	}
}

func TestErrorNeverShowsSecrets(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
	e := parseError("GET", "/v1/notification/"+jwt, 401, []byte(`{"code":401,"error":"unauthorized","error_description":"Bearer `+jwt+` Client_Secret_abcdef0123 recusado; cartão 4111111111111111"}`))
	s := e.Error()
	for _, leak := range []string{jwt, "Client_Secret_abcdef0123", "4111111111111111"} {
		if strings.Contains(s, leak) {
			t.Fatalf("Error() leaks %q: %s", leak, s)
		}
	}
	if !strings.Contains(s, "411111******1111") {
		t.Fatalf("card not masked as first 6 + last 4: %s", s)
	}
}

func TestRedactString(t *testing.T) {
	for in, want := range map[string]string{
		"Authorization: Bearer abc.def-ghi":                    "Authorization: Bearer [redacted]",
		"basic Q2xpZW50X0lkOnNlY3JldA==":                       "basic [redacted]",
		`{"client_secret":"s3cr3t","x":1}`:                     `{"client_secret":"[redacted]","x":1}`,
		"password=hunter2&user=a":                              `password="[redacted]"&user=a`,
		"card 5555555555554444 ok":                             "card 555555******4444 ok",
		"barcode 36490000192345678901234567890123456789012345": "barcode 36490000192345678901234567890123456789012345",
		"cpf 52998224725 cnpj 12345678000195":                  "cpf ***.982.247-** cnpj 12.345.***/****-**",
		"custom_id=rm-20261123-529.982.247-25&x=1":             "custom_id=rm-20261123-***.982.247-**&x=1",
		"not a cpf 12345678900, not a cnpj 11222333000180":     "not a cpf 12345678900, not a cnpj 11222333000180",
		"": "",
	} {
		if got := RedactString(in); got != want {
			t.Errorf("RedactString(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAmbiguousWrapping(t *testing.T) {
	e := &Error{Status: 500, Method: "POST", Path: "/v1/charge", Ambiguous: true}
	if !errors.Is(e, ErrAmbiguous) || !IsAmbiguous(e) {
		t.Fatal("ambiguous Error does not wrap ErrAmbiguous")
	}
	if IsAmbiguous(&Error{Status: 400}) {
		t.Fatal("a 400 is ambiguous")
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		h    string
		want time.Duration
		ok   bool
	}{
		{"7", 7 * time.Second, true},
		{" 0 ", 0, true},
		{"Sat, 10 Jan 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sat, 10 Jan 2026 11:00:00 GMT", 0, true},
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, ok := parseRetryAfter(tc.h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffIsFullJitterCapped(t *testing.T) {
	c, err := New(Config{BaseURL: "http://x", ClientID: "a", ClientSecret: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for attempt := 0; attempt < 12; attempt++ {
		ceil := min(DefaultRetryBase<<attempt, DefaultRetryCap)
		var maxSeen time.Duration
		for range 300 {
			d := c.backoff(attempt)
			if d < 0 || d > ceil {
				t.Fatalf("attempt %d: backoff %v outside [0, %v]", attempt, d, ceil)
			}
			maxSeen = max(maxSeen, d)
		}
		if maxSeen < ceil/2 {
			t.Fatalf("attempt %d: max %v of 300 draws, ceiling %v: not full jitter", attempt, maxSeen, ceil)
		}
	}
	if c.backoff(200) > DefaultRetryCap {
		t.Fatal("overflowing attempt exceeds the cap")
	}
}

func TestIdempotentMethods(t *testing.T) {
	for m, want := range map[string]bool{"GET": true, "PUT": true, "PATCH": true, "DELETE": true, "POST": false} {
		if idempotent(m) != want {
			t.Errorf("idempotent(%s) != %v", m, want)
		}
	}
}

func TestConfigChecks(t *testing.T) {
	for _, cfg := range []Config{
		{ClientID: "a", ClientSecret: "b"},
		{BaseURL: "http://x", ClientSecret: "b"},
		{BaseURL: "http://x", ClientID: "a", ClientSecret: "b", P12File: "/nonexistent.p12"},
		{BaseURL: "http://x", ClientID: "a", ClientSecret: "b", CertFile: "/c.pem"},
		{BaseURL: "http://x", ClientID: "a", ClientSecret: "b", P12File: "x.p12", CertFile: "c", KeyFile: "k"},
		{BaseURL: "http://x", ClientID: "a", ClientSecret: "b", CAFile: "/nonexistent-ca.pem"},
		{BaseURL: "http://x", ClientID: "a", ClientSecret: "b", CAFile: "x", HTTPClient: http.DefaultClient},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("config %+v accepted", cfg)
		} else if strings.Contains(err.Error(), "b\"") {
			t.Errorf("error shows the secret: %v", err)
		}
	}
}
