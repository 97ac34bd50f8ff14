package web

import (
	"strings"

	"remessa/internal/migrate"
)

// deskActionsSchema is the DDL of the desk's follow-up actions (actions.go):
// step 2 of web.db (deskActionsStep, in Schema's list in db.go,
// internal/migrate; CREATE … IF NOT EXISTS, so a web.db of the binaries
// that made it before versions keeps its table as it is).
//
// desk_actions holds one row per selection the desk planned: the selection
// itself as an action spec (pipeline/actions.Spec as JSON), the plan shown,
// who planned and who confirmed it, its status (planned → queued → running
// → done | problems | failed), the folder it runs in under the run
// (<run>/acoes/<action_id>/, the same journal as `remessa action`), and its
// River job (job_id, of the generation the row names: a job of an older
// generation finds itself superseded and ends).
var deskActionsSchema = []string{
	`CREATE TABLE IF NOT EXISTS desk_actions (
		id INTEGER PRIMARY KEY,
		run_id INTEGER NOT NULL REFERENCES runs(id),
		kind TEXT NOT NULL,
		spec TEXT NOT NULL,
		plan TEXT NOT NULL DEFAULT '',
		items INTEGER NOT NULL DEFAULT 0,
		charges INTEGER NOT NULL DEFAULT 0,
		amount_cents INTEGER NOT NULL DEFAULT 0,
		status TEXT NOT NULL,
		action_id TEXT NOT NULL DEFAULT '',
		created_by INTEGER NOT NULL REFERENCES users(id),
		created_at TEXT NOT NULL,
		confirmed_by INTEGER,
		confirmed_at TEXT NOT NULL DEFAULT '',
		finished_at TEXT NOT NULL DEFAULT '',
		generation INTEGER NOT NULL DEFAULT 0,
		job_id INTEGER NOT NULL DEFAULT 0,
		outcome TEXT NOT NULL DEFAULT '',
		message TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE INDEX IF NOT EXISTS desk_actions_run ON desk_actions(run_id, id DESC)`,
	`CREATE INDEX IF NOT EXISTS desk_actions_open ON desk_actions(status) WHERE status IN ('queued', 'running')`,
}

// deskActionsStep is web.db's step 2.
var deskActionsStep = migrate.Step{Name: "ações da mesa", SQL: strings.Join(deskActionsSchema, ";\n")}
