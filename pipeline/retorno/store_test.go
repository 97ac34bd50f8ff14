package retorno

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"remessa/internal/migrate"
	"remessa/internal/sqlitedb"
)

// TestStoreStep2KeepsStep1Retornos: a retornos.db of step 1 (one row per
// event) with a retorno of the golden entries moves to step 2 (parts);
// the retorno's entries come back in file order and its keys still count
// as reported.
func TestStoreStep2KeepsStep1Retornos(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v1 := migrate.Schema{Name: Schema.Name, Table: Schema.Table, Dialect: Schema.Dialect, Steps: Schema.Steps[:1]}
	db, err := sqlitedb.Open(filepath.Join(dir, FileName), &v1)
	if err != nil {
		t.Fatal(err)
	}
	es := goldenFor(Layout240)
	if _, err := db.Exec(`INSERT INTO retornos (account, nsa, run_id, layout, created_at, path, events, titles, cents, bank, echo)
		VALUES ('A', 1, 'r1', 'cnab240', '2027-02-13T13:15:00Z', '/x', ?, 7, 66000, '', 'null')`, len(es)); err != nil {
		t.Fatal(err)
	}
	for i := len(es) - 1; i >= 0; i-- { // inserted out of order: ord decides
		b, _ := json.Marshal(es[i])
		if _, err := db.Exec(`INSERT INTO eventos (run_id, key, account, nsa, ord, entry) VALUES ('r1', ?, 'A', 1, ?, ?)`, es[i].Key, i+1, b); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	db, err = openStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got []Entry
	if err := eachStored(ctx, db, "A", 1, func(e *Entry) error { got = append(got, *e); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, es) {
		t.Fatalf("after step 2:\n%+v\nwant\n%+v", got, es)
	}
	tx, _ := db.BeginTx(ctx, nil)
	defer tx.Rollback()
	keys, err := reported(ctx, tx, "r1")
	if err != nil || len(keys) != len(es) || !keys["estorno|charge:101|15300"] {
		t.Fatalf("reported keys %v %v", keys, err)
	}
}
