package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"remessa/formats/cnab"
	"remessa/pipeline"
	"remessa/pipeline/results"
)

// Draft is a remessa in preparation: a kind, an account, an uploaded sheet
// (stored under a generated name) and the settings that make its job file.
type Draft struct {
	ID          int64
	Kind        results.Kind
	AccountID   int64
	CreatedBy   int64
	Created     string
	Updated     string
	InputName   string // the name the user's file had (shown, never used as a path)
	InputFile   string // generated name under the draft's folder
	Settings    Settings
	Columns     map[string]string // field -> header overrides
	JobUploaded bool
	CNAB        bool // the file is a CNAB remessa (draftCNAB), not a sheet
	CheckedSHA  string
	Rows        int
	Refused     int
	Errors      int
	Warnings    int
	RunID       int64 // the run made from it, if any
	Account     string
	Service     string
}

func (s *Server) loadDraft(ctx context.Context, id int64) (*Draft, error) {
	var d Draft
	var settings, cols string
	var up int
	err := s.db.QueryRowContext(ctx, `SELECT d.id, d.kind, d.account_id, d.created_by, d.created_at, d.updated_at, d.input_name, d.input_file,
		d.settings, d.columns, d.job_uploaded, d.checked_sha, d.rows, d.refused, d.errors, d.warnings, a.name, a.service,
		COALESCE((SELECT max(id) FROM runs WHERE draft_id = d.id), 0)
		FROM drafts d JOIN accounts a ON a.id = d.account_id WHERE d.id = ?`, id).
		Scan(&d.ID, &d.Kind, &d.AccountID, &d.CreatedBy, &d.Created, &d.Updated, &d.InputName, &d.InputFile, &settings, &cols, &up,
			&d.CheckedSHA, &d.Rows, &d.Refused, &d.Errors, &d.Warnings, &d.Account, &d.Service, &d.RunID)
	if err != nil {
		return nil, err
	}
	d.JobUploaded = up != 0
	d.CNAB = s.draftCNAB(&d)
	json.Unmarshal([]byte(settings), &d.Settings)
	json.Unmarshal([]byte(cols), &d.Columns)
	if d.Columns == nil {
		d.Columns = map[string]string{}
	}
	return &d, nil
}

// draftFor loads the draft in the request's {id} that ss's user may see,
// answering 404 itself when there is none.
func (s *Server) draftFor(w http.ResponseWriter, r *http.Request, ss *session) *Draft {
	d, _ := owned(s, w, r, ss, s.loadDraft, func(d *Draft) int64 { return d.AccountID })
	return d
}

// pathID is the request's {id}, a positive integer.
func pathID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

// owned loads the object of the request's {id} with load and returns it
// when ss's user may use its service account; otherwise it answers 404
// itself (another account's remessa is as unknown as a missing one).
func owned[T any](s *Server, w http.ResponseWriter, r *http.Request, ss *session, load func(context.Context, int64) (T, error), account func(T) int64) (T, bool) {
	var zero T
	id, ok := pathID(r)
	if ok {
		v, err := load(r.Context(), id)
		if err == nil && s.accountFilter(r.Context(), ss.User).allows(account(v)) {
			return v, true
		}
	}
	s.fail(w, r, http.StatusNotFound, tr(langOf(r), "err.notfound"))
	return zero, false
}

// editable refuses changes to a remessa that was already run.
func (s *Server) editable(w http.ResponseWriter, r *http.Request, d *Draft) bool {
	if d.RunID != 0 {
		http.Redirect(w, r, fmt.Sprintf("/execucoes/%d", d.RunID), http.StatusSeeOther)
		return false
	}
	return true
}

func (s *Server) saveDraft(ctx context.Context, d *Draft) error {
	st, _ := json.Marshal(d.Settings)
	cols, _ := json.Marshal(d.Columns)
	up := 0
	if d.JobUploaded {
		up = 1
	}
	_, err := s.db.ExecContext(ctx, `UPDATE drafts SET updated_at = ?, input_name = ?, input_file = ?, settings = ?, columns = ?, job_uploaded = ?,
		checked_sha = ?, rows = ?, refused = ?, errors = ?, warnings = ? WHERE id = ?`,
		nowText(), d.InputName, d.InputFile, string(st), string(cols), up, d.CheckedSHA, d.Rows, d.Refused, d.Errors, d.Warnings, d.ID)
	return err
}

// uploadError is a refused upload, said to the user.
type uploadError struct{ msg string }

func (e *uploadError) Error() string { return e.msg }

