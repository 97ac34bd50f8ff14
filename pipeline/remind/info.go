package remind

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"remessa/pipeline/journal"
	"remessa/pipeline/results"
	"remessa/pipeline/status"
	"remessa/reports/conciliacao"
	"remessa/rules"
)

var saoPaulo = rules.SaoPaulo

func isBusinessDay(t time.Time) bool { return rules.IsBusinessDay(rules.Today(t)) }

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// rowInfo is what the run sent for one row that a reminder needs: the
// payer's e-mail and the row's payment terms (conciliacao.ParseTerms: the
// fine and interest of a slip or carnet, the multa, juros, abatimento and
// desconto of a cobv), read from the request the run journaled.
type rowInfo struct {
	email string
	terms *conciliacao.Terms // nil: none known (the value is what is owed)
}

// readRows reads each row's e-mail and terms from the run's journal (the
// requests it sent), by row index.
func readRows(ctx context.Context, dir string) (map[int]rowInfo, error) {
	jn, err := journal.Open(filepath.Join(dir, journal.FileName))
	if err != nil {
		return nil, err
	}
	defer jn.Close()
	rows, err := jn.Rows(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int]rowInfo, len(rows))
	for _, r := range rows {
		if t := conciliacao.ParseTerms(r.Req); t != nil {
			out[r.Index] = rowInfo{email: t.Email, terms: t}
		}
	}
	return out, nil
}

// docs is what the payer gets to pay one charge: from results.json.
type docs struct {
	pix, typedLine, link, pdf string
}

func docsOf(res *results.Results) map[string]docs {
	out := map[string]docs{}
	for i := range res.Rows {
		row := &res.Rows[i]
		switch {
		case len(row.Parcels) > 0:
			for _, p := range row.Parcels {
				out[status.KeyOfCharge(p.ChargeID)] = docs{pix: p.PixCopiaECola, typedLine: p.TypedLine, link: first(p.Link, row.Link), pdf: first(p.PDF, row.PDF)}
			}
		case row.Txid != "":
			out[status.KeyOfCobv(row.Txid)] = docs{pix: row.PixCopiaECola, link: row.Location}
		case len(row.ChargeIDs) > 0:
			out[status.KeyOfCharge(row.ChargeIDs[0])] = docs{pix: row.PixCopiaECola, typedLine: row.TypedLine, link: row.Link, pdf: row.PDF}
		}
	}
	return out
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
