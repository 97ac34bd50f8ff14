package documents

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"strconv"

	"github.com/rs/zerolog"

	"remessa/rules"
	"remessa/sandbox/charges"
	"remessa/sandbox/module"
)

func init() {
	module.Register("documents", func(d module.Deps) (module.Module, error) {
		return New(sourceFrom(d), d.Logger), nil
	})
}

// Module serves the document links the charges module puts in its
// answers (docs/charges-api.md), without a token, as the real service's
// public links are:
//
//	GET /v1/documents/charge/{token}/link     slip page (HTML, printable)
//	GET /v1/documents/charge/{token}/billet   slip page (HTML, printable)
//	GET /v1/documents/charge/{token}/pdf      slip PDF
//	GET /v1/documents/link/{token}            payment link page (HTML)
//	GET /v1/documents/carnet/{token}/link     carnet page: cover and all parcels (HTML)
//	GET /v1/documents/carnet/{token}/cover    carnet cover (HTML)
//	GET /v1/documents/carnet/{token}/pdf      carnet PDF: cover, then 3 parcels a page
//	GET /v1/documents/carnet/{token}/cover/pdf carnet cover PDF
type Module struct {
	source func() (Source, bool)
	log    zerolog.Logger
}

// New returns the document routes reading from source, which is called at
// request time (false while there is no charges module).
func New(source func() (Source, bool), log zerolog.Logger) *Module {
	return &Module{source: source, log: log}
}

// StaticSource adapts a Source known at construction to New.
func StaticSource(s Source) func() (Source, bool) {
	return func() (Source, bool) { return s, s != nil }
}

// sourceFrom finds the charges module through the core's Deps.Lookup, at
// request time (modules are built in name order).
func sourceFrom(d module.Deps) func() (Source, bool) {
	return func() (Source, bool) {
		if d.Lookup == nil {
			return nil, false
		}
		m, ok := d.Lookup("charges")
		if !ok {
			return nil, false
		}
		s, ok := m.(Source)
		return s, ok
	}
}

// Register mounts the document routes.
func (m *Module) Register(mux module.Mux) {
	mux.HandleFunc("GET /v1/documents/charge/{token}/link", m.slip(false))
	mux.HandleFunc("GET /v1/documents/charge/{token}/billet", m.slip(false))
	mux.HandleFunc("GET /v1/documents/charge/{token}/pdf", m.slip(true))
	mux.HandleFunc("GET /v1/documents/link/{token}", m.link)
	mux.HandleFunc("GET /v1/documents/carnet/{token}/link", m.carnet(false, false))
	mux.HandleFunc("GET /v1/documents/carnet/{token}/cover", m.carnet(false, true))
	mux.HandleFunc("GET /v1/documents/carnet/{token}/pdf", m.carnet(true, false))
	mux.HandleFunc("GET /v1/documents/carnet/{token}/cover/pdf", m.carnet(true, true))
}

var errorTmpl = template.Must(template.New("err").Parse(`<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>{{.Title}}</title></head>
<body style="font-family: Helvetica, Arial, sans-serif; max-width: 40em; margin: 3em auto">
<h1>{{.Title}}</h1><p>{{.Message}}</p></body></html>
`))

func errorPage(w http.ResponseWriter, status int, title, message string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = errorTmpl.Execute(w, map[string]string{"Title": title, "Message": message})
}

func (m *Module) src(w http.ResponseWriter) (Source, bool) {
	s, ok := m.source()
	if !ok {
		errorPage(w, http.StatusServiceUnavailable, "Documentos indisponíveis",
			"O módulo de cobranças não está disponível neste sandbox, então não há documentos para mostrar.")
	}
	return s, ok
}

func notFound(w http.ResponseWriter) {
	errorPage(w, http.StatusNotFound, "Documento não encontrado",
		"Não há documento com este endereço. Confira o link devolvido pela API.")
}

