package web

import (
	"fmt"
	"net/http"
	"time"

	"remessa/internal/backup"
	"remessa/pipeline/run"
)

// The backup page: the desk's whole data folder (web.db, the key that
// seals the accounts' credentials, the remessas, the runs with their
// journals and ledgers, the embedded sandbox) as one archive, taken while
// the desk works (internal/backup), for `remessa restore`.

type adminBackupData struct {
	DataDir string
	Cluster bool // runs are in PostgreSQL (--db): not in the archive
}

func (s *Server) adminBackupPage(w http.ResponseWriter, r *http.Request, ss *session) {
	p := s.page(r, ss, tr(langOf(r), "admin.backup.title"), adminBackupData{DataDir: s.cfg.DataDir, Cluster: s.cfg.DB != ""})
	s.render(w, "admin_backup", p)
}

// startedWriter tells whether anything was written (after the first
// byte an error can no longer become a page).
type startedWriter struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (sw *startedWriter) Write(b []byte) (int, error) {
	if !sw.started {
		sw.started = true
		h := sw.w.Header()
		h.Set("Content-Type", "application/gzip")
		h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, sw.name))
		h.Set("Cache-Control", "no-store")
		sw.w.WriteHeader(http.StatusOK)
	}
	return sw.w.Write(b)
}

// adminBackup streams the archive as a download.
func (s *Server) adminBackup(w http.ResponseWriter, r *http.Request, ss *session) {
	name := "remessa-backup-" + s.now().Format("20060102-150405") + ".tar.gz"
	sw := &startedWriter{w: w, name: name}
	start := time.Now()
	m, err := backup.Write(r.Context(), s.cfg.DataDir, sw, backup.Options{Remessa: run.Version, Now: s.now})
	if err != nil {
		s.log.Error().Err(err).Bool("iniciado", sw.started).Msg("backup")
		if !sw.started {
			s.fail(w, r, http.StatusInternalServerError, tr(langOf(r), "admin.backup.failed"))
		}
		return
	}
	s.audit(r.Context(), ss.User.ID, "backup", fmt.Sprintf("%d arquivos, %d bancos", m.Files, len(m.Databases)))
	s.log.Info().Int("arquivos", m.Files).Int64("bytes", m.Bytes).Dur("pausa", m.Paused).Dur("duracao", time.Since(start)).Msg("backup baixado")
}
