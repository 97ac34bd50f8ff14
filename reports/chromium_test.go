package reports

import (
	"bytes"
	"encoding/binary"
	pngpkg "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestChromiumScreenshot renders the HTML report with headless Chromium
// through scripts/render-report.sh and checks the PNG. It runs only when
// chromium is on PATH. REMESSA_SCREENSHOT=path keeps the image for a look.
func TestChromiumScreenshot(t *testing.T) {
	if _, err := exec.LookPath("chromium"); err != nil {
		t.Skip("chromium is not on PATH (apt-get install chromium to run this test)")
	}
	dir := t.TempDir()
	html := filepath.Join(dir, "relatorio.html")
	f, err := os.Create(html)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, carnetFixture(), Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := os.Getenv("REMESSA_SCREENSHOT")
	if out == "" {
		out = filepath.Join(dir, "relatorio.png")
	} else if b, err := os.ReadFile(html); err == nil {
		os.WriteFile(out+".html", b, 0o644) // keep the page next to the image
	}
	cmd := exec.Command("sh", "../scripts/render-report.sh", html, out, "1280,2000")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render-report.sh: %v\n%s", err, msg)
	}
	png, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 24 || !bytes.Equal(png[:8], []byte("\x89PNG\r\n\x1a\n")) || string(png[12:16]) != "IHDR" {
		t.Fatalf("%s is not a PNG (%d bytes)", out, len(png))
	}
	w, h := binary.BigEndian.Uint32(png[16:20]), binary.BigEndian.Uint32(png[20:24])
	if w != 1280 || h != 2000 {
		t.Errorf("PNG is %dx%d, want 1280x2000", w, h)
	}
	if len(png) < 20000 {
		t.Errorf("PNG is only %d bytes; the page looks empty", len(png))
	}
	// the production banner is drawn, in its red, across the top of the page
	img, err := pngpkg.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	red := 0
	for y := 0; y < 200; y++ {
		r, g, b, _ := img.At(640, y).RGBA()
		if r>>8 == 0xC0 && g>>8 == 0 && b>>8 == 0 {
			red++
		}
	}
	if red < 20 {
		t.Errorf("no red production banner at the top of the page (%d red pixels down the middle)", red)
	}
}
