package documents

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"

	"remessa/rules"
)

// Drawing constants, in millimetres. The barcode follows the usual boleto
// print: narrow module 0.254 mm (so wide = 0.762 mm and the 405 modules of a
// 44-digit barcode are 102.87 mm long), bars 13 mm high.
const (
	ITFModuleMM = 0.254
	ITFHeightMM = 13.0
	pageW       = 210.0
	pageH       = 297.0
)

// compress is switched off by the package's tests so they can read the
// drawn rectangles back from the content stream.
var compress = true

// epoch fixes the PDF creation date when the slip has none, so the same
// slip always renders to the same bytes.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

type pdfDoc struct {
	*fpdf.Fpdf
	tr func(string) string
}

func newPDF(title string, created time.Time) *pdfDoc {
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCompression(compress)
	f.SetMargins(0, 0, 0)
	f.SetAutoPageBreak(false, 0)
	if created.IsZero() {
		created = epoch
	}
	f.SetCreationDate(created)
	f.SetModificationDate(created)
	f.SetCreator("remessa sandbox", false)
	f.SetProducer("remessa sandbox", false)
	d := &pdfDoc{Fpdf: f, tr: f.UnicodeTranslatorFromDescriptor("")}
	f.SetTitle(d.tr(title), false)
	f.SetAuthor(d.tr(BankName), false)
	return d
}

func (d *pdfDoc) font(style string, size float64) { d.SetFont("Helvetica", style, size) }

// fit shortens s (already in cp1252) with an ellipsis until it fits w mm.
func (d *pdfDoc) fit(s string, w float64) string {
	if d.GetStringWidth(s) <= w {
		return s
	}
	r := []byte(s)
	for len(r) > 0 && d.GetStringWidth(string(r)+"\x85") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "\x85"
}

// text writes s at baseline (x, y), cut to at most w mm when w > 0.
func (d *pdfDoc) text(x, y, w float64, style string, size float64, s string) {
	d.font(style, size)
	t := d.tr(s)
	if w > 0 {
		t = d.fit(t, w)
	}
	d.Text(x, y, t)
}

// textRight writes s ending at x.
func (d *pdfDoc) textRight(x, y float64, style string, size float64, s string) {
	d.font(style, size)
	t := d.tr(s)
	d.Text(x-d.GetStringWidth(t), y, t)
}

// field draws a box with a small label at the top and a value at the
// bottom, right-aligned when right is set.
func (d *pdfDoc) field(x, y, w, h float64, label, value string, right bool, valueSize float64, valueStyle string) {
	d.Rect(x, y, w, h, "D")
	d.text(x+0.8, y+2.2, w-1.6, "", 5, label)
	if value == "" {
		return
	}
	d.font(valueStyle, valueSize)
	t := d.fit(d.tr(value), w-1.6)
	if right {
		d.Text(x+w-0.8-d.GetStringWidth(t), y+h-1.3, t)
	} else {
		d.Text(x+0.8, y+h-1.3, t)
	}
}

func (d *pdfDoc) dashedLine(x1, y1, x2, y2 float64) {
	d.SetDashPattern([]float64{1, 1}, 0)
	d.Line(x1, y1, x2, y2)
	d.SetDashPattern([]float64{}, 0)
}

// barcode draws the Interleaved 2 of 5 bars of digits with the left edge
// at x and the top at y; it returns the drawn width.
func (d *pdfDoc) barcode(x, y float64, digits string) (float64, error) {
	bars, modules, err := ITFBars(digits)
	if err != nil {
		return 0, err
	}
	d.SetFillColor(0, 0, 0)
	for _, b := range bars {
		d.Rect(x+float64(b.X)*ITFModuleMM, y, float64(b.W)*ITFModuleMM, ITFHeightMM, "F")
	}
	return float64(modules) * ITFModuleMM, nil
}

