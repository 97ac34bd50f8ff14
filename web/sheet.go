package web

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"remessa/formats"
	"remessa/pipeline"
	"remessa/pipeline/results"
	"remessa/reports"
	"remessa/rules"
)

// pageSize is how many rows a page of the validation table shows.
const pageSize = 100

// sheetInfo is what a validation found about the sheet as a whole, kept
// in the draft's columns JSON beside the overrides.
type sheetInfo struct {
	Headers []string `json:"headers"`
	Columns []string `json:"columns"`
	Problem string   `json:"problem,omitempty"` // the job or the file cannot be used
	// Stored and Bad count the rows kept in sheet_rows and those marked
	// bad, so a page of the table does not count 100,000 rows; Counted
	// says they were set (a remessa validated before counts them per page).
	Stored  int  `json:"stored,omitempty"`
	Bad     int  `json:"bad,omitempty"`
	Counted bool `json:"counted,omitempty"`
}

// validateDraft validates the remessa's job and sheet with the pipeline
// (the same validation `remessa validate` does) and stores the sheet's
// cells and every note, so the table pages come from the database. It is
// skipped when neither the job nor the sheet changed since the last time.
func (s *Server) validateDraft(ctx context.Context, d *Draft) (*sheetInfo, error) {
	sha := s.draftSHA(d)
	if sha != "" && sha == d.CheckedSHA {
		return s.loadSheetInfo(ctx, d.ID)
	}
	info := &sheetInfo{}
	job, err := s.loadJob(d)
	var v *pipeline.Validation
	if err == nil {
		v, err = validateKeepRefused(ctx, job)
	}
	if err != nil {
		info.Problem = s.cleanPaths(d, describeJobErr(err, "pt"))
		d.Rows, d.Refused, d.Errors, d.Warnings = 0, 0, 0, 0
		if err := s.storeSheet(ctx, d, info, nil, nil); err != nil {
			return nil, err
		}
		d.CheckedSHA = sha
		return info, s.saveDraft(ctx, d)
	}
	rd, err := formats.Open(job.InputFile, job.StreamOptions())
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	src := rd.Source()
	info.Headers, info.Columns = src.Headers, src.Columns
	if err := s.storeSheet(ctx, d, info, rd, v); err != nil {
		return nil, err
	}
	d.Rows, d.Refused, d.Errors, d.Warnings = v.Summary.Rows, v.Summary.Refused, v.Summary.Errors, v.Summary.Warnings
	d.CheckedSHA = sha
	return info, s.saveDraft(ctx, d)
}

