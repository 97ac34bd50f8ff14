package charges

import (
	"context"
	"net/http/httptest"
	"testing"

	"remessa/sandbox/httpx"
)

// A 500 of the charges module reads exactly like a 500 of the core (a
// recovered panic, an injected fault): one code, slug and description.
func TestInternalErrorSameAsCore(t *testing.T) {
	mod, core := httptest.NewRecorder(), httptest.NewRecorder()
	errInternal.write(mod)
	httpx.V1InternalError(core)
	if mod.Code != 500 || core.Code != 500 {
		t.Fatalf("status %d / %d", mod.Code, core.Code)
	}
	want := `{"code":3500000,"error":"internal_server_error","error_description":"Erro interno do servidor"}` + "\n"
	if mod.Body.String() != want || core.Body.String() != want {
		t.Fatalf("module %q\ncore   %q\nwant   %q", mod.Body, core.Body, want)
	}
}

// pubKey is the account's tokenization public key as stored (tests).
func (m *Module) pubKey(account string) string {
	k, err := m.keys.Get(context.Background(), account, "rsa")
	if err != nil || k == nil {
		return ""
	}
	return k.pubPEM
}