// send writes a rendered document; rendering goes to a buffer first so a
// failure gives a clean 500 page instead of half a file.
func (m *Module) send(w http.ResponseWriter, r *http.Request, pdf bool, filename string, render func(*bytes.Buffer) error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		m.log.Error().Err(err).Str("path", r.URL.Path).Msg("documents: render")
		errorPage(w, http.StatusInternalServerError, "Erro ao gerar o documento",
			"O sandbox não conseguiu gerar este documento; o erro foi registrado no log.")
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if pdf {
		h.Set("Content-Type", "application/pdf")
		h.Set("Content-Disposition", `inline; filename="`+filename+`.pdf"`)
	} else {
		h.Set("Content-Type", "text/html; charset=utf-8")
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

func (m *Module) slip(pdf bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		src, ok := m.src(w)
		if !ok {
			return
		}
		v, ok := src.ChargeDocument(r.PathValue("token"))
		if !ok {
			notFound(w)
			return
		}
		if v.Barcode == "" {
			if !pdf && v.Link != nil {
				m.send(w, r, false, "", func(b *bytes.Buffer) error { return RenderLinkHTML(b, v) })
				return
			}
			if !pdf && v.Method == "credit_card" {
				m.send(w, r, false, "", func(b *bytes.Buffer) error { return RenderCardHTML(b, v) })
				return
			}
			errorPage(w, http.StatusNotFound, "Esta cobrança não tem boleto",
				fmt.Sprintf("A cobrança %d (status %s) não tem boleto para imprimir.", v.ChargeID, v.Status))
			return
		}
		s := SlipFromView(v)
		name := "boleto-" + strconv.FormatInt(v.ChargeID, 10)
		if pdf {
			m.send(w, r, true, name, func(b *bytes.Buffer) error { return RenderSlipPDF(b, s) })
		} else {
			m.send(w, r, false, name, func(b *bytes.Buffer) error { return RenderSlipHTML(b, s) })
		}
	}
}

func (m *Module) link(w http.ResponseWriter, r *http.Request) {
	src, ok := m.src(w)
	if !ok {
		return
	}
	v, ok := src.LinkDocument(r.PathValue("token"))
	if !ok {
		notFound(w)
		return
	}
	m.send(w, r, false, "", func(b *bytes.Buffer) error { return RenderLinkHTML(b, v) })
}

func (m *Module) carnet(pdf, cover bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		src, ok := m.src(w)
		if !ok {
			return
		}
		v, ok := src.CarnetDocument(r.PathValue("token"))
		if !ok {
			notFound(w)
			return
		}
		c := CarnetFromView(v)
		name := "carne-" + strconv.FormatInt(v.CarnetID, 10)
		switch {
		case pdf && cover:
			m.send(w, r, true, name+"-capa", func(b *bytes.Buffer) error { return RenderCarnetCoverPDF(b, c) })
		case pdf:
			m.send(w, r, true, name, func(b *bytes.Buffer) error { return RenderCarnetPDF(b, c) })
		case cover:
			m.send(w, r, false, "", func(b *bytes.Buffer) error { return RenderCarnetCoverHTML(b, c) })
		default:
			m.send(w, r, false, "", func(b *bytes.Buffer) error { return RenderCarnetHTML(b, c) })
		}
	}
}