// sniffSheet decides what an uploaded sheet is from its content (the
// name's extension only tells CSV from YAML text): the extension it is
// stored under, or why it is refused.
func sniffSheet(head []byte, name string) (string, error) {
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return ".xlsx", nil
	case bytes.HasPrefix(head, []byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}):
		return "", &uploadError{"Esta planilha é do Excel antigo (.xls) ou está protegida por senha. Abra-a no Excel, tire a senha se houver, e salve como \"Pasta de Trabalho do Excel (.xlsx)\"; depois envie de novo."}
	case len(head) == 0:
		return "", &uploadError{"O arquivo enviado está vazio."}
	case bytes.HasPrefix(head, []byte("%PDF")):
		return "", &uploadError{"O arquivo enviado é um PDF, não uma planilha. Envie a planilha em .xlsx, .csv ou .yaml."}
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "", &uploadError{"O arquivo enviado não parece uma planilha (tem conteúdo binário). Envie .xlsx, .csv ou .yaml."}
	}
	ext := strings.ToLower(filepath.Ext(name))
	if ext == ".yaml" || ext == ".yml" {
		return ".yaml", nil
	}
	return ".csv", nil
}

// storeUpload copies an uploaded file into the draft's folder under a
// generated name chosen from its content, and returns that name.
func storeUpload(dir string, f io.Reader, name string, max int64) (string, error) {
	head := make([]byte, 8192)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return "", err
	}
	head = head[:n]
	ext, err := sniffSheet(head, name)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	target := "planilha" + ext
	tmp, err := os.CreateTemp(dir, ".envio-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	written, err := io.Copy(tmp, io.MultiReader(bytes.NewReader(head), io.LimitReader(f, max+1-int64(len(head)))))
	if err == nil && written > max {
		err = &uploadError{fmt.Sprintf("O arquivo passa do limite de %d MB.", max>>20)}
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return "", &uploadError{fmt.Sprintf("O arquivo passa do limite de %d MB.", max>>20)}
		}
		return "", err
	}
	for _, old := range []string{"planilha.xlsx", "planilha.csv", "planilha.yaml"} {
		os.Remove(filepath.Join(dir, old))
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, target)); err != nil {
		return "", err
	}
	return target, nil
}

// cleanName is a user's file name fit to show and to offer in a download.
func cleanName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`/\:*?"<>|`, r) {
			continue
		}
		b.WriteRune(r)
	}
	out := strings.TrimSpace(b.String())
	if !utf8.ValidString(out) || out == "" || out == "." || out == ".." {
		return "planilha"
	}
	if len(out) > 120 {
		out = out[:120]
	}
	return out
}

// writeJob writes the draft's job file from its settings (a job uploaded
// by the user is kept as it was, its input pointed at the stored sheet).
func (s *Server) writeJob(d *Draft) error {
	if d.JobUploaded {
		return nil
	}
	b, err := jobYAML(d.Kind, d.Settings, d.InputFile, "", d.Columns)
	if err != nil {
		return err
	}
	return writeFileSync(s.draftJobPath(d.ID), b)
}

func writeFileSync(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
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
	return os.Rename(tmp, path)
}

// adoptJob takes a job file the user uploaded: it must load as YAML; its
// input.file is pointed at the stored sheet and its service is left to the
// account chosen on the page.
func adoptJob(data []byte, inputFile string) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, &uploadError{"O job.yaml enviado não é um arquivo YAML de job (veja docs/job-file.md)."}
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "input" && top.Content[i+1].Kind == yaml.MappingNode {
			in := top.Content[i+1]
			for j := 0; j+1 < len(in.Content); j += 2 {
				if in.Content[j].Value == "file" {
					in.Content[j+1].Value, in.Content[j+1].Tag, in.Content[j+1].Style = inputFile, "!!str", 0
					return yaml.Marshal(&root)
				}
			}
		}
	}
	return nil, &uploadError{"O job.yaml enviado não tem input.file (a planilha que ele lê)."}
}

// draftSHA identifies the job file and the sheet together, so a
// validation is redone when either changes.
func (s *Server) draftSHA(d *Draft) string {
	h := sha256.New()
	for _, p := range []string{s.draftJobPath(d.ID), filepath.Join(s.draftDir(d.ID), d.InputFile)} {
		f, err := os.Open(p)
		if err != nil {
			return ""
		}
		io.Copy(h, f)
		f.Close()
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// draftCNAB reports whether the draft's stored file is a CNAB remessa, as
// the pipeline recognises one from its first line (cnab.Detect).
func (s *Server) draftCNAB(d *Draft) bool {
	f, err := os.Open(filepath.Join(s.draftDir(d.ID), d.InputFile))
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return cnab.Detect(head[:n]) != ""
}

// loadJob loads the draft's job as the pipeline does.
func (s *Server) loadJob(d *Draft) (*pipeline.Job, error) {
	// The server's environment is not the job's: an uploaded job's ${VAR}
	// gets its default or is refused, so no job can read the server's
	// variables (REMESSA_WEB_KEY among them) into a page.
	return pipeline.Load(s.draftJobPath(d.ID), pipeline.LoadOptions{Now: s.cfg.Now, Getenv: noEnv})
}

var _ = sql.ErrNoRows

func noEnv(string) (string, bool) { return "", false }
