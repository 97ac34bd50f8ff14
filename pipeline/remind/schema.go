package remind

import (
	"strings"

	"remessa/internal/migrate"
)

// FileName is the reminder journal of a run folder: what the régua sent,
// is sending or decided not to send, per charge and step.
const FileName = "lembretes.db"

// Schema is lembretes.db's tables, step by step (internal/migrate; docs/
// operations.md "Upgrades"): step 1 is the DDL below as the first binaries
// with reminders made it (CREATE TABLE IF NOT EXISTS, so a file they wrote
// is taken as it is), frozen; a new table or column is a new step.
var Schema = migrate.Schema{Name: FileName, Table: "lembretes_schema_version", Dialect: migrate.SQLite, Steps: []migrate.Step{
	{Name: "envios e passadas", SQL: strings.Join(schemaV1, ";\n")},
}}

// schemaV1 is step 1 of lembretes.db.
//
// sends: one row per charge and step (UNIQUE: a step is sent at most once
// per charge). A row is written in state "sending" and committed before
// the e-mail or the call goes out, and finished after ("sent", "failed",
// "skipped", "uncertain"); a row found "sending" by the next pass is a
// crash between the two and becomes "uncertain", never sent again. A send
// known not to have happened (the server refused the connection, a 429)
// deletes its row so a later pass tries again.
var schemaV1 = []string{
	`CREATE TABLE IF NOT EXISTS sends (
		id INTEGER PRIMARY KEY,
		charge_key TEXT NOT NULL,
		offset_days INTEGER NOT NULL,
		channel TEXT NOT NULL,
		state TEXT NOT NULL,
		row_key TEXT NOT NULL,
		parcel INTEGER NOT NULL DEFAULT 0,
		email TEXT NOT NULL,
		amount_cents INTEGER NOT NULL,
		due TEXT NOT NULL,
		detail TEXT NOT NULL DEFAULT '',
		pass_id INTEGER NOT NULL,
		intended_at TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT '',
		UNIQUE (charge_key, offset_days, channel)
	)`,
	`CREATE INDEX IF NOT EXISTS sends_row ON sends(row_key, parcel)`,
	`CREATE TABLE IF NOT EXISTS passes (
		id INTEGER PRIMARY KEY,
		started_at TEXT NOT NULL,
		service_now TEXT NOT NULL,
		finished_at TEXT NOT NULL DEFAULT '',
		sent INTEGER NOT NULL DEFAULT 0,
		skipped INTEGER NOT NULL DEFAULT 0,
		uncertain INTEGER NOT NULL DEFAULT 0,
		failed INTEGER NOT NULL DEFAULT 0,
		note TEXT NOT NULL DEFAULT ''
	)`,
}