var linkTmpl = template.Must(template.New("link").Parse(`<!DOCTYPE html>
<html lang="pt-BR">
<head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body { font-family: Helvetica, Arial, sans-serif; max-width: 42em; margin: 2em auto; }
table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ccc; padding: 0.4em; text-align: left; }
td.v, th.v { text-align: right; } .status { font-weight: bold; } .note { color: #666; font-style: italic; font-size: 0.85em; }
</style></head>
<body>
<h1>{{.Title}}</h1>
<p>Cobrança nº <b>{{.ChargeID}}</b>{{if .CustomID}} ({{.CustomID}}){{end}} de <b>{{.Beneficiary}}</b></p>
<p class="status">Situação: {{.Status}}</p>
{{if .Items}}<table><tr><th>Item</th><th class="v">Qtd.</th><th class="v">Valor</th></tr>
{{range .Items}}<tr><td>{{.Name}}</td><td class="v">{{.Amount}}</td><td class="v">{{.Value}}</td></tr>{{end}}
<tr><th>Total</th><th></th><th class="v">{{.Total}}</th></tr></table>{{end}}
{{with .Link}}<ul>
<li>Formas de pagamento: {{.Methods}}</li>
{{if .BilletDiscount}}<li>Desconto no boleto: {{.BilletDiscount}}</li>{{end}}
{{if .CardDiscount}}<li>Desconto no cartão: {{.CardDiscount}}</li>{{end}}
{{if .Conditional}}<li>{{.Conditional}}</li>{{end}}
{{if .ExpireAt}}<li>Válido até {{.ExpireAt}}</li>{{end}}
</ul>{{if .Message}}<p>{{.Message}}</p>{{end}}{{end}}
{{if .Card}}<p>Pagamento no cartão de crédito: {{.Card}}</p>{{end}}
<p class="note">Página de teste do sandbox do remessa. Para simular o pagamento use <code>remessa sandbox pay slip {{.ChargeID}}</code> ou <code>POST /sandbox/charges/{{.ChargeID}}/pay</code>.</p>
</body></html>
`))

type linkPage struct {
	Title, CustomID, Beneficiary, Status, Total, Card string
	ChargeID                                          int64
	Items                                             []struct {
		Name, Value string
		Amount      int64
	}
	Link *struct{ Methods, BilletDiscount, CardDiscount, Conditional, ExpireAt, Message string }
}

func newLinkPage(v charges.SlipView, title string) linkPage {
	p := linkPage{Title: title, ChargeID: v.ChargeID, CustomID: v.CustomID, Beneficiary: partyLine(party(v.Beneficiary)),
		Status: statusLabel(v.Status), Total: rules.FormatBRL(v.ValueCents)}
	for _, it := range v.Items {
		p.Items = append(p.Items, struct {
			Name, Value string
			Amount      int64
		}{it.Name, rules.FormatBRL(it.Value), it.Amount})
	}
	if l := v.Link; l != nil {
		methods := map[string]string{"banking_billet": "boleto", "credit_card": "cartão de crédito", "all": "boleto ou cartão de crédito"}[l.PaymentMethod]
		if methods == "" {
			methods = l.PaymentMethod
		}
		lp := &struct{ Methods, BilletDiscount, CardDiscount, Conditional, ExpireAt, Message string }{
			Methods: methods, ExpireAt: formatDate(l.ExpireAt), Message: l.Message}
		if l.BilletDiscount > 0 {
			lp.BilletDiscount = rules.FormatBRL(l.BilletDiscount)
		}
		if l.CardDiscount > 0 {
			lp.CardDiscount = rules.FormatBRL(l.CardDiscount)
		}
		if c := l.Conditional; c != nil {
			amount := rules.FormatBRL(c.Value)
			if c.Type == "percentage" {
				amount = percent(c.Value, 2) + "%"
			}
			lp.Conditional = fmt.Sprintf("Desconto de %s para pagamento até %s", amount, formatDate(c.Until))
		}
		p.Link = lp
	}
	return p
}

// RenderLinkHTML writes the payment page of a payment-link charge.
func RenderLinkHTML(w *bytes.Buffer, v charges.SlipView) error {
	return linkTmpl.Execute(w, newLinkPage(v, "Pagamento"))
}

// RenderCardHTML writes the summary page of a card charge (it has no slip).
func RenderCardHTML(w *bytes.Buffer, v charges.SlipView) error {
	p := newLinkPage(v, "Cobrança no cartão de crédito")
	p.Card = p.Status
	return linkTmpl.Execute(w, p)
}
