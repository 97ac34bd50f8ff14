package reports

import (
	"time"

	"remessa/pipeline/results"
)

// Fixtures: realistic results of the three job kinds. Expected totals in the
// tests are worked out by hand from these values (see the comments).

const (
	payeeOwn   = "09f8e7d6c5b4a39281706f5e4d3c2b1a" // issuing account
	payeeAgent = "a1b2c3d4e5f60718293a4b5c6d7e8f90" // split recipient (25%)
)

var fixedNow = func() time.Time { return time.Date(2026, 1, 5, 15, 4, 5, 0, time.UTC) }

func runInfo(kind results.Kind, service string) results.RunInfo {
	return results.RunInfo{
		ID: "20260105T120000Z-7f3a", JobName: "Mensalidades 2026", JobFile: "jobs/mensalidades.yaml",
		JobSHA256:   "3f79bb7b435b05321651daefd374cdc681dc06faa65e374e38337b88ca046dea",
		InputFile:   "pagadores.xlsx",
		InputSHA256: "", // set by tests that check the input
		Kind:        kind, Service: service, BaseURL: "http://127.0.0.1:41233", Account: payeeOwn,
		Operator: "ana.souza", StartedAt: "2026-01-05T12:00:00Z", FinishedAt: "2026-01-05T12:03:27Z",
		RemessaVersion: "v0.9.0", Complete: true,
	}
}

func shares(month string, agent, own int64) []results.Share {
	return []results.Share{
		{Recipient: payeeAgent, DueMonth: month, AmountCents: agent},
		{Recipient: payeeOwn, Own: true, DueMonth: month, AmountCents: own},
	}
}

// carnetFixture: 4 rows.
//
//	row 2 issued carnet, 3 parcels of R$ 100,00 (Jan, Feb, Mar 2026) = 30000; 25% split: 2500 agent / 7500 own per parcel
//	row 3 issued carnet, 2 parcels of R$ 123,45 (Jan, Feb 2026)      = 24690; 25% of 12345 = 3086 (floor) agent / 9259 own
//	row 4 refused (invalid CPF)                                      = 50000
//	row 5 denied by the service (3500034)                            = 20000
//
// In 4 rows 124690; issued 2 rows 54690; refused 1 50000; denied 1 20000.
// By due month: 2026-01 22345, 2026-02 22345, 2026-03 10000.
// Split: agent 5586 / 5586 / 2500; own 16759 / 16759 / 7500.
func carnetFixture() *results.Results {
	p := func(n int, id int64, due string, v int64, agent, own int64) results.Parcel {
		return results.Parcel{Number: n, ChargeID: id, DueDate: due, ValueCents: v, Status: "waiting",
			TypedLine:     "36490.00019 00000.000000 00" + due[2:4] + "0.000000 1 1" + "3900000" + "10000",
			Barcode:       "36491139000000100000001900000000000000000000",
			PixCopiaECola: "00020101021226830014BR.GOV.BCB.PIX2561qrcodes.sejaefi.com.br/v2/cobv/a1b2c3" + "5204000053039865802BR5905EMPRE6009SAO PAULO62070503***6304ABCD",
			Link:          "https://pagamento.sejaefi.com.br/carnet/parcel/" + due,
			PDF:           "https://download.sejaefi.com.br/parcel-" + due + ".pdf",
			Split:         shares(due[:7], agent, own)}
	}
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Carnets, "production")}
	r.Rows = []results.Row{
		{Index: 0, SourceRow: 2, Key: "C-001", PayerName: "Maria da Conceição", PayerDoc: "01234567890",
			Outcome: results.Issued, AmountCents: 30000, DueDate: "2026-01-10", CustomID: "mens-001", CarnetID: 88001,
			ChargeIDs: []int64{550001, 550002, 550003}, Link: "https://pagamento.sejaefi.com.br/carnet/88001",
			PDF: "https://download.sejaefi.com.br/carnet-88001.pdf", Cover: "https://download.sejaefi.com.br/capa-88001.pdf",
			Parcels: []results.Parcel{
				p(1, 550001, "2026-01-10", 10000, 2500, 7500),
				p(2, 550002, "2026-02-10", 10000, 2500, 7500),
				p(3, 550003, "2026-03-10", 10000, 2500, 7500),
			},
			Split: append(append(shares("2026-01", 2500, 7500), shares("2026-02", 2500, 7500)...), shares("2026-03", 2500, 7500)...)},
		{Index: 1, SourceRow: 3, Key: "C-002", PayerName: "João Pereira & Filhos <Ltda>", PayerDoc: "52998224725",
			Outcome: results.Issued, AmountCents: 24690, DueDate: "2026-01-15", CarnetID: 88002,
			ChargeIDs: []int64{550004, 550005},
			Parcels: []results.Parcel{
				p(1, 550004, "2026-01-15", 12345, 3086, 9259),
				p(2, 550005, "2026-02-15", 12345, 3086, 9259),
			},
			Split: append(shares("2026-01", 3086, 9259), shares("2026-02", 3086, 9259)...)},
		{Index: 2, SourceRow: 4, Key: "C-003", PayerName: "Pedro Álvares", PayerDoc: "11111111111",
			Outcome: results.Refused, AmountCents: 50000, DueDate: "2026-01-20",
			Problems: []results.Problem{{Code: "cpf_invalido", Field: "payer.cpf", Column: "C", Header: "CPF",
				Value: "111.111.111-11", Message: "CPF inválido: dígitos verificadores não conferem",
				MessageEN: "invalid CPF: check digits do not match"}}},
		{Index: 3, SourceRow: 5, Key: "C-004", PayerName: "Luísa Mendes", PayerDoc: "39053344705",
			Outcome: results.Denied, AmountCents: 20000, DueDate: "2026-01-25",
			Problems: []results.Problem{{Code: "3500034", Field: "message",
				Message: "Propriedade inválida: message deve ter no máximo 80 caracteres", MessageEN: "Invalid property: message must be at most 80 characters",
				Action: "Encurte a mensagem do carnê para até 80 caracteres.", ActionEN: "Shorten the carnet message to at most 80 characters."}}},
	}
	r.Compute()
	return r
}

