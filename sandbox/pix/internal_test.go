package pix

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// A 500 of the Pix module has the same type, title and detail as a 500 of
// the core (httpx.ProblemInternalError) and no internals.
func TestInternalErrorSameAsCore(t *testing.T) {
	rec := httptest.NewRecorder()
	writeErr(rec, internal(errSecret{}))
	var p Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if rec.Code != 500 || p.Type != ProblemBase+"ErroInterno" || p.Title != "Erro interno" || p.Detail != "Erro interno do servidor" || p.Status != 500 {
		t.Fatalf("%d %+v", rec.Code, p)
	}
	if strings.Contains(rec.Body.String(), "segredo") {
		t.Fatalf("internals leaked: %s", rec.Body)
	}
}

type errSecret struct{}

func (errSecret) Error() string { return "segredo do disco" }
