package web

import (
	"strings"

	"remessa/internal/migrate"
)

// deskReguaStep is web.db's step 4: the desk's régua de cobrança
// (regua.go).
//
// regua_desk has one row (id 1): the desk's default régua (a reguaConfig
// as JSON, ” until an admin saves one), the message of the own e-mail
// (subject and body, ” for the default pt-BR text), and the SMTP server:
// address, port, TLS mode, sender and its certificate authority (PEM) in
// the clear, the user and password sealed with the desk's key (as the
// service accounts' credentials, secrets.go) in smtp_secrets.
//
// regua_runs has a row per run whose régua an operator set: mode default
// (the desk's), own (config, a reguaConfig as JSON) or off.
var deskReguaStep = migrate.Step{Name: "régua de cobrança da mesa", SQL: strings.Join([]string{
	`CREATE TABLE regua_desk (
		id INTEGER PRIMARY KEY CHECK (id = 1),
		config TEXT NOT NULL DEFAULT '',
		subject TEXT NOT NULL DEFAULT '',
		body TEXT NOT NULL DEFAULT '',
		smtp_host TEXT NOT NULL DEFAULT '',
		smtp_port INTEGER NOT NULL DEFAULT 0,
		smtp_tls TEXT NOT NULL DEFAULT '',
		smtp_from TEXT NOT NULL DEFAULT '',
		smtp_ca TEXT NOT NULL DEFAULT '',
		smtp_secrets BLOB,
		updated_by INTEGER REFERENCES users(id),
		updated_at TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE TABLE regua_runs (
		run_id INTEGER PRIMARY KEY REFERENCES runs(id),
		mode TEXT NOT NULL,
		config TEXT NOT NULL DEFAULT '',
		updated_by INTEGER REFERENCES users(id),
		updated_at TEXT NOT NULL
	)`,
}, ";\n")}