// cobvFixture: 5 cobv rows in one batch, 3 issued and 2 denied (NEGADA).
//
//	issued 15000 (2026-02-05) + 2550 (2026-02-05) + 99999 (2026-03-05) = 117549
//	denied 5000 + 1 = 5001; in 5 rows 122550.
//	By due month: 2026-02 17550, 2026-03 99999.
func cobvFixture() *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Cobv, "sandbox")}
	r.Run.PixBaseURL = "http://127.0.0.1:41234"
	issued := func(i int, key, name, doc string, cents int64, due, txid string) results.Row {
		return results.Row{Index: i, SourceRow: i + 2, Key: key, PayerName: name, PayerDoc: doc,
			Outcome: results.Issued, AmountCents: cents, DueDate: due, Txid: txid, BatchID: "lote202601",
			PixCopiaECola: "00020101021226900014br.gov.bcb.pix2568pix.example.com/qr/v2/cobv/" + txid + "5204000053039865802BR5913Escola Aurora6009SAO PAULO62070503***63041D3A",
			Location:      "pix.example.com/qr/v2/cobv/" + txid}
	}
	denied := func(i int, key, name, doc string, cents int64, due, msg string) results.Row {
		return results.Row{Index: i, SourceRow: i + 2, Key: key, PayerName: name, PayerDoc: doc,
			Outcome: results.Denied, AmountCents: cents, DueDate: due, BatchID: "lote202601",
			Txid:     "cobvDenied" + key + "00000000000000000000",
			Problems: []results.Problem{{Code: "lote_negada", Message: msg}}}
	}
	r.Rows = []results.Row{
		issued(0, "A1", "Ana Lima", "01234567890", 15000, "2026-02-05", "remessa7f3a0000000000000000000000001"),
		denied(1, "A2", "Bruno Costa", "12345678909", 5000, "2026-02-05", "cobv negada: o devedor informado não é válido"),
		issued(2, "A3", "Carla Dias", "11222333000181", 2550, "2026-02-05", "remessa7f3a0000000000000000000000003"),
		denied(3, "A4", "Diego Faria", "98765432100", 1, "2026-03-05", "cobv negada: valor abaixo do mínimo"),
		issued(4, "A5", "Eva Gomes", "52998224725", 99999, "2026-03-05", "remessa7f3a0000000000000000000000005"),
	}
	r.Compute()
	return r
}

// boletoFixture: 4 slips on the embedded service.
//
//	row 2 issued 123456 (2026-01-30); row 3 ambiguous 7890 (no problem recorded);
//	row 4 refused 1000 (payer name is a formula, value too); row 5 issued 100 (2026-02-28).
//	In 4 rows 132446; issued 2 rows 123556; ambiguous 7890; refused 1000.
func boletoFixture() *results.Results {
	r := &results.Results{Version: results.FileVersion, Run: runInfo(results.Boletos, "embedded")}
	r.Rows = []results.Row{
		{Index: 0, SourceRow: 2, Key: "B-1", PayerName: "Fernanda Ribeiro", PayerDoc: "01234567890", Outcome: results.Issued,
			AmountCents: 123456, DueDate: "2026-01-30", ChargeIDs: []int64{770001},
			TypedLine: "36490.00019 00000.000000 00000.000000 8 13390000123456", Barcode: "36498133900001234560001900000000000000000000",
			Link: "https://pagamento.sejaefi.com.br/1/770001", PDF: "https://download.sejaefi.com.br/770001.pdf"},
		{Index: 1, SourceRow: 3, Key: "B-2", PayerName: "Gustavo Henrique", PayerDoc: "52998224725", Outcome: results.Ambiguous,
			AmountCents: 7890, DueDate: "2026-01-30"},
		{Index: 2, SourceRow: 4, Key: "B-3", PayerName: "=HYPERLINK(\"http://evil\")", PayerDoc: "39053344705", Outcome: results.Refused,
			AmountCents: 1000, DueDate: "2026-01-30",
			Problems: []results.Problem{{Code: "nome_invalido", Column: "A", Header: "nome", Value: "<script>alert(1)</script>",
				Message: "nome do pagador inválido", MessageEN: "invalid payer name"}}},
		{Index: 3, SourceRow: 5, Key: "B-4", PayerName: "Helena Souza", PayerDoc: "11222333000181", Outcome: results.Issued,
			AmountCents: 100, DueDate: "2026-02-28", ChargeIDs: []int64{770002}},
	}
	r.Compute()
	return r
}
