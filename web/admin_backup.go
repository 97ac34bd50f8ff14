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

// backupDict holds the backup page's texts: key -> {Portuguese, English}.
var backupDict = map[string][2]string{
	"admin.backup.title":         {"Backup", "Backup"},
	"admin.backup.intro":         {"Baixe uma cópia de todos os dados da mesa num só arquivo. Pode baixar com execuções em andamento: a cópia é de um só instante, e uma execução restaurada continua do ponto em que estava, sem emitir nada duas vezes.", "Download a copy of all of the desk's data in one file. You may download it while runs are in progress: the copy is of a single moment, and a restored run goes on from where it was, issuing nothing twice."},
	"admin.backup.what.db":       {"os usuários, as contas de serviço, as remessas e a fila de execuções (web.db);", "the users, service accounts, remessas and the runs' queue (web.db);"},
	"admin.backup.what.key":      {"a chave que protege as credenciais das contas (guarde o arquivo com o mesmo cuidado que as credenciais);", "the key that protects the accounts' credentials (keep the file as carefully as the credentials);"},
	"admin.backup.what.runs":     {"as execuções, com seus journals, situações e relatórios, e os dados do serviço embutido.", "the runs, with their journals, status ledgers and reports, and the embedded service's data."},
	"admin.backup.cluster":       {"Esta mesa guarda as execuções no PostgreSQL (--db): elas não estão neste arquivo; faça o backup do banco com pg_dump.", "This desk keeps its runs in PostgreSQL (--db): they are not in this file; back the database up with pg_dump."},
	"admin.backup.folder":        {"Pasta de dados:", "Data folder:"},
	"admin.backup.download":      {"Baixar backup", "Download backup"},
	"admin.backup.restore.title": {"Para restaurar", "To restore"},
	"admin.backup.restore":       {"Pare a mesa, restaure o arquivo numa pasta vazia e inicie a mesa nela:", "Stop the desk, restore the file into an empty folder and start the desk there:"},
	"admin.backup.failed":        {"Não foi possível fazer o backup. Tente de novo; se persistir, veja o log do servidor.", "The backup could not be made. Try again; if it persists, see the server's log."},
}

func init() {
	for k, v := range backupDict {
		dict[k] = v
	}
}

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
		logOf(r.Context(), s.log).Error().Err(err).Bool("iniciado", sw.started).Msg("backup")
		if !sw.started {
			s.fail(w, r, http.StatusInternalServerError, tr(langOf(r), "admin.backup.failed"))
		}
		return
	}
	s.audit(r.Context(), ss.User.ID, "backup", fmt.Sprintf("%d arquivos, %d bancos", m.Files, len(m.Databases)))
	logOf(r.Context(), s.log).Info().Int("arquivos", m.Files).Int64("bytes", m.Bytes).Dur("pausa", m.Paused).Dur("duracao", time.Since(start)).Msg("backup baixado")
}
