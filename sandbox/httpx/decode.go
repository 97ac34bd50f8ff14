package httpx

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// DefaultMaxBody is the largest request body DecodeStrict accepts (1 MiB).
// Routes with bigger bodies (PUT /v2/lotecobv/:id with 1000 items) use
// DecodeStrictLimit.
const DefaultMaxBody = 1 << 20

// DecodeErrorKind classifies a DecodeError.
type DecodeErrorKind int

// Kinds of decoding failure.
const (
	ErrUnknownProperty DecodeErrorKind = iota + 1 // a property the type does not have
	ErrWrongType                                  // a value of the wrong JSON type (or an out-of-range integer)
	ErrSyntax                                     // not JSON, or trailing data after the value
	ErrEmptyBody                                  // no body at all
	ErrTooLarge                                   // body above the limit
	ErrControlChar                                // a control character inside a string (see ControlChar)
)

// DecodeError tells what is wrong with a request body and where.
type DecodeError struct {
	Kind     DecodeErrorKind
	Pointer  string // JSON pointer of the offending value ("" = the whole body), e.g. "/items/0/nome"
	Message  string // Portuguese, for the client
	Expected string // for ErrWrongType: "string", "integer", "number", "boolean", "array", "object"
	Got      string // for ErrWrongType: the JSON type found
}

func (e *DecodeError) Error() string {
	if e.Pointer == "" {
		return e.Message
	}
	return e.Pointer + ": " + e.Message
}

// Status is the HTTP status a handler should answer: 413 for ErrTooLarge,
// 400 otherwise.
func (e *DecodeError) Status() int {
	if e.Kind == ErrTooLarge {
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusBadRequest
}

// DecodeStrict reads r's body (at most DefaultMaxBody bytes) into v, which
// must be a pointer. It refuses unknown properties, values of the wrong
// type, a control character inside a string (ControlChar; a field tagged
// `text:"multiline"` may also hold line breaks), invalid JSON, trailing
// data, an empty body and a body above the limit, saying where with a JSON
// pointer. It never panics on any input.
func DecodeStrict(r *http.Request, v any) *DecodeError {
	return DecodeStrictLimit(r, v, DefaultMaxBody)
}

// DecodeStrictLimit is DecodeStrict with a body limit in bytes.
func DecodeStrictLimit(r *http.Request, v any, limit int64) *DecodeError {
	if r.Body == nil || r.Body == http.NoBody {
		return emptyBody()
	}
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	if r.ContentLength > limit {
		return tooLarge(limit)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return &DecodeError{Kind: ErrSyntax, Message: "Não foi possível ler o corpo da requisição"}
	}
	if int64(len(data)) > limit {
		return tooLarge(limit)
	}
	return DecodeBytes(data, v)
}

func emptyBody() *DecodeError {
	return &DecodeError{Kind: ErrEmptyBody, Message: "Corpo da requisição vazio; esperado um JSON"}
}

func tooLarge(limit int64) *DecodeError {
	return &DecodeError{Kind: ErrTooLarge, Message: fmt.Sprintf("Corpo da requisição maior que o limite de %d bytes", limit)}
}

// DecodeBytes is DecodeStrict on a body already read.
func DecodeBytes(data []byte, v any) *DecodeError {
	if len(bytes.TrimSpace(data)) == 0 {
		return emptyBody()
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &DecodeError{Kind: ErrSyntax, Message: fmt.Sprintf("JSON inválido: dados após o fim do valor (byte %d)", dec.InputOffset()+1)}
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("httpx: DecodeStrict needs a non-nil pointer")
	}
	if de := check(rv.Type().Elem(), generic, "", false); de != nil {
		return de
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			p := ""
			if te.Field != "" {
				p = "/" + strings.ReplaceAll(te.Field, ".", "/")
			}
			return &DecodeError{Kind: ErrWrongType, Pointer: p, Expected: jsonTypeName(te.Type), Got: te.Value,
				Message: "Tipo inválido: esperado " + jsonTypeName(te.Type) + ", recebido " + te.Value}
		}
		return &DecodeError{Kind: ErrWrongType, Message: "Valor inválido: " + sanitize(err.Error())}
	}
	return nil
}

