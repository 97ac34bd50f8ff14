package actions

// second_copy: each payer's slip or carnet PDF, downloaded into a folder.

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"remessa/api"
)

// secondCopy downloads the row's PDF into <copy dir>/<key>/.
func (e *executor) secondCopy(ctx context.Context, idx int, it Item) error {
	u := it.PDF
	if pu, err := url.Parse(u); err == nil && e.base != "" && (strings.HasPrefix(pu.Host, "127.0.0.1") || strings.HasPrefix(pu.Host, "localhost")) {
		// the embedded sandbox may listen elsewhere now
		if bu, err := url.Parse(e.base); err == nil {
			pu.Scheme, pu.Host = bu.Scheme, bu.Host
			u = pu.String()
		}
	}
	var body []byte
	var err error
	for attempt := 0; attempt < maxAttempts; attempt++ {
		if body, err = download(ctx, u); err == nil {
			break
		}
		time.Sleep(e.backoff(attempt))
	}
	if err != nil {
		return fmt.Errorf("segunda via de %s: %w", it.RowKey, err)
	}
	name := fmt.Sprintf("boleto-%d.pdf", it.Charges[0].ChargeID)
	if it.CarnetID != 0 {
		name = fmt.Sprintf("carne-%d.pdf", it.CarnetID)
	}
	rel := filepath.Join(e.meta.CopyDir, safeName(it.RowKey), name)
	path := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", body, 0o644); err != nil {
		return err
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return err
	}
	return e.setRow(ctx, idx, Result{State: StateDone, Files: []string{rel}}, 0, "", 0, "")
}

func download(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", api.RedactString(u), resp.StatusCode)
	}
	return b, nil
}

func writeZip(path, dir string, files []string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, rel := range files {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			f.Close()
			return err
		}
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			f.Close()
			return err
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
