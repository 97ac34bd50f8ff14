package pipeline

import (
	"go/ast"
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// codeSourceDirs are the packages (from the repository root) whose problem
// codes reach people and programs: validate's text and JSON, results.json,
// the reports and the web app. The sandbox's own API error codes are a
// separate list (docs/errors.md).
var codeSourceDirs = []string{"formats", "formats/cnab", "pipeline", "pipeline/results", "pipeline/run", "pipeline/journal", "pipeline/status", "pipeline/listen", "reports", "reports/conciliacao", "web", "cmd/remessa"}

// codeRe is the form of every problem code: Portuguese snake_case, with an
// optional "prefix:" followed by a placeholder for a code appended at run
// time (split_recusado:<código>).
var codeRe = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*(:<código>)?$`)

// sourceCodes collects, from the Go files (tests excluded) of
// codeSourceDirs, every problem code the code can produce:
//   - the constants of package formats named Code… or Warn…;
//   - string values given to a field named Code or code (keyed or positional
//     composite literals, assignments to x.Code);
//   - string arguments passed for a parameter named code, and string values
//     assigned to a variable named code;
//
// where a value is a string literal, a string constant (by name, also
// pkg.Name) or "literal" + something (recorded as "literal<código>").
// It returns each code with the files that produce it.
func sourceCodes(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	type file struct {
		pkg, dir, name string
		f              *ast.File
	}
	var files []file
	consts := map[string]string{}    // "Name" and "pkg.Name" -> value
	codeParams := map[string][]int{} // func or "Recv.method" -> index of its code parameter
	methods := map[string][]string{} // "pkgdir method" -> receiver types (of that package) with a code parameter
	structCode := map[string]int{}   // struct type -> index of its code field
	for _, dir := range codeSourceDirs {
		paths, err := filepath.Glob(filepath.Join("..", dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := goparser.ParseFile(fset, p, nil, goparser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			rel := filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator)))
			files = append(files, file{f.Name.Name, dir, rel, f})
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.ValueSpec:
							if d.Tok != token.CONST {
								continue
							}
							for i, n := range s.Names {
								if i < len(s.Values) {
									if v, ok := stringLit(s.Values[i]); ok {
										consts[n.Name] = v
										consts[f.Name.Name+"."+n.Name] = v
									}
								}
							}
						case *ast.TypeSpec:
							st, ok := s.Type.(*ast.StructType)
							if !ok {
								continue
							}
							i := 0
							for _, fl := range st.Fields.List {
								n := max(len(fl.Names), 1)
								for _, nm := range fl.Names {
									if nm.Name == "code" || nm.Name == "Code" {
										structCode[s.Name.Name] = i
									}
									i++
								}
								if len(fl.Names) == 0 {
									i += n
								}
							}
						}
					}
				case *ast.FuncDecl:
					i := 0
					for _, fl := range d.Type.Params.List {
						for _, nm := range fl.Names {
							if nm.Name == "code" {
								k := d.Name.Name
								if d.Recv != nil {
									k = recvType(d) + "." + k
									mk := dir + " " + d.Name.Name
									if !slices.Contains(methods[mk], recvType(d)) {
										methods[mk] = append(methods[mk], recvType(d))
									}
								}
								codeParams[k] = append(codeParams[k], i)
							}
							i++
						}
						if len(fl.Names) == 0 {
							i++
						}
					}
				}
			}
		}
	}

	out := ruleCodes(t)
	for _, fl := range files {
		add := func(e ast.Expr) {
			v, ok := codeValue(e, consts)
			if !ok {
				return
			}
			if v == "" {
				return
			}
			if !slices.Contains(out[v], fl.name) {
				out[v] = append(out[v], fl.name)
			}
		}
		if fl.pkg == "formats" {
			for _, d := range fl.f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, s := range g.Specs {
						vs := s.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if (strings.HasPrefix(n.Name, "Code") || strings.HasPrefix(n.Name, "Warn")) && i < len(vs.Values) {
								add(vs.Values[i])
							}
						}
					}
				}
			}
		}
		var fn *ast.FuncDecl // the enclosing function
		ast.Inspect(fl.f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				fn = n
			case *ast.CompositeLit:
				keyed := false
				for _, el := range n.Elts {
					if kv, ok := el.(*ast.KeyValueExpr); ok {
						keyed = true
						if k, ok := kv.Key.(*ast.Ident); ok && (k.Name == "Code" || k.Name == "code") {
							add(kv.Value)
						}
					}
				}
				if !keyed {
					if i, ok := structCode[typeName(n.Type)]; ok && i < len(n.Elts) {
						add(n.Elts[i])
					}
				}
			case *ast.AssignStmt:
				for i, l := range n.Lhs {
					if i >= len(n.Rhs) {
						break
					}
					switch l := l.(type) {
					case *ast.Ident:
						if l.Name == "code" {
							add(n.Rhs[i])
						}
					case *ast.SelectorExpr:
						if l.Sel.Name == "Code" {
							add(n.Rhs[i])
						}
					}
				}
			case *ast.CallExpr:
				var key string
				switch f := n.Fun.(type) {
				case *ast.Ident: // a function of the package (a func literal of that name shadows none of these)
					key = f.Name
				case *ast.SelectorExpr:
					key = f.Sel.Name // pkg.Func
					recvs := methods[fl.dir+" "+f.Sel.Name]
					if len(recvs) == 1 {
						key = recvs[0] + "." + f.Sel.Name
					} else if len(recvs) > 1 {
						rt := varType(fn, f.X)
						if !slices.Contains(recvs, rt) {
							t.Errorf("%s: cannot tell which %s method is called (%v); give the receiver a name the test knows", fset.Position(n.Pos()), f.Sel.Name, recvs)
							return true
						}
						key = rt + "." + f.Sel.Name
					}
				}
				idx, ok := codeParams[key]
				if !ok {
					return true
				}
				for _, i := range idx {
					if i < len(n.Args) {
						add(n.Args[i])
					}
				}
			}
			return true
		})
	}
	return out
}

// ruleCodes collects the codes of the rules package's violations, which
// the pipeline reports as ruleCode(v.Rule): in each file of rules, a
// function literal whose first parameter is rule (add := func(rule, …)),
// the literal "prefix." of a Rule: "prefix." + rule field in the same file,
// and the first argument of each call of that function.
func ruleCodes(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	paths, _ := filepath.Glob("../rules/*.go")
	fset := token.NewFileSet()
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := goparser.ParseFile(fset, p, nil, goparser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		prefix, adder := "", ""
		var rules []string
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.KeyValueExpr:
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Rule" {
					if b, ok := n.Value.(*ast.BinaryExpr); ok && b.Op == token.ADD {
						if v, ok := stringLit(b.X); ok {
							prefix = v
						}
					}
				}
			case *ast.AssignStmt:
				if len(n.Lhs) == 1 && len(n.Rhs) == 1 {
					if fl, ok := n.Rhs[0].(*ast.FuncLit); ok && len(fl.Type.Params.List) > 0 &&
						len(fl.Type.Params.List[0].Names) > 0 && fl.Type.Params.List[0].Names[0].Name == "rule" {
						adder = n.Lhs[0].(*ast.Ident).Name
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && adder != "" && id.Name == adder && len(n.Args) > 0 {
					if v, ok := stringLit(n.Args[0]); ok {
						rules = append(rules, v)
					} else {
						t.Errorf("%s: a rule that is not a literal", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
		if len(rules) > 0 && prefix == "" {
			t.Errorf("%s: rules without a Rule: \"prefix.\" + rule", p)
		}
		for _, r := range rules {
			c := ruleCode(prefix + r)
			name := "rules/" + filepath.Base(p)
			if !slices.Contains(out[c], name) {
				out[c] = append(out[c], name)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no rule codes found in rules/")
	}
	return out
}

func recvType(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return ""
	}
	return typeName(d.Recv.List[0].Type)
}

// varType is the named type of x when x is the receiver or a parameter of
// fn, or a field selection of the receiver that is itself the receiver's
// type name ("" otherwise).
func varType(fn *ast.FuncDecl, x ast.Expr) string {
	id, ok := x.(*ast.Ident)
	if !ok || fn == nil {
		return ""
	}
	var lists []*ast.Field
	if fn.Recv != nil {
		lists = append(lists, fn.Recv.List...)
	}
	lists = append(lists, fn.Type.Params.List...)
	for _, f := range lists {
		for _, n := range f.Names {
			if n.Name == id.Name {
				return typeName(f.Type)
			}
		}
	}
	// a local x := &T{…} or x := T{…}
	found := ""
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || found != "" {
			return found == ""
		}
		for i, l := range as.Lhs {
			if l, ok := l.(*ast.Ident); ok && l.Name == id.Name && i < len(as.Rhs) {
				r := as.Rhs[i]
				if u, ok := r.(*ast.UnaryExpr); ok && u.Op == token.AND {
					r = u.X
				}
				if cl, ok := r.(*ast.CompositeLit); ok {
					found = typeName(cl.Type)
				}
			}
		}
		return true
	})
	return found
}

func typeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func stringLit(e ast.Expr) (string, bool) {
	if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
		v, err := strconv.Unquote(bl.Value)
		return v, err == nil
	}
	return "", false
}

func codeValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		return stringLit(e)
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			v, ok := consts[x.Name+"."+e.Sel.Name]
			return v, ok
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			if v, ok := codeValue(e.X, consts); ok {
				return v + "<código>", true
			}
		}
	case *ast.ParenExpr:
		return codeValue(e.X, consts)
	}
	return "", false
}

// docCodes reads the table of docs/codes.md: the first cell of each row, a
// code in backticks.
func docCodes(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../docs/codes.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([^`]+)` \\|")
	out := map[string]bool{}
	inRenames := false
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "## ") {
			inRenames = strings.Contains(l, "Renamed") || strings.Contains(l, "Renomeados")
		}
		if m := row.FindStringSubmatch(l); m != nil && !inRenames {
			if out[m[1]] {
				t.Errorf("docs/codes.md lists %q twice", m[1])
			}
			out[m[1]] = true
		}
	}
	return out
}

// TestProblemCodesDocumented: every problem code the source can produce is
// in the table of docs/codes.md, every code there is still produced, and
// every code is Portuguese snake_case.
func TestProblemCodesDocumented(t *testing.T) {
	src := sourceCodes(t)
	doc := docCodes(t)
	if len(src) < 50 || len(doc) < 50 {
		t.Fatalf("found %d codes in the source and %d in docs/codes.md: the scanner or the table is broken", len(src), len(doc))
	}
	var codes []string
	for c := range src {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		if !codeRe.MatchString(c) {
			t.Errorf("code %q (%s) is not Portuguese snake_case", c, strings.Join(src[c], ", "))
		}
		if !doc[c] {
			t.Errorf("code %q (%s) is not in the table of docs/codes.md", c, strings.Join(src[c], ", "))
		}
	}
	for c := range doc {
		if _, ok := src[c]; !ok {
			t.Errorf("docs/codes.md lists %q, which no source produces any more", c)
		}
	}
}

// TestProblemCodesNoEnglish guards against the old English codes coming back.
func TestProblemCodesNoEnglish(t *testing.T) {
	src := sourceCodes(t)
	for _, old := range []string{"missing_columns", "empty_file", "bad_quote", "ambiguous_column", "no_data", "open",
		"too_large", "too_many_rows", "corrupt", "encrypted", "old_xls", "unknown_format", "sheet_not_found",
		"ragged_row", "bad_structure", "nested_value", "unknown_column", "bad_money", "bad_percent", "bad_date",
		"bad_serial", "encoding_cp1252", "duplicate_header", "blank_header", "data_without_header",
		"formula_without_value", "cell_error", "refused", "denied", "ambiguous", "pending", "NEGADA"} {
		if f, ok := src[old]; ok {
			t.Errorf("old code %q is still produced (%s)", old, strings.Join(f, ", "))
		}
	}
}

// TestProblemNames: every code of docs/codes.md has a name for people in
// both languages (what the desk shows instead of the code), no name is left
// for a code the table no longer lists, and a code with a detail after a
// colon is named by its base.
func TestProblemNames(t *testing.T) {
	doc := docCodes(t)
	for c := range doc {
		base, _, _ := strings.Cut(c, ":")
		n, ok := problemNames[base]
		if !ok {
			t.Errorf("code %q has no name (problemNames)", c)
			continue
		}
		if n[0] == "" || n[1] == "" || strings.Contains(n[0], "_") && !strings.Contains(n[0], " ") {
			t.Errorf("code %q is named %q", c, n)
		}
	}
	for c := range problemNames {
		if !doc[c] && !doc[c+":<código>"] {
			t.Errorf("problemNames names %q, which docs/codes.md does not list", c)
		}
	}
	for _, c := range []struct{ code, lang, want string }{
		{"zeros_restaurados", "pt", "Zeros à esquerda restaurados (CPF, CNPJ ou CEP gravado como número)"},
		{"cpf_invalido", "en", "CPF check digits do not match"},
		{"split_recusado:3500034", "pt", "O serviço recusou a configuração de split"},
		{"codigo_que_nao_existe", "pt", "codigo_que_nao_existe"},
	} {
		if got := ProblemName(c.code, c.lang); got != c.want {
			t.Errorf("ProblemName(%q, %q) = %q, want %q", c.code, c.lang, got, c.want)
		}
	}
}
