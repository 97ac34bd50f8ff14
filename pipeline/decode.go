package pipeline

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Pos is a position in the job file (1-based line and column).
type Pos struct {
	Line, Column int
}

// decoder walks a yaml.v3 node tree into the job's Go structs strictly:
// every mapping key must be a known field, every scalar must convert to
// the field's type, and required fields must be present. It interpolates
// ${VAR} and ${VAR:default} in every scalar before converting it, records
// the position of every value by JSON pointer, and collects every problem
// instead of stopping at the first.
type decoder struct {
	file  string
	env   func(string) (string, bool)
	probs []JobProblem
	pos   map[string]Pos // JSON pointer -> position of the value
}

func (d *decoder) errAt(n *yaml.Node, ptr, code, pt, en string) {
	p := JobProblem{File: d.file, Pointer: ptr, Code: code, Message: pt, MessageEN: en}
	if n != nil {
		p.Line, p.Column = n.Line, n.Column
	}
	d.probs = append(d.probs, p)
}

// scalar returns the interpolated text of a scalar node; any other node
// is a type problem ("esperado um valor simples"+what, found ...).
func (d *decoder) scalar(n *yaml.Node, ptr, what, whatEN string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		pt, en := kindName(n)
		d.errAt(n, ptr, "tipo_invalido", "esperado um valor simples"+what+", encontrado "+pt, "expected a plain value"+whatEN+", found "+en)
		return "", false
	}
	return d.interpolate(n, ptr)
}

// field describes one struct field as the job file names it.
type field struct {
	name     string
	index    int
	required bool
}

func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		fs = append(fs, field{name: name, index: i, required: f.Tag.Get("req") == "true"})
	}
	return fs
}

// nodeDecoder is implemented by types that decode themselves from a scalar
// (after interpolation), such as Text with its position.
type nodeDecoder interface {
	decodeScalar(value string, pos Pos) error
}

var nodeDecoderType = reflect.TypeFor[nodeDecoder]()

func kindName(n *yaml.Node) (pt, en string) {
	switch n.Kind {
	case yaml.MappingNode:
		return "um mapa (chave: valor)", "a mapping (key: value)"
	case yaml.SequenceNode:
		return "uma lista", "a list"
	case yaml.AliasNode:
		return "um alias", "an alias"
	}
	if n.Tag == "!!null" {
		return "nada (valor vazio)", "nothing (an empty value)"
	}
	return fmt.Sprintf("o valor %q", n.Value), fmt.Sprintf("the value %q", n.Value)
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, ptr string) {
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return
		}
		n = n.Content[0]
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.pos[ptr] = Pos{n.Line, n.Column}
	if v.Kind() == reflect.Pointer {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.CanAddr() && v.Addr().Type().Implements(nodeDecoderType) {
		s, ok := d.scalar(n, ptr, " (texto ou número)", " (text or number)")
		if !ok {
			return
		}
		if err := v.Addr().Interface().(nodeDecoder).decodeScalar(s, Pos{n.Line, n.Column}); err != nil {
			d.errAt(n, ptr, "valor_invalido", err.Error(), localizedEN(err))
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v, ptr)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			pt, en := kindName(n)
			d.errAt(n, ptr, "tipo_invalido", "esperada uma lista, encontrado "+pt, "expected a list, found "+en)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			d.decode(c, s.Index(i), fmt.Sprintf("%s/%d", ptr, i))
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			pt, en := kindName(n)
			d.errAt(n, ptr, "tipo_invalido", "esperado um mapa (chave: valor), encontrado "+pt, "expected a mapping (key: value), found "+en)
			return
		}
		m := reflect.MakeMap(v.Type())
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			ev := reflect.New(v.Type().Elem()).Elem()
			d.decode(val, ev, ptr+"/"+escapePointer(k.Value))
			m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), ev)
		}
		v.Set(m)
	case reflect.String, reflect.Int, reflect.Int64, reflect.Bool:
		s, ok := d.scalar(n, ptr, "", "")
		if !ok {
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString(s)
		case reflect.Int, reflect.Int64:
			i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				d.errAt(n, ptr, "tipo_invalido", fmt.Sprintf("esperado um número inteiro, encontrado %q", s), fmt.Sprintf("expected an integer, found %q", s))
				return
			}
			v.SetInt(i)
		case reflect.Bool:
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true", "yes", "sim", "on":
				v.SetBool(true)
			case "false", "no", "não", "nao", "off":
				v.SetBool(false)
			default:
				d.errAt(n, ptr, "tipo_invalido", fmt.Sprintf("esperado true ou false, encontrado %q", s), fmt.Sprintf("expected true or false, found %q", s))
			}
		}
	default:
		panic("pipeline: unsupported job field type " + v.Type().String())
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, ptr string) {
	if n.Kind != yaml.MappingNode {
		pt, en := kindName(n)
		d.errAt(n, ptr, "tipo_invalido", "esperado um mapa (chave: valor), encontrado "+pt, "expected a mapping (key: value), found "+en)
		return
	}
	fs := fieldsOf(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		var f *field
		for j := range fs {
			if fs[j].name == k.Value {
				f = &fs[j]
				break
			}
		}
		kp := ptr + "/" + escapePointer(k.Value)
		d.pos[kp+keySuffix] = Pos{k.Line, k.Column}
		if f == nil {
			names := make([]string, 0, len(fs))
			for _, f := range fs {
				names = append(names, f.name)
			}
			sort.Strings(names)
			hint, hintEN := "", ""
			if k.Value == "split" && (ptr == "/issue/carnets" || ptr == "/issue/boletos") {
				// the charges API splits per item
				hint, hintEN = " (o split de marketplace vai em cada item: items[].marketplace)", " (the marketplace split goes in each item: items[].marketplace)"
			}
			d.errAt(k, kp, "chave_desconhecida",
				fmt.Sprintf("chave desconhecida %q%s; chaves aceitas aqui: %s", k.Value, hint, strings.Join(names, ", ")),
				fmt.Sprintf("unknown key %q%s; keys accepted here: %s", k.Value, hintEN, strings.Join(names, ", ")))
			continue
		}
		if seen[f.name] {
			d.errAt(k, kp, "chave_repetida", fmt.Sprintf("chave %q repetida", k.Value), fmt.Sprintf("key %q repeated", k.Value))
			continue
		}
		seen[f.name] = true
		sf := v.Type().Field(f.index)
		if sf.Tag.Get("secret") == "true" && val.Kind == yaml.ScalarNode && strings.TrimSpace(val.Value) != "" && !onlyVariable(val.Value) {
			d.errAt(val, kp, "credencial_literal",
				fmt.Sprintf("%s não pode ser escrito no arquivo de job: use uma variável de ambiente, por exemplo ${REMESSA_%s}", f.name, strings.ToUpper(f.name)),
				fmt.Sprintf("%s cannot be written in the job file: use an environment variable, for example ${REMESSA_%s}", f.name, strings.ToUpper(f.name)))
			continue
		}
		if sf.Tag.Get("nullempty") == "true" && val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
			// "boletos:" with nothing after it means "boletos with the defaults"
			empty := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: k.Line, Column: k.Column}
			d.decode(empty, v.Field(f.index), kp)
			continue
		}
		d.decode(val, v.Field(f.index), kp)
		if enum := sf.Tag.Get("enum"); enum != "" {
			d.checkEnum(val, v.Field(f.index), kp, strings.Split(enum, ","))
		}
	}
	for _, f := range fs {
		if f.required && !seen[f.name] {
			d.errAt(n, ptr+"/"+f.name, "campo_obrigatorio",
				fmt.Sprintf("falta o campo obrigatório %q", f.name),
				fmt.Sprintf("required field %q is missing", f.name))
		}
	}
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