// qr draws content as a QR code in a size × size square (quiet zone
// included) with the top-left corner at (x, y).
func (d *pdfDoc) qr(x, y, size float64, content string) error {
	m, err := QRMatrix(content)
	if err != nil {
		return err
	}
	mod := size / float64(len(m)+2*QRQuietZone)
	x0, y0 := x+QRQuietZone*mod, y+QRQuietZone*mod
	d.SetFillColor(0, 0, 0)
	for row, runs := range qrRuns(m) {
		for _, r := range runs {
			d.Rect(x0+float64(r[0])*mod, y0+float64(row)*mod, float64(r[1])*mod, mod, "F")
		}
	}
	return nil
}

// stamp prints a rotated red status word ("PAGO") over the area.
func (d *pdfDoc) stamp(cx, cy float64, word string) {
	if word == "" {
		return
	}
	d.TransformBegin()
	d.TransformRotate(20, cx, cy)
	d.SetAlpha(0.45, "Normal")
	d.SetTextColor(200, 0, 0)
	d.font("B", 40)
	w := d.GetStringWidth(word)
	d.Text(cx-w/2, cy+5, word)
	d.SetTextColor(0, 0, 0)
	d.SetAlpha(1, "Normal")
	d.TransformEnd()
}

func money(c int64) string { return rules.FormatBRL(c) }

// documentNumber is what the slip prints as "Nº do documento".
func (s Slip) documentNumber() string {
	if s.CustomID != "" {
		return s.CustomID
	}
	return strconv.FormatInt(s.ChargeID, 10)
}

func (s Slip) parcelLabel() string {
	if s.Parcel > 0 && s.Repeats > 0 {
		return fmt.Sprintf("%d/%d", s.Parcel, s.Repeats)
	}
	if s.Parcel > 0 {
		return strconv.Itoa(s.Parcel)
	}
	return ""
}

func partyLine(p Party) string {
	if doc := formatDocument(p.Document); doc != "" {
		return p.Name + " - " + doc
	}
	return p.Name
}

// fichaLayout sizes the "ficha de compensação" for a full page or for a
// carnet third.
type fichaLayout struct {
	rowH, instrH, payerH, rightW float64
	valueSize, lineSize          float64
}

var (
	fullFicha    = fichaLayout{rowH: 9, instrH: 32, payerH: 16, rightW: 46, valueSize: 8.5, lineSize: 12}
	compactFicha = fichaLayout{rowH: 7, instrH: 24, payerH: 14, rightW: 38, valueSize: 7.5, lineSize: 10}
)

// lineHeight is the baseline distance in mm of a font size in points
// (1.2 × the size).
const lineHeight = 0.42

// minInstructionSize is the smallest font size, in points, the instructions
// are printed in.
const minInstructionSize = 4.5

// instructionLines wraps the instructions to w mm in the largest font size
// from max down to minInstructionSize at which they all fit in h mm; it
// returns that size (already set as the current font) and the lines in
// cp1252. At the smallest size every line is still returned, so a slip never
// drops an instruction silently (Slip.Check bounds what there is).
func (d *pdfDoc) instructionLines(in []string, w, h, max float64) (float64, []string) {
	for size := max; ; size -= 0.25 {
		d.font("", size)
		var lines []string
		for _, s := range in {
			for _, part := range d.SplitLines([]byte(d.tr(s)), w) {
				lines = append(lines, string(part))
			}
		}
		if float64(len(lines))*size*lineHeight <= h || size-0.25 < minInstructionSize {
			return size, lines
		}
	}
}

