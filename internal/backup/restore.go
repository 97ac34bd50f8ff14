package backup

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// RestoreOptions tune Restore.
type RestoreOptions struct {
	// Force restores into a folder that already has files: the archive's
	// files replace the folder's of the same names (the others stay).
	Force bool
}

// ErrNotEmpty is a target folder with files in it, refused without Force.
var ErrNotEmpty = errors.New("a pasta de destino não está vazia")

// RestoreFile restores the archive at file into dir.
func RestoreFile(ctx context.Context, file, dir string, o RestoreOptions) (*Manifest, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := Restore(ctx, f, dir, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

// StagingPrefix names the folder Restore unpacks into before moving the
// files into place; Write skips such folders.
const StagingPrefix = ".restore-staging-"

// Restore brings the archive read from r back into dir (created when
// missing). It refuses a dir with files unless o.Force, and a dir that a
// running `remessa web` holds. The whole archive is unpacked and checked
// in a staging folder inside dir first, so a truncated or corrupt archive
// changes nothing; then each file is renamed over its place, a
// database's stale WAL and shared-memory files removed first, so SQLite
// never replays them over the copy.
func Restore(ctx context.Context, r io.Reader, dir string, o RestoreOptions) (*Manifest, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	others := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), StagingPrefix) {
			// left by a restore killed before its end: never in place
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return nil, err
			}
			continue
		}
		others++
	}
	if others > 0 && !o.Force {
		return nil, fmt.Errorf("%s: %w (use --force para restaurar por cima)", dir, ErrNotEmpty)
	}
	if lf, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR, 0); err == nil {
		busy := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
		lf.Close()
		if busy {
			return nil, fmt.Errorf("%s está em uso por um remessa web: pare-o antes de restaurar", dir)
		}
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("não é um backup do remessa (gzip): %w", err)
	}
	tr := tar.NewReader(zr)
	h, err := tr.Next()
	if err != nil || h.Name != ManifestName {
		return nil, fmt.Errorf("não é um backup do remessa: falta %s no início", ManifestName)
	}
	var m Manifest
	if err := json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestName, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("backup no formato %d; este remessa lê o formato %d", m.Format, Format)
	}
	dbs := map[string]bool{}
	for _, d := range m.Databases {
		dbs[d.Path] = true
	}
	// Every file goes first into a staging folder inside dir; only when
	// the whole archive has been read, its count checked against the
	// manifest and gzip's checksum verified does any file move into its
	// place. A truncated or corrupt archive leaves dir as it was.
	stage, err := os.MkdirTemp(dir, StagingPrefix+"*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	var names []string
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("arquivo corrompido depois de %d arquivos: %w (nada foi restaurado)", len(names), err)
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("entrada %q: só arquivos comuns são restaurados", h.Name)
		}
		clean := path.Clean(h.Name)
		if clean != h.Name || path.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") || isTransient(clean) || strings.HasPrefix(clean, StagingPrefix) {
			return nil, fmt.Errorf("entrada %q: caminho fora da pasta", h.Name)
		}
		to := filepath.Join(stage, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, err
		}
		if err := writeAtomic(to, tr, os.FileMode(h.Mode)&0o777); err != nil {
			return nil, fmt.Errorf("%s: %w (nada foi restaurado)", clean, err)
		}
		names = append(names, clean)
	}
	// Reading to the end makes gzip check its CRC and length.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return nil, fmt.Errorf("arquivo corrompido: %w (nada foi restaurado)", err)
	}
	if len(names) != m.Files {
		return nil, fmt.Errorf("o backup tem %d arquivos e o manifesto diz %d: arquivo incompleto (nada foi restaurado)", len(names), m.Files)
	}
	for _, clean := range names {
		to := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return nil, err
		}
		if dbs[clean] {
			for _, suf := range []string{"-wal", "-shm", "-journal"} {
				if err := os.Remove(to + suf); err != nil && !errors.Is(err, os.ErrNotExist) {
					return nil, err
				}
			}
		}
		if err := os.Rename(filepath.Join(stage, filepath.FromSlash(clean)), to); err != nil {
			return nil, fmt.Errorf("%s: %w", clean, err)
		}
	}
	return &m, syncDir(dir)
}

func writeAtomic(to string, r io.Reader, mode os.FileMode) error {
	if mode == 0 {
		mode = 0o600
	}
	f, err := os.CreateTemp(filepath.Dir(to), ".restore-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), to)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