// storeSheet replaces the stored cells and notes of a draft in one
// transaction.
func (s *Server) storeSheet(ctx context.Context, d *Draft, info *sheetInfo, rd formats.Reader, v *pipeline.Validation) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range []string{`DELETE FROM sheet_rows WHERE draft_id = ?`, `DELETE FROM sheet_notes WHERE draft_id = ?`} {
		if _, err := tx.ExecContext(ctx, q, d.ID); err != nil {
			return err
		}
	}
	info.Stored, info.Bad, info.Counted = 0, 0, true
	if rd != nil {
		bad := map[int]bool{}
		for _, rr := range v.Refused {
			bad[rr.Index] = true
		}
		// rows go in sheetBatch at a time: one statement per row costs
		// more than the sheet's reading on 100,000 rows
		insert := func(n int) string {
			return `INSERT INTO sheet_rows (draft_id, idx, row_num, cells, bad) VALUES ` + strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?), ", n), ", ")
		}
		ins, err := tx.PrepareContext(ctx, insert(sheetBatch))
		if err != nil {
			return err
		}
		defer ins.Close()
		args := make([]any, 0, 5*sheetBatch)
		flush := func() error {
			var err error
			if len(args) == 5*sheetBatch {
				_, err = ins.ExecContext(ctx, args...)
			} else if len(args) > 0 {
				_, err = tx.ExecContext(ctx, insert(len(args)/5), args...)
			}
			args = args[:0]
			return err
		}
		// A note at a CNAB title's positions ("9:18-33") names no column
		// of the table: the cell at those positions in its row gives it one.
		posNotes := map[int][]int{} // row index -> notes at positions
		for j, n := range v.Notes {
			if _, _, _, ok := formats.ParsePositionColumn(n.Column); ok {
				posNotes[n.Index] = append(posNotes[n.Index], j)
			}
		}
		noteCol := map[int]string{} // note -> the table's column
		vals := make([]string, 0, len(info.Headers))
		var buf []byte
		for idx := 0; ; idx++ {
			row, err := rd.Next()
			if err == io.EOF {
				break
			}
			var fe *formats.Error
			if err != nil && !formats.IsRowLevel(err) {
				if errors.As(err, &fe) && fe.Code == formats.CodeNoData {
					break
				}
				return err
			}
			vals = vals[:0]
			number := 0
			if err != nil {
				// a row the reader refused whole (a ragged CSV row, a CNAB
				// title with a field that does not read) is a row of the
				// validation all the same, refused with its problem: kept
				// without cells, so every later row keeps its index
				if errors.As(err, &fe) {
					number = fe.Row
				}
			} else {
				number = row.Number
				for i, c := range row.Cells {
					h := ""
					if i < len(info.Headers) {
						h = info.Headers[i]
					}
					vals = append(vals, displayCell(c, h))
				}
				for _, j := range posNotes[idx] {
					for i, c := range row.Cells {
						if c.Column == v.Notes[j].Column && i < len(info.Columns) {
							noteCol[j] = info.Columns[i]
							break
						}
					}
				}
			}
			buf, _ = json.Marshal(vals)
			b := 0
			if bad[idx] {
				b = 1
				info.Bad++
			}
			info.Stored++
			args = append(args, d.ID, idx, number, string(buf), b)
			if len(args) == 5*sheetBatch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := flush(); err != nil {
			return err
		}
		note, err := tx.PrepareContext(ctx, `INSERT INTO sheet_notes (draft_id, idx, severity, code, col, field, message, message_en) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer note.Close()
		for j, n := range v.Notes {
			col, pt, en := n.Column, n.Message, n.MessageEN
			if _, _, _, ok := formats.ParsePositionColumn(col); ok {
				// positions instead of a column: the message says where
				pt = formats.Place("pt", n.Row, col, n.Header) + ": " + pt
				if en != "" {
					en = formats.Place("en", n.Row, col, n.Header) + ": " + en
				}
				col = noteCol[j]
			}
			if _, err := note.ExecContext(ctx, d.ID, n.Index, n.Severity, n.Code, col, n.Field, pt, en); err != nil {
				return err
			}
		}
	}
	ib, _ := json.Marshal(info)
	if _, err := tx.ExecContext(ctx, `UPDATE drafts SET columns = json_set(columns, '$.__sheet', json(?)) WHERE id = ?`, string(ib), d.ID); err != nil {
		return err
	}
	return tx.Commit()
}

// sheetBatch is how many rows one INSERT into sheet_rows carries.
const sheetBatch = 100

// displayCell is a cell under header as the table shows it: dates as
// dd/mm/aaaa, the rest as typed in the file. A CNAB title's field is
// shown as it was read rather than as the positions hold it (a CPF
// without the field's zeros, a street without its number), money in reais,
// the movement and the discounts in words.
func displayCell(c formats.Cell, header string) string {
	if c.Kind == formats.KindDate {
		if t, err := time.Parse("2006-01-02", c.Value); err == nil {
			return t.Format("02/01/2006")
		}
	}
	if _, _, _, ok := formats.ParsePositionColumn(c.Column); ok {
		return cnabCellText(c, header)
	}
	if c.Raw != "" && c.Kind == formats.KindText {
		return c.Raw
	}
	return c.Value
}

// cnabCellText is displayCell's text of a CNAB title's field.
func cnabCellText(c formats.Cell, header string) string {
	v := strings.TrimSpace(c.Value)
	switch {
	case header == formats.CNABMovement && v != "":
		pt, _ := formats.CNABMovementName(v)
		return pt + " (" + v + ")"
	case strings.HasPrefix(header, "Desconto") && strings.Count(v, "|") == 2:
		return cnabDiscountText(v)
	case c.Kind == formats.KindNumber: // the value, the rebate: money
		if cents, err := rules.ParseDecimal(v, 2); err == nil {
			return rules.FormatBRL(cents)
		}
	}
	return v
}

// cnabDiscountText says a CNAB discount cell ("code|2027-02-01|5.00", the
// codes of FEBRABAN's table C021) in words.
func cnabDiscountText(v string) string {
	parts := strings.SplitN(v, "|", 3)
	val, ok := decimalText(parts[2])
	if !ok {
		return v
	}
	until := ""
	if t, err := time.Parse("2006-01-02", parts[1]); err == nil {
		until = " até " + t.Format("02/01/2006")
	}
	switch parts[0] {
	case "1":
		return "R$ " + val + until
	case "2":
		return val + "%" + until
	case "3", "4":
		return "R$ " + val + " por dia de antecipação"
	case "5", "6":
		return val + "% por dia de antecipação"
	}
	return v
}

// decimalText writes a decimal read with a point ("1234.5") as people in
// Brazil write it ("1.234,50"); ok is false for anything else.
func decimalText(v string) (string, bool) {
	cents, err := rules.ParseDecimal(v, 2)
	if err != nil {
		return "", false
	}
	return strings.TrimPrefix(strings.Replace(rules.FormatBRL(cents), "R$ ", "", 1), "R$"), true
}

func (s *Server) loadSheetInfo(ctx context.Context, id int64) (*sheetInfo, error) {
	var raw sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT json_extract(columns, '$.__sheet') FROM drafts WHERE id = ?`, id).Scan(&raw); err != nil {
		return nil, err
	}
	info := &sheetInfo{}
	if raw.Valid {
		json.Unmarshal([]byte(raw.String), info)
	}
	return info, nil
}