// ficha draws the bank part of a slip at (x, y) with width w and returns
// the y below it.
func (d *pdfDoc) ficha(x, y, w float64, s Slip, l fichaLayout) (float64, error) {
	line, err := s.TypedLine()
	if err != nil {
		return 0, err
	}
	// Bank header: name | code | typed line.
	hh := l.rowH - 1
	d.text(x, y+hh-1.5, 0, "B", l.lineSize+1, BankName)
	d.font("B", l.lineSize+1)
	nameW := d.GetStringWidth(d.tr(BankName))
	d.SetLineWidth(0.5)
	d.Line(x+nameW+2, y+1, x+nameW+2, y+hh)
	d.text(x+nameW+3.5, y+hh-1.5, 0, "B", l.lineSize+3, rules.BankEfi)
	d.font("B", l.lineSize+3)
	codeW := d.GetStringWidth(rules.BankEfi)
	d.Line(x+nameW+5+codeW, y+1, x+nameW+5+codeW, y+hh)
	d.SetLineWidth(0.2)
	d.textRight(x+w, y+hh-1.5, "B", l.lineSize, line)
	y += hh

	left := w - l.rightW
	rx := x + left
	vs := l.valueSize
	place := "Pagável em qualquer banco até o vencimento"
	if s.PixQRCode != "" {
		place = "Pagável em qualquer banco até o vencimento ou pelo Pix (QR code)"
	}
	d.field(x, y, left, l.rowH, "Local de pagamento", place, false, vs, "")
	d.field(rx, y, l.rightW, l.rowH, "Vencimento", formatDate(s.DueDate), true, vs+1, "B")
	y += l.rowH
	d.field(x, y, left, l.rowH, "Beneficiário", partyLine(s.Beneficiary), false, vs, "")
	d.field(rx, y, l.rightW, l.rowH, "Parcela", s.parcelLabel(), true, vs, "")
	y += l.rowH
	cols := []struct {
		label, value string
		frac         float64
	}{
		{"Data do documento", formatDate(s.IssuedAt), 0.2},
		{"Nº do documento", s.documentNumber(), 0.28},
		{"Espécie doc.", "DS", 0.14},
		{"Aceite", "N", 0.12},
		{"Data processamento", formatDate(s.IssuedAt), 0.26},
	}
	cx := x
	for _, c := range cols {
		d.field(cx, y, left*c.frac, l.rowH, c.label, c.value, false, vs, "")
		cx += left * c.frac
	}
	d.field(rx, y, l.rightW, l.rowH, "Nosso número", strconv.FormatInt(s.ChargeID, 10), true, vs, "")
	y += l.rowH
	cols = []struct {
		label, value string
		frac         float64
	}{
		{"Uso do banco", "", 0.2},
		{"Carteira", "", 0.14},
		{"Espécie", "R$", 0.14},
		{"Quantidade", "", 0.26},
		{"Valor", "", 0.26},
	}
	cx = x
	for _, c := range cols {
		d.field(cx, y, left*c.frac, l.rowH, c.label, c.value, false, vs, "")
		cx += left * c.frac
	}
	d.field(rx, y, l.rightW, l.rowH, "(=) Valor do documento", money(s.ValueCents), true, vs+1, "B")
	y += l.rowH

	// Instructions on the left, deductions and additions on the right.
	d.Rect(x, y, left, l.instrH, "D")
	d.text(x+0.8, y+2.2, 0, "", 5, "Instruções (texto de responsabilidade do beneficiário)")
	size, lines := d.instructionLines(s.Instructions(), left-1.6, l.instrH-3.2, vs-0.5)
	lh := size * lineHeight
	ty := y + 2.4 + lh
	d.font("", size)
	for _, part := range lines {
		d.Text(x+0.8, ty, part)
		ty += lh
	}
	size = vs - 0.5
	lh = size * lineHeight
	boxes := []string{"(-) Desconto / Abatimento", "(+) Mora / Multa", "(=) Valor cobrado"}
	bh := l.instrH / float64(len(boxes))
	for i, b := range boxes {
		d.field(rx, y+float64(i)*bh, l.rightW, bh, b, "", true, vs, "")
	}
	y += l.instrH

	// Payer.
	d.Rect(x, y, w, l.payerH, "D")
	d.text(x+0.8, y+2.2, 0, "", 5, "Pagador")
	py := y + 2.4 + lh + 0.3
	d.text(x+0.8, py, w-1.6, "B", vs, partyLine(s.Payer))
	for _, a := range formatAddress(s.Payer.Address) {
		py += lh + 0.4
		if py > y+l.payerH-0.5 {
			break
		}
		d.text(x+0.8, py, w-1.6, "", size, a)
	}
	y += l.payerH

	// Barcode with its quiet zone, then the authentication label.
	bw, err := d.barcode(x+3, y+2, s.Barcode)
	if err != nil {
		return 0, err
	}
	d.text(x+3+bw+4, y+4, w-bw-8, "", 5.5, "Autenticação mecânica")
	d.text(x+3+bw+4, y+7, w-bw-8, "B", 6.5, "Ficha de Compensação")
	return y + 2 + ITFHeightMM, nil
}

