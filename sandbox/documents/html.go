package documents

import (
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"

	"remessa/rules"
)

// barcodeSVG draws the Interleaved 2 of 5 bars of digits as an inline SVG
// whose user unit is one narrow module, printed 0.254 mm wide.
func barcodeSVG(digits string) (template.HTML, error) {
	bars, modules, err := ITFBars(digits)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="barcode" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d 50" width="%.2fmm" height="%.0fmm" preserveAspectRatio="none" shape-rendering="crispEdges" role="img" aria-label="%s">`,
		modules, float64(modules)*ITFModuleMM, ITFHeightMM, digits)
	for _, bar := range bars {
		fmt.Fprintf(&b, `<rect x="%d" y="0" width="%d" height="50"/>`, bar.X, bar.W)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), nil
}

// qrSVG draws content as a QR code (quiet zone included) as an inline SVG
// whose user unit is one module.
func qrSVG(content string, mm float64) (template.HTML, error) {
	m, err := QRMatrix(content)
	if err != nil {
		return "", err
	}
	n := len(m) + 2*QRQuietZone
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="qrcode" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%.0fmm" height="%.0fmm" shape-rendering="crispEdges" role="img" aria-label="QR code Pix">`, n, n, mm, mm)
	for y, runs := range qrRuns(m) {
		for _, r := range runs {
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="1"/>`, r[0]+QRQuietZone, y+QRQuietZone, r[1])
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), nil
}

type htmlSlip struct {
	Slip
	Line, Value, Due, Issued, Number, Parcel, Stamp string
	Beneficiary, Payer                              string
	Address                                         []string
	Instructions                                    []string
	Barcode, QR                                     template.HTML
}

func newHTMLSlip(s Slip) (htmlSlip, error) {
	if err := s.Check(); err != nil {
		return htmlSlip{}, err
	}
	line, err := s.TypedLine()
	if err != nil {
		return htmlSlip{}, err
	}
	bc, err := barcodeSVG(s.Barcode)
	if err != nil {
		return htmlSlip{}, err
	}
	h := htmlSlip{
		Slip: s, Line: line, Value: rules.FormatBRL(s.ValueCents), Due: formatDate(s.DueDate),
		Issued: formatDate(s.IssuedAt), Number: s.documentNumber(), Parcel: s.parcelLabel(),
		Stamp: statusStamp(s.Status), Beneficiary: partyLine(s.Beneficiary), Payer: partyLine(s.Payer),
		Address: formatAddress(s.Payer.Address), Instructions: s.Instructions(), Barcode: bc,
	}
	if s.PixQRCode != "" {
		if h.QR, err = qrSVG(s.PixQRCode, 38); err != nil {
			return htmlSlip{}, err
		}
	}
	return h, nil
}

type htmlCover struct {
	Carnet
	Beneficiary, Payer string
	Address            []string
	Total, Created     string
	Discount           string // Carnet.discountLine
	Rows               [][4]string
}

type htmlPage struct {
	// ScreenBarcodeWidth gives the barcode one CSS pixel per module on
	// screen, so the bars stay crisp; print uses the millimetre size.
	ScreenBarcodeWidth int
	Title              string
	Cover              *htmlCover
	Slips              []htmlSlip
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
@page { size: A4; margin: 10mm; }
body { font-family: Helvetica, Arial, sans-serif; font-size: 10pt; color: #000; margin: 0 auto; max-width: 190mm; }
.toolbar { margin: 4mm 0; } @media print { .toolbar { display: none; } }
.slip { position: relative; page-break-inside: avoid; margin-bottom: 8mm; }
.receipt { display: flex; gap: 4mm; margin-bottom: 4mm; }
.receipt .data { flex: 1; }
.pix { width: 60mm; border: 1px solid #000; padding: 2mm; }
.pix .code { font-family: monospace; font-size: 6.5pt; word-break: break-all; }
table { border-collapse: collapse; width: 100%; }
td { border: 1px solid #000; padding: 0.5mm 1mm; vertical-align: top; }
td small { display: block; font-size: 6pt; }
td.right { text-align: right; width: 46mm; }
.head { display: flex; align-items: flex-end; gap: 3mm; border-bottom: 2px solid #000; padding-bottom: 1mm; }
.head .bank { font-size: 15pt; font-weight: bold; }
.head .code { font-size: 17pt; font-weight: bold; border-left: 2px solid #000; border-right: 2px solid #000; padding: 0 2mm; }
.head .line { margin-left: auto; font-size: 12pt; font-weight: bold; }
.cut { border-top: 1px dashed #000; margin: 6mm 0 3mm; font-size: 7pt; text-align: right; }
.bars { display: flex; align-items: flex-start; gap: 6mm; margin-top: 2mm; padding-left: 3mm; }
.stamp { position: absolute; top: 20mm; left: 60mm; font-size: 40pt; font-weight: bold; color: rgba(200,0,0,0.45); transform: rotate(-20deg); }
@media screen { svg.barcode { width: {{.ScreenBarcodeWidth}}px; height: 50px; } }
.note { color: #666; font-style: italic; font-size: 7pt; margin-top: 4mm; }
.cover { page-break-after: always; }
.cover th, .cover td { text-align: left; border: 1px solid #000; padding: 1mm 2mm; }
</style>
</head>
<body>
<div class="toolbar"><button onclick="window.print()">Imprimir</button></div>
{{with .Cover}}<section class="cover">
<h1>Efí S.A.</h1>
<h2>Carnê nº {{.CarnetID}}</h2>
<p><b>Beneficiário:</b> {{.Beneficiary}}<br><b>Pagador:</b> {{.Payer}}{{range .Address}}<br>{{.}}{{end}}<br>
<b>Parcelas:</b> {{len .Parcels}} · <b>Valor total:</b> {{.Total}}{{if .CustomID}} · <b>Identificador:</b> {{.CustomID}}{{end}}{{if .Created}} · <b>Emitido em:</b> {{.Created}}{{end}}</p>
{{if .Message}}<p><i>{{.Message}}</i></p>{{end}}
{{if .Discount}}<p class="discount">{{.Discount}}</p>{{end}}
<table><tr><th>Parcela</th><th>Vencimento</th><th>Valor</th><th>Situação</th></tr>
{{range .Rows}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td></tr>{{end}}
</table>
</section>{{end}}
{{range .Slips}}<section class="slip" data-charge-id="{{.ChargeID}}">
{{if .Stamp}}<div class="stamp">{{.Stamp}}</div>{{end}}
<div class="receipt">
<div class="data"><table>
<tr><td colspan="2"><small>Beneficiário</small>{{.Beneficiary}}</td></tr>
<tr><td colspan="2"><small>Pagador</small>{{.Payer}}{{range .Address}}<br>{{.}}{{end}}</td></tr>
<tr><td><small>Nosso número</small>{{.ChargeID}}</td><td><small>Nº do documento</small>{{.Number}}</td></tr>
<tr><td><small>Vencimento</small><b>{{.Due}}</b></td><td class="right"><small>Valor do documento</small><b>{{.Value}}</b></td></tr>
<tr><td colspan="2"><small>Linha digitável</small><b class="typed-line">{{.Line}}</b></td></tr>
{{if .Parcel}}<tr><td colspan="2"><small>Parcela</small>{{.Parcel}} do carnê {{.CarnetID}}</td></tr>{{end}}
</table></div>
{{if .QR}}<div class="pix"><b>Pague com Pix</b><br>{{.QR}}<br><small>Leia o QR code no app do seu banco ou copie o código:</small>
<div class="code">{{.PixQRCode}}</div></div>{{end}}
</div>
<div class="cut">Corte na linha pontilhada</div>
<div class="head"><span class="bank">Efí S.A.</span><span class="code">364</span><span class="line">{{.Line}}</span></div>
<table>
<tr><td colspan="5"><small>Local de pagamento</small>Pagável em qualquer banco até o vencimento{{if .QR}} ou pelo Pix (QR code){{end}}</td><td class="right"><small>Vencimento</small><b>{{.Due}}</b></td></tr>
<tr><td colspan="5"><small>Beneficiário</small>{{.Beneficiary}}</td><td class="right"><small>Parcela</small>{{.Parcel}}</td></tr>
<tr><td><small>Data do documento</small>{{.Issued}}</td><td><small>Nº do documento</small>{{.Number}}</td><td><small>Espécie doc.</small>DS</td><td><small>Aceite</small>N</td><td><small>Data processamento</small>{{.Issued}}</td><td class="right"><small>Nosso número</small>{{.ChargeID}}</td></tr>
<tr><td><small>Uso do banco</small>&nbsp;</td><td><small>Carteira</small>&nbsp;</td><td><small>Espécie</small>R$</td><td><small>Quantidade</small>&nbsp;</td><td><small>Valor</small>&nbsp;</td><td class="right"><small>(=) Valor do documento</small><b>{{.Value}}</b></td></tr>
<tr><td colspan="5" rowspan="3"><small>Instruções (texto de responsabilidade do beneficiário)</small>{{range .Instructions}}{{.}}<br>{{end}}</td><td class="right"><small>(-) Desconto / Abatimento</small>&nbsp;</td></tr>
<tr><td class="right"><small>(+) Mora / Multa</small>&nbsp;</td></tr>
<tr><td class="right"><small>(=) Valor cobrado</small>&nbsp;</td></tr>
<tr><td colspan="6"><small>Pagador</small><b>{{.Payer}}</b>{{range .Address}}<br>{{.}}{{end}}</td></tr>
</table>
<div class="bars">{{.Barcode}}<div><small>Autenticação mecânica</small><br><b>Ficha de Compensação</b></div></div>
</section>{{end}}
<p class="note">Documento de teste gerado pelo sandbox do remessa: não é um boleto real e não deve ser pago.</p>
</body>
</html>
`))

// RenderSlipHTML writes the slip as a printable HTML page (A4 print CSS,
// barcode and QR code as inline SVG).
func RenderSlipHTML(w io.Writer, s Slip) error {
	h, err := newHTMLSlip(s)
	if err != nil {
		return err
	}
	return execPage(w, htmlPage{Title: "Boleto " + strconv.FormatInt(s.ChargeID, 10), Slips: []htmlSlip{h}})
}

// RenderCarnetHTML writes a carnet as a printable HTML page: the cover,
// then every parcel's slip.
func RenderCarnetHTML(w io.Writer, c Carnet) error {
	if err := c.Check(); err != nil {
		return err
	}
	p := htmlPage{Title: "Carnê " + strconv.FormatInt(c.CarnetID, 10), Cover: newHTMLCover(c)}
	for _, s := range c.Parcels {
		h, err := newHTMLSlip(s)
		if err != nil {
			return err
		}
		p.Slips = append(p.Slips, h)
	}
	return execPage(w, p)
}

func newHTMLCover(c Carnet) *htmlCover {
	hc := &htmlCover{Carnet: c, Beneficiary: partyLine(c.Beneficiary), Payer: partyLine(c.Payer),
		Address: formatAddress(c.Payer.Address), Created: formatDate(c.CreatedAt), Discount: c.discountLine()}
	var total int64
	for _, p := range c.Parcels {
		total += p.ValueCents
		hc.Rows = append(hc.Rows, [4]string{p.parcelLabel(), formatDate(p.DueDate), rules.FormatBRL(p.ValueCents), statusLabel(p.Status)})
	}
	hc.Total = rules.FormatBRL(total)
	return hc
}

func execPage(w io.Writer, p htmlPage) error {
	p.ScreenBarcodeWidth = 4 + 44*9 + 5 // modules of a 44-digit ITF: 405
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("documents: write HTML page: %w", err)
	}
	return nil
}

// RenderCarnetCoverHTML writes only the cover of a carnet as an HTML page.
func RenderCarnetCoverHTML(w io.Writer, c Carnet) error {
	if err := c.Check(); err != nil {
		return err
	}
	return execPage(w, htmlPage{Title: "Capa do carnê " + strconv.FormatInt(c.CarnetID, 10), Cover: newHTMLCover(c)})
}
