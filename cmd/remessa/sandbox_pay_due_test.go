package main

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"remessa/api"
	"remessa/internal/sandboxclient"
	"remessa/sandbox"
	"remessa/sandbox/clock"
	"remessa/sandbox/sandboxtest"
)

// TestSandboxPayDueCLI: "remessa sandbox pay parcel|cob" without --value
// pays what is owed on the day, and says how it was made up.
func TestSandboxPayDueCLI(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 3, 2, 13, 0, 0, 0, time.UTC))
	rn := sandboxtest.Start(t, sandbox.Config{Clock: clk})
	c := sandboxclient.Client(t, rn, func(cfg *api.Config) { cfg.Now = clk.Now })
	ctx := context.Background()
	cn, err := c.CreateCarnet(ctx, api.CarnetRequest{Items: []api.Item{{Name: "Curso", Value: 15000, Amount: 1}},
		Customer: api.Customer{Name: "Maria Souza", CPF: "52998224725", PhoneNumber: "41999998888"},
		ExpireAt: "2026-03-10", Repeats: 2, Configurations: &api.CarnetConfigurations{Fine: 200, Interest: 33}})
	if err != nil {
		t.Fatal(err)
	}
	validade := 30
	cv, err := c.PutCobV(ctx, "clicobv000000000000000000000001", api.CobVRequest{
		Calendario: api.PixCalendario{DataDeVencimento: "2026-03-10", ValidadeAposVencimento: &validade},
		Devedor:    api.PixPessoa{CPF: "52998224725", Nome: "Maria Souza"}, Chave: rn.PixKey,
		Valor: api.PixValor{Original: "200.00", Multa: &api.PixModalidade{Modalidade: 2, ValorPerc: "2.00"},
			Juros: &api.PixModalidade{Modalidade: 3, ValorPerc: "1.00"}}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCLI("sandbox", "clock", "--to", "2026-03-20", "--url", rn.URL); code != exitOK {
		t.Fatalf("clock --to: %d %q", code, errs)
	}
	// Due 2026-03-10, paid 03-20: 150,00 + 2 % (3,00) + 0,033 % × 10 days
	// (0,495 → 0,50) = 153,50.
	code, out, errs := runCLI("sandbox", "pay", "parcel", strconv.FormatInt(cn.CarnetID, 10), "1", "--url", rn.URL)
	if want := "paga: R$ 153,50 em 2026-03-20 (devido R$ 153,50: multa R$ 3,00, juros R$ 0,50 (10 dias))"; code != exitOK || !strings.Contains(out, want) {
		t.Fatalf("pay parcel late: %d %q %q, want %q", code, out, errs, want)
	}
	// 10 days late: 200,00 + 2 % (4,00) + 1 % a month × 10/30 (0,666… → 0,67) = 204,67.
	code, out, errs = runCLI("sandbox", "pay", "cob", cv.Txid, "--url", rn.URL)
	if want := "valor 204.67"; code != exitOK || !strings.Contains(out, want) || !strings.Contains(out, "multa 4.00, juros 0.67") {
		t.Fatalf("pay cobv late: %d %q %q, want %q", code, out, errs, want)
	}
}