// RenderSlipPDF writes the A4 PDF of one slip: the payer's receipt with the
// Pix QR code at the top, a cut line, and the "ficha de compensação" with
// the typed line and the Interleaved 2 of 5 barcode.
func RenderSlipPDF(w io.Writer, s Slip) error {
	if err := s.Check(); err != nil {
		return err
	}
	d := newPDF(fmt.Sprintf("Boleto %d", s.ChargeID), s.IssuedAt)
	d.AddPage()
	if err := d.slipPage(s); err != nil {
		return err
	}
	return d.output(w)
}

func (d *pdfDoc) output(w io.Writer) error {
	if err := d.Output(w); err != nil {
		return fmt.Errorf("documents: write PDF: %w", err)
	}
	return nil
}

func (d *pdfDoc) slipPage(s Slip) error {
	line, err := s.TypedLine()
	if err != nil {
		return err
	}
	const x, w = 10.0, 190.0
	y := 12.0
	d.text(x, y, 0, "B", 16, BankName)
	d.textRight(x+w, y, "B", 11, "Recibo do pagador")
	y += 4
	d.text(x, y, 0, "", 7, "Instituição de Pagamento - código de compensação 364")
	y += 4
	// Receipt: data on the left, Pix on the right.
	const pixW = 62.0
	lw := w - pixW - 4
	rh := 10.0
	d.field(x, y, lw, rh, "Beneficiário", partyLine(s.Beneficiary), false, 8.5, "")
	y2 := y + rh
	d.Rect(x, y2, lw, rh+4, "D")
	d.text(x+0.8, y2+2.2, 0, "", 5, "Pagador")
	d.text(x+0.8, y2+6.2, lw-1.6, "", 8.5, partyLine(s.Payer))
	if a := formatAddress(s.Payer.Address); len(a) > 0 {
		d.text(x+0.8, y2+10.6, lw-1.6, "", 7, strings.Join(a, " - "))
	}
	y2 += rh + 4
	half := lw / 2
	d.field(x, y2, half, rh, "Nosso número", strconv.FormatInt(s.ChargeID, 10), false, 8.5, "")
	d.field(x+half, y2, half, rh, "Nº do documento", s.documentNumber(), false, 8.5, "")
	y2 += rh
	d.field(x, y2, half, rh, "Vencimento", formatDate(s.DueDate), false, 10, "B")
	d.field(x+half, y2, half, rh, "Valor do documento", money(s.ValueCents), true, 10, "B")
	y2 += rh
	parcel := s.parcelLabel()
	if parcel != "" {
		parcel = "Parcela " + parcel + " do carnê " + strconv.FormatInt(s.CarnetID, 10)
	}
	d.field(x, y2, lw, rh, "Linha digitável", line, false, 9, "B")
	y2 += rh
	if parcel != "" {
		d.text(x+0.8, y2+4, lw, "", 7.5, parcel)
	}
	// Pix box.
	px := x + w - pixW
	d.Rect(px, y, pixW, y2-y, "D")
	if s.PixQRCode != "" {
		d.text(px+2, y+5, pixW-4, "B", 10, "Pague com Pix")
		qs := 36.0
		if err := d.qr(px+(pixW-qs)/2, y+6.5, qs, s.PixQRCode); err != nil {
			return err
		}
		d.font("", 5.5)
		ty := y + 6.5 + qs + 2
		d.Text(px+2, ty, d.tr("Leia o QR code no app do seu banco ou copie o código:"))
		d.font("", 4.6)
		for _, part := range splitEvery(s.PixQRCode, 62) {
			ty += 2.1
			if ty > y2-1 {
				break
			}
			d.Text(px+2, ty, d.tr(part))
		}
	} else {
		d.text(px+2, y+5, pixW-4, "", 8, "Este boleto não tem Pix.")
	}
	d.stamp(x+w/2, y+30, statusStamp(s.Status))

	// Cut line and the bank's part.
	cut := y2 + 10
	d.dashedLine(x, cut, x+w, cut)
	d.text(x+w-40, cut-1, 0, "", 5.5, "Corte na linha pontilhada")
	_, err = d.ficha(x, cut+4, w, s, fullFicha)
	d.footer(10)
	return err
}