// cleanPaths replaces the server's folders in a message by the names the
// user knows.
func (s *Server) cleanPaths(d *Draft, msg string) string {
	msg = strings.ReplaceAll(msg, filepath.Join(s.draftDir(d.ID), d.InputFile), d.InputName)
	msg = strings.ReplaceAll(msg, s.draftJobPath(d.ID), "job.yaml")
	return strings.ReplaceAll(msg, s.cfg.DataDir, "…")
}

// tableCell is one cell of the validation table.
type tableCell struct {
	Text     string
	Bad      bool
	Warned   bool
	Messages []string
}

// tableRow is one row of the validation table.
type tableRow struct {
	Index  int
	Number int
	Bad    bool
	Cells  []tableCell
	Other  []string // notes about the row that name no column
	All    []string // every error of the row, "Header: message" (shown under the row number on a phone)
}

// codeCount is how many notes have a code.
type codeCount struct {
	Code     string // for programs: the filter's address, data-code
	Name     string // for people: pipeline.ProblemName
	Severity string
	Count    int
	Example  string
}

// validationView is the validation page's data.
type validationView struct {
	Draft      *Draft
	Step       int
	Info       *sheetInfo
	Rows       []tableRow
	Codes      []codeCount
	Filter     string
	OnlyBad    bool
	Page       int
	Pages      int
	Matching   int
	PrevURL    string
	NextURL    string
	Accepted   int
	CanPlan    bool
	RejectFile bool
}

func (s *Server) validationPage(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	s.renderValidation(w, r, ss, d, "", http.StatusOK)
}

