package documents

import (
	"bytes"
	"testing"
)

func TestRenderSamples(t *testing.T) {
	var b bytes.Buffer
	if err := RenderSlipPDF(&b, sampleSlip()); err != nil {
		t.Fatal(err)
	}
	writeSample(t, "slip.pdf", b.Bytes())
	b.Reset()
	if err := RenderCarnetPDF(&b, sampleCarnet(t, 4)); err != nil {
		t.Fatal(err)
	}
	writeSample(t, "carnet.pdf", b.Bytes())
}