// footer marks every page as a sandbox document.
func (d *pdfDoc) footer(x float64) {
	d.SetTextColor(110, 110, 110)
	d.text(x, pageH-4, 0, "I", 6.5, "Documento de teste gerado pelo sandbox do remessa: não é um boleto real e não deve ser pago.")
	d.SetTextColor(0, 0, 0)
}

// splitEvery cuts s (ASCII, as a BR Code is) into pieces of n bytes.
func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// ParcelsPerPage is how many parcel slips a carnet page holds.
const ParcelsPerPage = 3

// RenderCarnetPDF writes the A4 PDF of a carnet: a cover page listing the
// parcels, then the parcel slips three to a page, each with the payer's stub
// (parcel, due date, value, Pix QR code) on the left and the bank's part on
// the right, separated by cut lines.
func RenderCarnetPDF(w io.Writer, c Carnet) error {
	if err := c.Check(); err != nil {
		return err
	}
	d := newPDF(fmt.Sprintf("Carnê %d", c.CarnetID), c.CreatedAt)
	d.AddPage()
	d.carnetCover(c)
	d.footer(10)
	slot := pageH / ParcelsPerPage
	for i, p := range c.Parcels {
		k := i % ParcelsPerPage
		if k == 0 {
			d.AddPage()
			d.footer(55)
		}
		y := float64(k) * slot
		if k > 0 {
			d.dashedLine(4, y, pageW-4, y)
		}
		if err := d.carnetSlip(y, p); err != nil {
			return fmt.Errorf("documents: carnet %d parcel %d: %w", c.CarnetID, p.Parcel, err)
		}
	}
	return d.output(w)
}

// RenderCarnetCoverPDF writes only the cover page of a carnet.
func RenderCarnetCoverPDF(w io.Writer, c Carnet) error {
	if err := c.Check(); err != nil {
		return err
	}
	d := newPDF(fmt.Sprintf("Capa do carnê %d", c.CarnetID), c.CreatedAt)
	d.AddPage()
	d.carnetCover(c)
	d.footer(10)
	return d.output(w)
}