func (s *Server) renderValidation(w http.ResponseWriter, r *http.Request, ss *session, d *Draft, msg string, status int) {
	ctx := r.Context()
	lang := langOf(r)
	info, err := s.validateDraft(ctx, d)
	if err != nil {
		logOf(r.Context(), s.log).Error().Err(err).Int64("remessa", d.ID).Msg("validação")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	v := validationView{Draft: d, Step: 4, Info: info, Filter: r.URL.Query().Get("problema"), OnlyBad: r.URL.Query().Get("so") == "erros",
		Accepted: d.Rows - d.Refused}
	v.CanPlan = info.Problem == "" && d.Rows > 0 && (d.Refused == 0 || d.Rows > d.Refused && d.Settings.OnInvalid == "skip" || d.JobUploaded && d.Rows > d.Refused)
	// a CNAB remessa's refused titles go back to the ERP, not to a
	// person's editor: the table lists them at their lines and positions
	v.RejectFile = d.Refused > 0 && !d.CNAB
	rows, err := s.db.QueryContext(ctx, `SELECT code, severity, count(*), min(message) FROM sheet_notes WHERE draft_id = ? GROUP BY code, severity ORDER BY count(*) DESC`, d.ID)
	if err == nil {
		for rows.Next() {
			var c codeCount
			var pt string
			rows.Scan(&c.Code, &c.Severity, &c.Count, &pt)
			c.Example, c.Name = pt, pipeline.ProblemName(c.Code, lang)
			v.Codes = append(v.Codes, c)
		}
		rows.Close()
	}
	where, args := `draft_id = ?`, []any{d.ID}
	switch {
	case v.Filter != "":
		where += ` AND idx IN (SELECT idx FROM sheet_notes WHERE draft_id = ? AND code = ?)`
		args = append(args, d.ID, v.Filter)
	case v.OnlyBad:
		where += ` AND bad = 1`
	}
	// the plain table's and the bad rows' counts were kept by the
	// validation (counting them is a scan of every stored row)
	switch {
	case info.Counted && v.Filter == "" && !v.OnlyBad:
		v.Matching = info.Stored
	case info.Counted && v.Filter == "" && v.OnlyBad:
		v.Matching = info.Bad
	default:
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM sheet_rows WHERE `+where, args...).Scan(&v.Matching); err != nil {
			s.fail(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
	}
	v.Pages = (v.Matching + pageSize - 1) / pageSize
	v.Page, _ = strconv.Atoi(r.URL.Query().Get("pagina"))
	if v.Page < 1 {
		v.Page = 1
	}
	if v.Pages > 0 && v.Page > v.Pages {
		v.Page = v.Pages
	}
	// rows by keyset on idx for the plain table (a page of 100,000 rows
	// costs the same as the first), by offset on a filtered one
	var q string
	qargs := append([]any{}, args...)
	if v.Filter == "" && !v.OnlyBad {
		q = `SELECT idx, row_num, cells, bad FROM sheet_rows WHERE ` + where + ` AND idx >= ? ORDER BY idx LIMIT ?`
		qargs = append(qargs, (v.Page-1)*pageSize, pageSize)
	} else {
		q = `SELECT idx, row_num, cells, bad FROM sheet_rows WHERE ` + where + ` ORDER BY idx LIMIT ? OFFSET ?`
		qargs = append(qargs, pageSize, (v.Page-1)*pageSize)
	}
	if v.Matching == 0 {
		q, qargs = `SELECT idx, row_num, cells, bad FROM sheet_rows WHERE 0`, nil // not a scan for nothing
	}
	rs, err := s.db.QueryContext(ctx, q, qargs...)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	colIdx := map[string]int{}
	for i, c := range info.Columns {
		colIdx[c] = i
	}
	byIdx := map[int]int{}
	for rs.Next() {
		var tr tableRow
		var cells string
		var bad int
		if err := rs.Scan(&tr.Index, &tr.Number, &cells, &bad); err != nil {
			continue
		}
		var vals []string
		json.Unmarshal([]byte(cells), &vals)
		tr.Bad = bad != 0
		tr.Cells = make([]tableCell, len(info.Headers))
		for i := range tr.Cells {
			if i < len(vals) {
				tr.Cells[i].Text = vals[i]
			}
		}
		byIdx[tr.Index] = len(v.Rows)
		v.Rows = append(v.Rows, tr)
	}
	rs.Close()
	if len(v.Rows) > 0 {
		ns, err := s.db.QueryContext(ctx, `SELECT idx, severity, col, message, message_en, code FROM sheet_notes WHERE draft_id = ? AND idx BETWEEN ? AND ?`,
			d.ID, v.Rows[0].Index, v.Rows[len(v.Rows)-1].Index)
		if err == nil {
			for ns.Next() {
				var idx int
				var sev, col, pt, en, code string
				ns.Scan(&idx, &sev, &col, &pt, &en, &code)
				ri, ok := byIdx[idx]
				if !ok {
					continue
				}
				m := pt
				if lang == "en" && en != "" {
					m = en
				}
				// words for people; the code is in the filters' addresses
				row := &v.Rows[ri]
				if ci, ok := colIdx[col]; ok && col != "" && ci < len(row.Cells) {
					c := &row.Cells[ci]
					c.Messages = append(c.Messages, m)
					if sev == pipeline.SevError {
						c.Bad = true
						row.All = append(row.All, info.Headers[ci]+": "+m)
					} else {
						c.Warned = true
					}
				} else {
					row.Other = append(row.Other, m)
					if sev == pipeline.SevError {
						row.All = append(row.All, m)
					}
				}
			}
			ns.Close()
		}
	}
	link := func(page int) string {
		q := url.Values{}
		if v.Filter != "" {
			q.Set("problema", v.Filter)
		}
		if v.OnlyBad {
			q.Set("so", "erros")
		}
		q.Set("pagina", strconv.Itoa(page))
		return fmt.Sprintf("/remessas/%d/validacao?%s", d.ID, q.Encode())
	}
	if v.Page > 1 {
		v.PrevURL = link(v.Page - 1)
	}
	if v.Page < v.Pages {
		v.NextURL = link(v.Page + 1)
	}
	p := s.page(r, ss, tr(lang, "val.title"), v)
	p.Error, p.Status = msg, status
	s.render(w, "validation", p)
}

// replaceSheet takes a corrected sheet: it replaces the stored one and the
// remessa goes back to validation.
func (s *Server) replaceSheet(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil || !s.editable(w, r, d) {
		return
	}
	lang := langOf(r)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		s.renderValidation(w, r, ss, d, uploadMsg(err, s.cfg.MaxUpload, lang), http.StatusBadRequest)
		return
	}
	defer r.MultipartForm.RemoveAll()
	file, hdr, err := r.FormFile("planilha")
	if err != nil {
		s.renderValidation(w, r, ss, d, tr(lang, "new.pickfile"), http.StatusBadRequest)
		return
	}
	defer file.Close()
	stored, err := storeUpload(s.draftDir(d.ID), file, hdr.Filename, s.cfg.MaxUpload)
	if err != nil {
		s.renderValidation(w, r, ss, d, uploadMsg(err, s.cfg.MaxUpload, lang), http.StatusBadRequest)
		return
	}
	if d.JobUploaded && stored != d.InputFile {
		raw, err := readFileLimited(s.draftJobPath(d.ID), 1<<20)
		if err == nil {
			raw, err = adoptJob(raw, stored)
		}
		if err == nil {
			err = writeFileSync(s.draftJobPath(d.ID), raw)
		}
		if err != nil {
			s.fail(w, r, http.StatusInternalServerError, msgInternal)
			return
		}
	}
	d.InputFile, d.InputName, d.CheckedSHA = stored, cleanName(hdr.Filename), ""
	if err := s.writeJob(d); err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	s.saveDraft(r.Context(), d)
	s.audit(r.Context(), ss.User.ID, "planilha_substituida", fmt.Sprintf("remessa %d", d.ID))
	http.Redirect(w, r, fmt.Sprintf("/remessas/%d/validacao", d.ID), http.StatusSeeOther)
}

// rejectedDownload gives the refused rows in the sheet's own format with a
// Problema column (the same file a run writes as rejeitadas.*).
func (s *Server) rejectedDownload(w http.ResponseWriter, r *http.Request, ss *session) {
	d := s.draftFor(w, r, ss)
	if d == nil {
		return
	}
	if d.CNAB {
		s.fail(w, r, http.StatusNotFound, tr(langOf(r), "val.cnab.norejected"))
		return
	}
	job, err := s.loadJob(d)
	var v *pipeline.Validation
	if err == nil {
		v, err = validateKeepRefused(r.Context(), job)
	}
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, s.cleanPaths(d, describeJobErr(err, langOf(r))))
		return
	}
	tmp, err := os.CreateTemp(s.draftDir(d.ID), ".recusadas-*")
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	format, err := reports.WriteRejectedRows(tmp, reports.InputInfo{Path: job.InputFile, Sheet: job.Sheet}, reports.RejectedRows(v.Refused, langOf(r)), langOf(r))
	if err != nil && !errors.Is(err, reports.ErrRowsNotFound) {
		logOf(r.Context(), s.log).Error().Err(err).Msg("recusadas")
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	base := strings.TrimSuffix(d.InputName, filepath.Ext(d.InputName))
	name := "recusadas-" + base + "." + format
	types := map[string]string{"xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "csv": "text/csv; charset=utf-8", "yaml": "application/yaml; charset=utf-8"}
	w.Header().Set("Content-Type", types[format])
	w.Header().Set("Content-Disposition", "attachment; filename*=UTF-8''"+url.PathEscape(name))
	tmp.Seek(0, io.SeekStart)
	io.Copy(w, tmp)
}

func readFileLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s: arquivo grande demais", filepath.Base(path))
	}
	return b, err
}

// validateKeepRefused is pipeline.ValidateNotes keeping the refused rows
// too: memory grows with the problems found, never with the sheet.
func validateKeepRefused(ctx context.Context, job *pipeline.Job) (*pipeline.Validation, error) {
	v := &pipeline.Validation{Job: job}
	sum, err := pipeline.ValidateStream(ctx, job, pipeline.Handler{
		Note:    func(n pipeline.Note) { v.Notes = append(v.Notes, n) },
		Refused: func(r *results.Row) error { v.Refused = append(v.Refused, *r); return nil },
	})
	if err != nil {
		return nil, err
	}
	v.Summary = *sum
	return v, nil
}