func syntaxError(err error) *DecodeError {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &DecodeError{Kind: ErrSyntax, Message: fmt.Sprintf("JSON inválido perto do byte %d: %s", se.Offset, sanitize(se.Error()))}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &DecodeError{Kind: ErrSyntax, Message: "JSON inválido: fim inesperado do corpo"}
	}
	return &DecodeError{Kind: ErrSyntax, Message: "JSON inválido: " + sanitize(err.Error())}
}

// sanitize keeps an error message short and printable.
func sanitize(s string) string {
	s = strings.TrimPrefix(s, "json: ")
	if len(s) > 200 {
		s = s[:200]
	}
	return strings.ToValidUTF8(s, "?")
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType          = reflect.TypeFor[json.Number]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

// maxEcho is how much of a client's text an error message repeats.
const maxEcho = 80

// Clip returns s cut to at most n runes, with "…" when it was cut.
func Clip(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}

func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "valor"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == numberType {
		return "number"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string"
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "valor"
}

func wrongType(ptr string, want string, got any) *DecodeError {
	g := kindOf(got)
	return &DecodeError{Kind: ErrWrongType, Pointer: ptr, Expected: want, Got: g,
		Message: "Tipo inválido: esperado " + want + ", recebido " + g}
}

// ControlChar finds the first character of s that a text field may not
// hold: a C0 control character (U+0000–U+001F) other than tab, or DEL
// (U+007F). With multiline, a line feed and a carriage return followed by
// a line feed (a line break) are allowed too; a lone carriage return is
// not. Banks refuse these characters and they break printed slips; the
// real service answers them with a validation error. It returns the
// character and its position in characters (1-based), or ok false.
func ControlChar(s string, multiline bool) (c rune, pos int, ok bool) {
	for i := 0; i < len(s); i++ { // these are all ASCII: no byte of a multi-byte character is below 0x80
		b := s[i]
		if b >= 0x20 && b != 0x7f || b == '\t' {
			continue
		}
		if multiline && (b == '\n' || b == '\r' && i+1 < len(s) && s[i+1] == '\n') {
			continue
		}
		return rune(b), utf8.RuneCountInString(s[:i]) + 1, true
	}
	return 0, 0, false
}

// ControlCharMessage is the message of a refused control character.
func ControlCharMessage(c rune, pos int) string {
	return fmt.Sprintf("Caractere de controle não permitido (U+%04X) na posição %d do texto", c, pos)
}

func controlError(ptr string, s string, multiline bool) *DecodeError {
	c, pos, bad := ControlChar(s, multiline)
	if !bad {
		return nil
	}
	return &DecodeError{Kind: ErrControlChar, Pointer: ptr, Expected: "string", Got: "string", Message: ControlCharMessage(c, pos)}
}

// controlIn walks a value the type does not describe (any, json.RawMessage,
// a type that decodes itself) for strings, and object keys, holding a
// control character.
func controlIn(val any, ptr string) *DecodeError {
	switch v := val.(type) {
	case string:
		return controlError(ptr, v, false)
	case []any:
		for i, e := range v {
			if de := controlIn(e, ptr+"/"+strconv.Itoa(i)); de != nil {
				return de
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := ptr + "/" + escapePointer(Clip(k, maxEcho))
			if de := controlError(p, k, false); de != nil {
				return de
			}
			if de := controlIn(v[k], p); de != nil {
				return de
			}
		}
	}
	return nil
}

// check walks the generic value val along type t; multiline tells whether
// the field (tag text:"multiline") may hold line breaks.
func check(t reflect.Type, val any, ptr string, multiline bool) *DecodeError {
	if t == rawMessageType || t == numberType && isNumber(val) {
		return controlIn(val, ptr)
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		pt := reflect.PointerTo(t)
		if pt.Implements(unmarshalerType) || t.Implements(unmarshalerType) {
			// The type validates itself: run it on this value alone so a
			// refusal gets its pointer.
			if val == nil {
				return nil
			}
			if de := controlIn(val, ptr); de != nil {
				return de
			}
			b, err := json.Marshal(val)
			if err != nil {
				return &DecodeError{Kind: ErrWrongType, Pointer: ptr, Message: "Valor inválido"}
			}
			if err := json.Unmarshal(b, reflect.New(t).Interface()); err != nil {
				return &DecodeError{Kind: ErrWrongType, Pointer: ptr, Got: kindOf(val), Message: "Valor inválido: " + sanitize(err.Error())}
			}
			return nil
		}
		if pt.Implements(textUnmarshalerType) || t.Implements(textUnmarshalerType) {
			if val == nil {
				return nil
			}
			str, ok := val.(string)
			if !ok {
				return wrongType(ptr, "string", val)
			}
			return controlError(ptr, str, multiline)
		}
	}
	if val == nil {
		return nil // encoding/json leaves the zero value for null
	}
	switch t.Kind() {
	case reflect.Pointer:
		return check(t.Elem(), val, ptr, multiline)
	case reflect.Interface:
		return controlIn(val, ptr)
	case reflect.String:
		if t == numberType {
			return wrongType(ptr, "number", val)
		}
		str, ok := val.(string)
		if !ok {
			return wrongType(ptr, "string", val)
		}
		return controlError(ptr, str, multiline)
	case reflect.Bool:
		if _, ok := val.(bool); !ok {
			return wrongType(ptr, "boolean", val)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := val.(json.Number)
		if !ok {
			return wrongType(ptr, "integer", val)
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			if _, ferr := strconv.ParseFloat(string(n), 64); ferr == nil && !strings.ContainsAny(string(n), ".eE") {
				return outOfRange(ptr)
			}
			return wrongType(ptr, "integer", val)
		}
		bits := t.Bits()
		if bits < 64 && (i < -(1<<(bits-1)) || i > 1<<(bits-1)-1) {
			return outOfRange(ptr)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := val.(json.Number)
		if !ok {
			return wrongType(ptr, "integer", val)
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			if strings.ContainsAny(string(n), ".eE") {
				return wrongType(ptr, "integer", val)
			}
			return outOfRange(ptr)
		}
		if bits := t.Bits(); bits < 64 && u > 1<<bits-1 {
			return outOfRange(ptr)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := val.(json.Number)
		if !ok {
			return wrongType(ptr, "number", val)
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil || math.IsInf(f, 0) || (t.Kind() == reflect.Float32 && math.Abs(f) > math.MaxFloat32) {
			return outOfRange(ptr)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := val.(string); !ok {
				return wrongType(ptr, "string", val)
			}
			return nil
		}
		arr, ok := val.([]any)
		if !ok {
			return wrongType(ptr, "array", val)
		}
		for i, e := range arr {
			if de := check(t.Elem(), e, ptr+"/"+strconv.Itoa(i), false); de != nil {
				return de
			}
		}
	case reflect.Array:
		arr, ok := val.([]any)
		if !ok {
			return wrongType(ptr, "array", val)
		}
		if len(arr) > t.Len() {
			return &DecodeError{Kind: ErrWrongType, Pointer: ptr, Expected: "array", Got: "array",
				Message: fmt.Sprintf("A lista deve ter no máximo %d itens", t.Len())}
		}
		for i, e := range arr {
			if de := check(t.Elem(), e, ptr+"/"+strconv.Itoa(i), false); de != nil {
				return de
			}
		}
	case reflect.Map:
		obj, ok := val.(map[string]any)
		if !ok {
			return wrongType(ptr, "object", val)
		}
		if t.Key().Kind() != reflect.String {
			return nil // let encoding/json judge the keys
		}
		for _, k := range sortedKeys(obj) {
			p := ptr + "/" + escapePointer(Clip(k, maxEcho))
			if de := controlError(p, k, false); de != nil {
				return de
			}
			if de := check(t.Elem(), obj[k], p, false); de != nil {
				return de
			}
		}
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			return wrongType(ptr, "object", val)
		}
		fields := fieldsOf(t)
		for _, k := range sortedKeys(obj) {
			f, ok := fields[k]
			p := ptr + "/" + escapePointer(k)
			if !ok {
				// A property name is the client's text: echo at most
				// maxEcho characters of it (a 50 KB name stays out).
				return &DecodeError{Kind: ErrUnknownProperty, Pointer: ptr + "/" + escapePointer(Clip(k, maxEcho)),
					Message: "Propriedade não permitida: " + Clip(k, maxEcho)}
			}
			if f.quoted {
				continue
			}
			if de := check(f.typ, obj[k], p, f.multiline); de != nil {
				return de
			}
		}
	default:
		return nil
	}
	return nil
}

func isNumber(v any) bool { _, ok := v.(json.Number); return ok }

func outOfRange(ptr string) *DecodeError {
	return &DecodeError{Kind: ErrWrongType, Pointer: ptr, Expected: "integer", Got: "number",
		Message: "Número fora do intervalo permitido"}
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

type fieldInfo struct {
	typ       reflect.Type
	quoted    bool // ",string" option
	multiline bool // tag text:"multiline": line breaks allowed (a slip's message)
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

// fieldsOf lists the JSON names of t's fields, following encoding/json's
// rules for tags, unexported fields and embedded structs (the shallower
// field wins; ambiguous names are dropped).
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	type cand struct {
		info  fieldInfo
		depth int
		tag   bool
		dup   bool
	}
	found := map[string]*cand{}
	var walk func(t reflect.Type, depth int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, depth int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, depth+1, seen)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			tagged := name != ""
			if name == "" {
				name = sf.Name
			}
			quoted := false
			for _, o := range strings.Split(opts, ",") {
				if o == "string" {
					quoted = true
				}
			}
			c := &cand{info: fieldInfo{typ: ft, quoted: quoted, multiline: sf.Tag.Get("text") == "multiline"}, depth: depth, tag: tagged}
			prev, ok := found[name]
			switch {
			case !ok || depth < prev.depth:
				found[name] = c
			case depth == prev.depth:
				if tagged && !prev.tag {
					found[name] = c
				} else if tagged == prev.tag {
					prev.dup = true
				}
			}
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	m := make(map[string]fieldInfo, len(found))
	for name, c := range found {
		if !c.dup {
			m[name] = c.info
		}
	}
	fieldCache.Store(t, m)
	return m
}

// V1DecodeError answers a DecodeError in the charges API dialect:
// 3500034 validation_error with {property, message} (413 for a body too
// large); a failure of the whole body has property "/".
func V1DecodeError(w http.ResponseWriter, e *DecodeError) {
	p := e.Pointer
	if p == "" {
		p = "/"
	}
	V1Error(w, e.Status(), 3500034, "validation_error", PropertyError{Property: p, Message: e.Message})
}

// ProblemDecodeError answers a DecodeError as a Pix problem of type
// typeName (e.g. "CobVOperacaoInvalida") with one violação.
func ProblemDecodeError(w http.ResponseWriter, e *DecodeError, typeName string) {
	title := "Requisição inválida"
	if e.Kind == ErrTooLarge {
		title = "Requisição muito grande"
	}
	Problem(w, e.Status(), typeName, title, "A requisição que busca alterar a cobrança não respeita o schema ou está semanticamente errada.",
		[]Violacao{{Razao: e.Message, Propriedade: pointerToPix(e.Pointer)}})
}

// pointerToPix turns "/calendario/dataDeVencimento" into
// "cobv.calendario.dataDeVencimento"-like dotted form without the root
// ("calendario.dataDeVencimento"), the way BCB violações name properties.
func pointerToPix(p string) string {
	if p == "" {
		return "body"
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return strings.Join(parts, ".")
}