func (d *pdfDoc) carnetCover(c Carnet) {
	const x, w = 20.0, 170.0
	y := 30.0
	d.text(x, y, 0, "B", 22, BankName)
	y += 14
	d.text(x, y, 0, "B", 18, fmt.Sprintf("Carnê nº %d", c.CarnetID))
	y += 10
	var total int64
	for _, p := range c.Parcels {
		total += p.ValueCents
	}
	rows := [][2]string{
		{"Beneficiário", partyLine(c.Beneficiary)},
		{"Pagador", partyLine(c.Payer)},
	}
	for _, a := range formatAddress(c.Payer.Address) {
		rows = append(rows, [2]string{"", a})
	}
	rows = append(rows,
		[2]string{"Parcelas", strconv.Itoa(len(c.Parcels))},
		[2]string{"Valor total", money(total)},
	)
	if c.CustomID != "" {
		rows = append(rows, [2]string{"Identificador", c.CustomID})
	}
	if !c.CreatedAt.IsZero() {
		rows = append(rows, [2]string{"Emitido em", formatDate(c.CreatedAt)})
	}
	for _, r := range rows {
		d.text(x, y, 0, "B", 10, r[0])
		d.text(x+35, y, w-35, "", 10, r[1])
		y += 6
	}
	if c.Message != "" {
		y += 2
		d.text(x, y, w, "I", 10, c.Message)
		y += 6
	}
	if line := c.discountLine(); line != "" {
		y += 2
		d.font("", 10)
		for _, l := range d.SplitText(line, w) { // widths of the UTF-8 text: a little wide, never cut
			d.text(x, y, w, "", 10, l)
			y += 5
		}
	}
	y += 6
	d.text(x, y, 0, "B", 11, "Parcelas")
	y += 3
	cols := []float64{20, 35, 40, 75}
	heads := []string{"Parcela", "Vencimento", "Valor", "Situação"}
	disc := c.hasConditional()
	if disc {
		cols = []float64{20, 32, 36, 37, 45}
		heads = []string{"Parcela", "Vencimento", "Valor", "Desconto até", "Situação"}
	}
	cx := x
	for i, h := range heads {
		d.field(cx, y, cols[i], 7, "", "", false, 0, "")
		d.text(cx+1.5, y+5, cols[i]-3, "B", 9, h)
		cx += cols[i]
	}
	y += 7
	for _, p := range c.Parcels {
		if y > pageH-25 {
			d.text(x, y+5, 0, "I", 9, "(continua nas páginas seguintes)")
			break
		}
		vals := []string{p.parcelLabel(), formatDate(p.DueDate), money(p.ValueCents), statusLabel(p.Status)}
		if disc {
			vals = []string{p.parcelLabel(), formatDate(p.DueDate), money(p.ValueCents), "—", statusLabel(p.Status)}
			if u, ok := p.conditionalUntil(); ok {
				vals[3] = formatDate(u)
			}
		}
		cx = x
		for i, v := range vals {
			d.Rect(cx, y, cols[i], 6.5, "D")
			d.text(cx+1.5, y+4.6, cols[i]-3, "", 9, v)
			cx += cols[i]
		}
		y += 6.5
	}
	d.text(x, pageH-15, w, "", 8, "Destaque cada parcela na linha pontilhada e pague até o vencimento em qualquer banco ou pelo Pix.")
}

// statusLabel names a charges API status in Portuguese.
func statusLabel(s string) string {
	switch s {
	case "new":
		return "nova"
	case "waiting":
		return "aguardando pagamento"
	case "paid":
		return "paga"
	case "unpaid":
		return "vencida, não paga"
	case "settled":
		return "baixada (paga fora do sistema)"
	case "canceled":
		return "cancelada"
	case "refunded":
		return "estornada"
	case "expired":
		return "expirada"
	case "identified":
		return "pagamento identificado"
	case "contested":
		return "contestada"
	}
	return s
}

// carnetSlip draws one parcel in the third of a page starting at y.
func (d *pdfDoc) carnetSlip(y float64, s Slip) error {
	const sx, sw = 5.0, 44.0 // stub
	const mx, mw = 55.0, 150.0
	top := y + 4
	// Stub: receipt for the payer.
	d.text(sx, top+4, sw, "B", 9, BankName+" | "+rules.BankEfi)
	d.text(sx, top+7.5, sw, "", 6, "Recibo do pagador")
	fy := top + 9
	fh := 6.5
	for _, f := range [][2]string{
		{"Parcela", s.parcelLabel()},
		{"Vencimento", formatDate(s.DueDate)},
		{"Valor do documento", money(s.ValueCents)},
		{"Nosso número", strconv.FormatInt(s.ChargeID, 10)},
		{"Pagador", s.Payer.Name},
	} {
		d.field(sx, fy, sw, fh, f[0], f[1], false, 7.5, "B")
		fy += fh
	}
	if s.PixQRCode != "" {
		d.text(sx, fy+3.5, sw, "B", 7, "Pague com Pix")
		qs := 28.0
		if err := d.qr(sx+(sw-qs)/2, fy+4.5, qs, s.PixQRCode); err != nil {
			return err
		}
	}
	d.dashedLine(mx-3, y+3, mx-3, y+pageH/ParcelsPerPage-3)
	if _, err := d.ficha(mx, top, mw, s, compactFicha); err != nil {
		return err
	}
	d.stamp(mx+mw/2, top+35, statusStamp(s.Status))
	return nil
}
