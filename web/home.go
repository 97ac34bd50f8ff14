package web

import (
	"context"
	"net/http"
)

// runRow is a run as lists show it.
type runRow struct {
	ID      int64
	Created string
	Name    string
	Kind    string
	Account string
	Rows    int
	Cents   int64
	Status  string
	By      string
}

// draftRow is a remessa in preparation as lists show it.
type draftRow struct {
	ID        int64
	Updated   string
	InputName string
	Kind      string
	Account   string
	Rows      int
	By        string
}

// homeLimit is how many recent runs the home page lists.
const homeLimit = 50

func (s *Server) home(w http.ResponseWriter, r *http.Request, ss *session) {
	ctx := r.Context()
	acc := s.accountFilter(ctx, ss.User)
	var data struct {
		Runs   []runRow
		Drafts []draftRow
	}
	rows, err := s.db.QueryContext(ctx, `SELECT r.id, r.created_at, r.name, r.kind, a.name, r.rows, r.amount_cents, r.status, u.username
		FROM runs r JOIN accounts a ON a.id = r.account_id JOIN users u ON u.id = r.started_by
		WHERE `+acc.where("r.account_id")+` ORDER BY r.id DESC LIMIT ?`, append(acc.args, homeLimit)...)
	if err != nil {
		s.fail(w, r, http.StatusInternalServerError, msgInternal)
		return
	}
	for rows.Next() {
		var x runRow
		if err := rows.Scan(&x.ID, &x.Created, &x.Name, &x.Kind, &x.Account, &x.Rows, &x.Cents, &x.Status, &x.By); err == nil {
			data.Runs = append(data.Runs, x)
		}
	}
	rows.Close()
	if ss.User.Role.Allows(RoleOperator) {
		// NOT IN reads runs once (runs.draft_id has no index: NOT EXISTS
		// scanned every run for every remessa, 40 ms at 1,000 runs)
		rows, err = s.db.QueryContext(ctx, `SELECT d.id, d.updated_at, d.input_name, d.kind, a.name, d.rows, u.username
			FROM drafts d JOIN accounts a ON a.id = d.account_id JOIN users u ON u.id = d.created_by
			WHERE `+acc.where("d.account_id")+` AND d.id NOT IN (SELECT draft_id FROM runs)
			ORDER BY d.updated_at DESC LIMIT 20`, acc.args...)
		if err == nil {
			for rows.Next() {
				var x draftRow
				if err := rows.Scan(&x.ID, &x.Updated, &x.InputName, &x.Kind, &x.Account, &x.Rows, &x.By); err == nil {
					data.Drafts = append(data.Drafts, x)
				}
			}
			rows.Close()
		}
	}
	s.render(w, "home", s.page(r, ss, tr(langOf(r), "home.title"), data))
}

// audit records who did what (never a secret).
func (s *Server) audit(ctx context.Context, userID int64, action, detail string) {
	s.db.ExecContext(ctx, `INSERT INTO audit (at, user_id, action, detail) VALUES (?, ?, ?, ?)`, nowText(), userID, action, detail)
}
