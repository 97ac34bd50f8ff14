package documents

import (
	"io"
	"testing"
)

func BenchmarkRenderSlipPDF(b *testing.B) {
	s := sampleSlip()
	for b.Loop() {
		if err := RenderSlipPDF(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderCarnetPDF12(b *testing.B) {
	c := sampleCarnet(b, 12)
	for b.Loop() {
		if err := RenderCarnetPDF(io.Discard, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSlipHTML(b *testing.B) {
	s := sampleSlip()
	for b.Loop() {
		if err := RenderSlipHTML(io.Discard, s); err != nil {
			b.Fatal(err)
		}
	}
}
