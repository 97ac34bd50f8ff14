package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// Aliases are look-up keys that lead to a document: a token, a payload
// location, an endToEndId. A row (kind, account, key) names its Owner
// (the document's id) and Ref (free text: the account of a global alias).
// They live in their own table, without the listing index.

// PutAlias writes (replaces) the alias (kind, account, key).
func (tx *Tx) PutAlias(kind, account, key, owner, ref string) error {
	if err := tx.exec("putAlias", kind, account, key, owner, ref); err != nil {
		return fmt.Errorf("store: put alias %s/%s/%s: %w", kind, account, key, err)
	}
	return nil
}

// DeleteAlias removes the alias (kind, account, key), if any.
func (tx *Tx) DeleteAlias(kind, account, key string) error {
	if err := tx.exec("delAlias", kind, account, key); err != nil {
		return fmt.Errorf("store: delete alias %s/%s/%s: %w", kind, account, key, err)
	}
	return nil
}

// DeleteAliases removes the aliases (kind, account, key) of keys.
func (tx *Tx) DeleteAliases(kind, account string, keys []string) error {
	if tx.s.stmts != nil { // SQLite: row by row (see PutIndexes)
		for _, k := range keys {
			if err := tx.DeleteAlias(kind, account, k); err != nil {
				return err
			}
		}
		return nil
	}
	for len(keys) > 0 {
		part := keys[:min(len(keys), maxIn)]
		keys = keys[len(part):]
		args := []any{kind, account}
		for _, k := range part {
			args = append(args, k)
		}
		q := tx.s.be.rebind("DELETE FROM alias WHERE kind = ? AND account = ? AND key IN " + inList(len(part)))
		if _, err := tx.execSQL(q, args...); err != nil {
			return fmt.Errorf("store: delete aliases %s/%s: %w", kind, account, err)
		}
	}
	return nil
}

// Alias is an alias row's target.
type Alias struct{ Owner, Ref string }

// GetAlias reads the alias (kind, account, key) inside the transaction.
func (tx *Tx) GetAlias(kind, account, key string) (Alias, bool, error) {
	return scanAlias(tx.queryRow("getAlias", kind, account, key), kind, account, key)
}

// GetAlias reads the alias (kind, account, key).
func (s *Store) GetAlias(ctx context.Context, kind, account, key string) (Alias, bool, error) {
	return scanAlias(s.r.QueryRowContext(ctx, s.q["getAlias"], kind, account, key), kind, account, key)
}

func scanAlias(row *sql.Row, kind, account, key string) (Alias, bool, error) {
	var a Alias
	err := row.Scan(&a.Owner, &a.Ref)
	if errors.Is(err, sql.ErrNoRows) {
		return Alias{}, false, nil
	}
	if err != nil {
		return Alias{}, false, fmt.Errorf("store: get alias %s/%s/%s: %w", kind, account, key, err)
	}
	return a, true, nil
}

// GetAliases reads the aliases (kind, account, key) of keys inside the
// transaction, in a few queries; keys without one are absent from the map.
func (tx *Tx) GetAliases(kind, account string, keys []string) (map[string]Alias, error) {
	out := make(map[string]Alias, len(keys))
	for len(keys) > 0 {
		part := keys[:min(len(keys), maxIn)]
		keys = keys[len(part):]
		args := []any{kind, account}
		for _, k := range part {
			args = append(args, k)
		}
		q := tx.s.be.rebind("SELECT key, owner, ref FROM alias WHERE kind = ? AND account = ? AND key IN " + inList(len(part)))
		rows, err := tx.querySQL(q, args...)
		if err != nil {
			return nil, fmt.Errorf("store: get aliases %s/%s: %w", kind, account, err)
		}
		for rows.Next() {
			var k string
			var a Alias
			if err := rows.Scan(&k, &a.Owner, &a.Ref); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: get aliases %s/%s: %w", kind, account, err)
			}
			out[k] = a
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: get aliases %s/%s: %w", kind, account, err)
		}
	}
	return out, nil
}

// AliasRow is one alias of PutAliases.
type AliasRow struct{ Key, Owner, Ref string }

// PutAliases writes (replaces) several aliases of (kind, account) in a few
// statements.
func (tx *Tx) PutAliases(kind, account string, rows []AliasRow) error {
	if tx.s.stmts != nil {
		// SQLite: aliasChunk rows a statement, prepared once; the rest row
		// by row (see PutIndexes). A multi-row statement keeps a statement
		// journal of the pages it changes, but a batch's aliases (its
		// locations) are consecutive keys: a page or two a statement.
		for len(rows) >= aliasChunk {
			args := make([]any, 0, 5*aliasChunk)
			for _, r := range rows[:aliasChunk] {
				args = append(args, kind, account, r.Key, r.Owner, r.Ref)
			}
			if err := tx.exec("putAliases", args...); err != nil {
				return fmt.Errorf("store: put aliases %s/%s (%s…): %w", kind, account, rows[0].Key, err)
			}
			rows = rows[aliasChunk:]
		}
		for _, r := range rows {
			if err := tx.PutAlias(kind, account, r.Key, r.Owner, r.Ref); err != nil {
				return err
			}
		}
		return nil
	}
	// PostgreSQL refuses to update one row twice in a statement: a key
	// given twice keeps its last row, as SQLite's row-by-row upsert does
	rows = lastPerKey(rows)
	const per = 100
	for len(rows) > 0 {
		part := rows[:min(len(rows), per)]
		rows = rows[len(part):]
		args := make([]any, 0, 5*len(part))
		for _, r := range part {
			args = append(args, kind, account, r.Key, r.Owner, r.Ref)
		}
		q := tx.s.be.rebind("INSERT INTO alias(kind, account, key, owner, ref) VALUES " + values(len(part), 5) +
			" ON CONFLICT(kind, account, key) DO UPDATE SET owner = excluded.owner, ref = excluded.ref")
		if _, err := tx.execSQL(q, args...); err != nil {
			return fmt.Errorf("store: put aliases %s/%s: %w", kind, account, err)
		}
	}
	return nil
}

// lastPerKey returns rows with only the last row of each key, in the
// order of those last rows (rows itself when no key repeats).
func lastPerKey(rows []AliasRow) []AliasRow {
	last := make(map[string]int, len(rows))
	for i, r := range rows {
		last[r.Key] = i
	}
	if len(last) == len(rows) {
		return rows
	}
	out := make([]AliasRow, 0, len(last))
	for i, r := range rows {
		if last[r.Key] == i {
			out = append(out, r)
		}
	}
	return out
}

// aliasChunk is the rows of PutAliases' multi-row statement on SQLite.
const aliasChunk = 50

// values is "(?, ?), (?, ?)" for rows of cols placeholders.
func values(rows, cols int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}