var reVar = regexp.MustCompile(`\$\$\{|\$\{([^}:]*)(:([^}]*))?\}`)
var reVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// interpolate replaces ${VAR} and ${VAR:default} in the node's value with
// the environment; $${ is a literal ${. An undefined variable without a
// default is a problem naming the variable and its line.
func (d *decoder) interpolate(n *yaml.Node, ptr string) (string, bool) {
	s := n.Value
	if !strings.Contains(s, "${") {
		return s, true
	}
	ok := true
	out := reVar.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$${" {
			return "${"
		}
		sub := reVar.FindStringSubmatch(m)
		name, hasDef, def := sub[1], sub[2] != "", sub[3]
		if !reVarName.MatchString(name) {
			ok = false
			d.errAt(n, ptr, "variavel_invalida",
				fmt.Sprintf("nome de variável inválido em %q", m),
				fmt.Sprintf("invalid variable name in %q", m))
			return ""
		}
		if val, found := d.env(name); found {
			return val
		}
		if hasDef {
			return def
		}
		ok = false
		d.errAt(n, ptr, "variavel_indefinida",
			fmt.Sprintf("a variável de ambiente %s não está definida (linha %d); defina-a ou use ${%s:padrão}", name, n.Line, name),
			fmt.Sprintf("environment variable %s is not defined (line %d); set it or use ${%s:default}", name, n.Line, name))
		return ""
	})
	return out, ok
}

// onlyVariable reports whether s is exactly one ${VAR} reference.
func onlyVariable(s string) bool {
	s = strings.TrimSpace(s)
	loc := reVar.FindStringIndex(s)
	return loc != nil && loc[0] == 0 && loc[1] == len(s) && s != "$${"
}

func refValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// checkEnum checks a decoded string, int or []string against its allowed
// values; zero values (not given) pass.
func (d *decoder) checkEnum(n *yaml.Node, v reflect.Value, ptr string, allowed []string) {
	check := func(n *yaml.Node, s, ptr string) {
		for _, a := range allowed {
			if s == a {
				return
			}
		}
		d.errAt(n, ptr, "valor_nao_permitido",
			fmt.Sprintf("valor %q não permitido; use um de: %s", s, strings.Join(allowed, ", ")),
			fmt.Sprintf("value %q not allowed; use one of: %s", s, strings.Join(allowed, ", ")))
	}
	switch v.Kind() {
	case reflect.String:
		if v.String() != "" {
			check(n, v.String(), ptr)
		}
	case reflect.Int:
		if v.Int() != 0 || n.Value == "0" {
			check(n, strconv.FormatInt(v.Int(), 10), ptr)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i := 0; i < v.Len() && i < len(n.Content); i++ {
			if e := v.Index(i); e.Kind() == reflect.String {
				check(n.Content[i], e.String(), fmt.Sprintf("%s/%d", ptr, i))
			}
		}
	}
}
