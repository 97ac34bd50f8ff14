package formats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestYAMLList(t *testing.T) {
	r := mustOpen(t, "testdata/payers.yaml", Options{})
	src := r.Source()
	if src.Format != "yaml" || strings.Join(src.Headers, "|") != "nome|cpf|valor|vencimento|cidade|ativo" {
		t.Fatalf("source = %+v", src)
	}
	rows, errs := readRows(t, r)
	if len(errs) != 0 || len(rows) != 3 {
		t.Fatalf("rows = %+v errs = %v", rows, errs)
	}
	if rows[0].Number != 2 || rows[1].Number != 7 || rows[2].Number != 13 {
		t.Errorf("row numbers %d %d %d, want 2 7 13", rows[0].Number, rows[1].Number, rows[2].Number)
	}
	c := rows[0].Cells
	if c[1].Value != "01234567890" || c[1].Kind != KindText || c[2].Value != "1.234,56" {
		t.Errorf("row 2 = %+v", c)
	}
	c = rows[1].Cells
	if c[1].Value != "52998224725" || c[1].Kind != KindNumber {
		t.Errorf("cpf = %+v", c[1])
	}
	if v, err := ParseMoneyCell(c[2]); err != nil || v != 8990 {
		t.Errorf("valor 89.9 = %d, %v", v, err)
	}
	if c[3].Value != "2027-03-05" || c[3].Kind != KindDate {
		t.Errorf("vencimento = %+v", c[3])
	}
	if c[4].Value != "São Paulo" || c[5].Value != "true" || c[5].Kind != KindBool {
		t.Errorf("row 7 = %+v", c)
	}
	c = rows[2].Cells
	if c[2].Kind != KindEmpty || c[2].Value != "" || c[1].Kind != KindEmpty || c[1].Column != "cpf" || c[1].Header != "cpf" {
		t.Errorf("row 13 = %+v", c)
	}
}

func TestYAMLRowsKeyAndNested(t *testing.T) {
	r := mustOpen(t, "testdata/rows.yaml", Options{})
	rows, errs := readRows(t, r)
	if len(rows) != 1 || rows[0].Number != 2 || rows[0].Cells[1].Value != "10,00" {
		t.Fatalf("rows = %+v", rows)
	}
	if len(errs) != 1 || errs[0].Code != CodeNestedValue || errs[0].Row != 3 || errs[0].Column != "extra" {
		t.Fatalf("errs = %v", errs)
	}
}

func TestYAMLBroken(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"empty.yaml":  "  \n# nada\n",
		"scalar.yaml": "olá\n",
		"map.yaml":    "nome: Ana\nvalor: 1\n",
		"items.yaml":  "- Ana\n- Beto\n",
		"syntax.yaml": "- nome: Ana\n  valor: [1,\n",
		"nolist.yaml": "rows: []\n",
	}
	want := map[string]string{"empty.yaml": CodeEmpty, "scalar.yaml": CodeBadStructure, "map.yaml": CodeBadStructure,
		"items.yaml": CodeBadStructure, "syntax.yaml": CodeCorrupt, "nolist.yaml": CodeEmpty}
	for name, content := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		_, err := Open(p, Options{})
		if codeOf(err) != want[name] {
			t.Errorf("%s: %v, want code %s", name, err, want[name])
		}
	}
}
