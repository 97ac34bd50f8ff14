// Package migratetest unpacks the data folders written by older remessa
// binaries (internal/migrate/testdata) for the tests that open them with
// the current code.
package migratetest

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Commit is the commit whose binary wrote the fixtures: the last one
// before schema versions.
const Commit = "8e335f2"

// Unpack unpacks fixture name (desk or runs) of Commit into a new
// temporary folder and returns it.
func Unpack(tb testing.TB, name string) string {
	tb.Helper()
	_, self, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(self), "..", "testdata", Commit, name+".tar.gz")
	f, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatalf("%s: %v", src, err)
	}
	dir := tb.TempDir()
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			tb.Fatalf("%s: %v", src, err)
		}
		if strings.Contains(h.Name, "..") {
			tb.Fatalf("%s: entry %q leaves the folder", src, h.Name)
		}
		p := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				tb.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				tb.Fatal(err)
			}
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777)
			if err != nil {
				tb.Fatal(err)
			}
			if _, err := io.Copy(out, tr); err != nil {
				tb.Fatal(err)
			}
			if err := out.Close(); err != nil {
				tb.Fatal(err)
			}
		}
	}
}
