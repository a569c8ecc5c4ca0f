package main

// A reader for the part of TOML 1.0 integration templates use, written here
// because the peer takes nothing but Go's standard library: tables and arrays of
// tables, dotted and quoted keys, basic, literal and multi-line strings, integers,
// floats, booleans, arrays and inline tables. A key or table defined twice is an
// error, as TOML says; an offset-date-time is not read (no template field is one),
// which refuses the file rather than guessing.

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// tval is one TOML value; kind is one of 's' 'i' 'f' 'b' 'a' 't'.
type tval struct {
	kind  byte
	str   string
	items []*tval
	table *ttable
}

type ttable struct {
	keys     []string
	vals     map[string]*tval
	explicit bool // defined by a [header]
	closed   bool // an inline table, complete when written
	aot      bool // an element of an array of tables
}

func newTable() *ttable { return &ttable{vals: map[string]*tval{}} }

func (t *ttable) get(k string) *tval { return t.vals[k] }

func (t *ttable) set(k string, v *tval) bool {
	if _, dup := t.vals[k]; dup {
		return false
	}
	t.keys = append(t.keys, k)
	t.vals[k] = v
	return true
}

type tomlError struct {
	line int
	what string
}

func (e *tomlError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.what) }

type tparser struct {
	s    string
	i    int
	line int
}

func parseTOML(b []byte) (root *ttable, err error) {
	if !utf8.Valid(b) {
		return nil, &tomlError{1, "not UTF-8"}
	}
	p := &tparser{s: string(b), line: 1}
	defer func() {
		if r := recover(); r != nil {
			te, ok := r.(*tomlError)
			if !ok {
				panic(r)
			}
			root, err = nil, te
		}
	}()
	root = newTable()
	cur := root
	for {
		p.blank()
		if p.i >= len(p.s) {
			return root, nil
		}
		switch {
		case strings.HasPrefix(p.s[p.i:], "[["):
			p.i += 2
			cur = p.arrayTable(root, p.key())
			p.expect("]]")
		case p.s[p.i] == '[':
			p.i++
			cur = p.header(root, p.key())
			p.expect("]")
		default:
			p.keyval(cur)
		}
		p.endLine()
	}
}

func (p *tparser) fail(what string) { panic(&tomlError{p.line, what}) }

// blank skips whitespace, comments and newlines between statements.
func (p *tparser) blank() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; {
		case c == ' ' || c == '\t':
			p.i++
		case c == '\n':
			p.i++
			p.line++
		case c == '\r' && strings.HasPrefix(p.s[p.i:], "\r\n"):
			p.i += 2
			p.line++
		case c == '#':
			p.comment()
		default:
			return
		}
	}
}

func (p *tparser) comment() {
	for p.i < len(p.s) && p.s[p.i] != '\n' {
		if c := p.s[p.i]; (c < 0x20 && c != '\t' && c != '\r') || c == 0x7f {
			p.fail("a control character in a comment")
		}
		p.i++
	}
}

func (p *tparser) ws() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// endLine: after a statement only whitespace and a comment may follow on its line.
func (p *tparser) endLine() {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '#' {
		p.comment()
	}
	switch {
	case p.i >= len(p.s):
	case p.s[p.i] == '\n':
		p.i++
		p.line++
	case strings.HasPrefix(p.s[p.i:], "\r\n"):
		p.i += 2
		p.line++
	default:
		p.fail("more after a statement on its line")
	}
}

func (p *tparser) expect(tok string) {
	p.ws()
	if !strings.HasPrefix(p.s[p.i:], tok) {
		p.fail(fmt.Sprintf("%q expected", tok))
	}
	p.i += len(tok)
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// key reads a dotted key: its parts, unquoted.
func (p *tparser) key() []string {
	var parts []string
	for {
		p.ws()
		if p.i >= len(p.s) {
			p.fail("a key expected")
		}
		switch c := p.s[p.i]; {
		case c == '"':
			parts = append(parts, p.basic())
		case c == '\'':
			parts = append(parts, p.literal())
		case isBare(c):
			start := p.i
			for p.i < len(p.s) && isBare(p.s[p.i]) {
				p.i++
			}
			parts = append(parts, p.s[start:p.i])
		default:
			p.fail("a key expected")
		}
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == '.' {
			p.i++
			continue
		}
		return parts
	}
}

// descend walks to the table at path, creating implicit tables on the way.
func (p *tparser) descend(t *ttable, path []string) *ttable {
	for _, k := range path {
		v := t.get(k)
		switch {
		case v == nil:
			nt := newTable()
			t.set(k, &tval{kind: 't', table: nt})
			t = nt
		case v.kind == 't' && !v.table.closed:
			t = v.table
		case v.kind == 'a' && len(v.items) > 0 && v.items[len(v.items)-1].kind == 't' &&
			v.items[len(v.items)-1].table.aot:
			t = v.items[len(v.items)-1].table
		default:
			p.fail("a key used as a table and as a value")
		}
	}
	return t
}

func (p *tparser) header(root *ttable, path []string) *ttable {
	parent := p.descend(root, path[:len(path)-1])
	last := path[len(path)-1]
	v := parent.get(last)
	if v == nil {
		t := newTable()
		t.explicit = true
		parent.set(last, &tval{kind: 't', table: t})
		return t
	}
	if v.kind != 't' || v.table.explicit || v.table.closed {
		p.fail("a table defined twice")
	}
	v.table.explicit = true
	return v.table
}

func (p *tparser) arrayTable(root *ttable, path []string) *ttable {
	parent := p.descend(root, path[:len(path)-1])
	last := path[len(path)-1]
	t := newTable()
	t.aot = true
	v := parent.get(last)
	if v == nil {
		parent.set(last, &tval{kind: 'a', items: []*tval{{kind: 't', table: t}}})
		return t
	}
	if v.kind != 'a' || len(v.items) == 0 || v.items[0].kind != 't' || !v.items[0].table.aot {
		p.fail("an array of tables over another value")
	}
	v.items = append(v.items, &tval{kind: 't', table: t})
	return t
}

func (p *tparser) keyval(t *ttable) {
	path := p.key()
	p.expect("=")
	p.ws()
	v := p.value()
	dst := p.descend(t, path[:len(path)-1])
	if !dst.set(path[len(path)-1], v) {
		p.fail("a key defined twice")
	}
}

func (p *tparser) value() *tval {
	if p.i >= len(p.s) {
		p.fail("a value expected")
	}
	rest := p.s[p.i:]
	switch c := p.s[p.i]; {
	case strings.HasPrefix(rest, `"""`):
		return &tval{kind: 's', str: p.multiBasic()}
	case strings.HasPrefix(rest, "'''"):
		return &tval{kind: 's', str: p.multiLiteral()}
	case c == '"':
		return &tval{kind: 's', str: p.basic()}
	case c == '\'':
		return &tval{kind: 's', str: p.literal()}
	case strings.HasPrefix(rest, "true") && !p.bareAt(4):
		p.i += 4
		return &tval{kind: 'b', str: "true"}
	case strings.HasPrefix(rest, "false") && !p.bareAt(5):
		p.i += 5
		return &tval{kind: 'b', str: "false"}
	case c == '[':
		return p.array()
	case c == '{':
		return p.inline()
	default:
		return p.number()
	}
}

func (p *tparser) bareAt(n int) bool { return p.i+n < len(p.s) && isBare(p.s[p.i+n]) }

// number reads an integer or a float in TOML's forms (underscores between digits,
// 0x/0o/0b integers, inf and nan); anything else, a date included, is refused.
func (p *tparser) number() *tval {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-_.0123456789abcdefABCDEFxoinEe", p.s[p.i]) >= 0 {
		p.i++
	}
	tok := p.s[start:p.i]
	plain := strings.TrimLeft(tok, "+-")
	switch {
	case plain == "inf" || plain == "nan":
		return &tval{kind: 'f', str: tok}
	case strings.HasPrefix(plain, "0x") || strings.HasPrefix(plain, "0o") || strings.HasPrefix(plain, "0b"):
		if plain != tok || !digitsOK(plain[2:], map[byte]string{'x': "0123456789abcdefABCDEF", 'o': "01234567", 'b': "01"}[plain[1]]) {
			p.fail("a bad number")
		}
		return &tval{kind: 'i', str: tok}
	}
	intPart, frac, exp := plain, "", ""
	if k := strings.IndexAny(intPart, "eE"); k >= 0 {
		intPart, exp = intPart[:k], intPart[k+1:]
		exp = strings.TrimLeft(exp, "+-")
		if !digitsOK(exp, "0123456789") {
			p.fail("a bad number")
		}
	}
	if k := strings.IndexByte(intPart, '.'); k >= 0 {
		intPart, frac = intPart[:k], intPart[k+1:]
		if !digitsOK(frac, "0123456789") {
			p.fail("a bad number")
		}
	}
	if !digitsOK(intPart, "0123456789") || (len(intPart) > 1 && intPart[0] == '0') {
		p.fail("a bad number")
	}
	if frac == "" && exp == "" && !strings.ContainsAny(plain, ".eE") {
		return &tval{kind: 'i', str: tok}
	}
	return &tval{kind: 'f', str: tok}
}

// digitsOK: non-empty digits of set, underscores only between two of them.
func digitsOK(s, set string) bool {
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '_' && strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// array reads [v, …]: newlines and comments may stand between elements.
func (p *tparser) array() *tval {
	p.i++
	v := &tval{kind: 'a'}
	for {
		p.blank()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return v
		}
		v.items = append(v.items, p.value())
		p.blank()
		if p.i >= len(p.s) {
			p.fail("an unterminated array")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return v
		default:
			p.fail("',' or ']' expected in an array")
		}
	}
}

func (p *tparser) inline() *tval {
	p.i++
	t := newTable()
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		t.closed = true
		return &tval{kind: 't', table: t}
	}
	for {
		p.keyval(t)
		p.ws()
		if p.i >= len(p.s) {
			p.fail("an unterminated inline table")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			t.closed = true
			return &tval{kind: 't', table: t}
		default:
			p.fail("',' or '}' expected in an inline table")
		}
	}
}

func (p *tparser) ctl(c byte, multi bool) {
	if (c < 0x20 && c != '\t' && !(multi && (c == '\n' || c == '\r'))) || c == 0x7f {
		p.fail("a control character in a string")
	}
}

func (p *tparser) literal() string {
	p.i++
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '\'' {
		p.ctl(p.s[p.i], false)
		p.i++
	}
	if p.i >= len(p.s) {
		p.fail("an unterminated string")
	}
	p.i++
	return p.s[start : p.i-1]
}

func (p *tparser) multiLiteral() string {
	p.i += 3
	p.skipFirstNewline()
	end := strings.Index(p.s[p.i:], "'''")
	if end < 0 {
		p.fail("an unterminated string")
	}
	// Up to two quotes may end the content right before the closing three.
	for k := 0; k < 2 && p.i+end+3 < len(p.s) && p.s[p.i+end+3] == '\''; k++ {
		end++
	}
	body := p.s[p.i : p.i+end]
	for j := 0; j < len(body); j++ {
		p.ctl(body[j], true)
	}
	p.line += strings.Count(body, "\n")
	p.i += end + 3
	return body
}

func (p *tparser) skipFirstNewline() {
	if strings.HasPrefix(p.s[p.i:], "\n") {
		p.i++
		p.line++
	} else if strings.HasPrefix(p.s[p.i:], "\r\n") {
		p.i += 2
		p.line++
	}
}

func (p *tparser) basic() string {
	p.i++
	var out strings.Builder
	for {
		if p.i >= len(p.s) {
			p.fail("an unterminated string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return out.String()
		case c == '\\':
			p.escape(&out)
		default:
			p.ctl(c, false)
			out.WriteByte(c)
			p.i++
		}
	}
}

func (p *tparser) multiBasic() string {
	p.i += 3
	p.skipFirstNewline()
	var out strings.Builder
	for {
		if p.i >= len(p.s) {
			p.fail("an unterminated string")
		}
		if strings.HasPrefix(p.s[p.i:], `"""`) {
			p.i += 3
			// Up to two quotes of the content may stand right before the closing three.
			for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] == '"'; k++ {
				out.WriteByte('"')
				p.i++
			}
			return out.String()
		}
		c := p.s[p.i]
		switch {
		case c == '\\' && p.lineEndingBackslash():
		case c == '\\':
			p.escape(&out)
		default:
			p.ctl(c, true)
			if c == '\n' {
				p.line++
			}
			out.WriteByte(c)
			p.i++
		}
	}
}

// lineEndingBackslash: a backslash ending a line trims the newline and the
// whitespace that follows it.
func (p *tparser) lineEndingBackslash() bool {
	j := p.i + 1
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	if j < len(p.s) && (p.s[j] == '\n' || strings.HasPrefix(p.s[j:], "\r\n")) {
		p.i = j
		for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
			if p.s[p.i] == '\n' {
				p.line++
			}
			p.i++
		}
		return true
	}
	return false
}

func (p *tparser) escape(out *strings.Builder) {
	if p.i+1 >= len(p.s) {
		p.fail("an unterminated string")
	}
	e := p.s[p.i+1]
	p.i += 2
	simple := map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', '"': '"', '\\': '\\'}
	if c, ok := simple[e]; ok {
		out.WriteByte(c)
		return
	}
	n := map[byte]int{'u': 4, 'U': 8}[e]
	if n == 0 || p.i+n > len(p.s) {
		p.fail("a bad escape")
	}
	var r rune
	for _, h := range []byte(p.s[p.i : p.i+n]) {
		d := strings.IndexByte("0123456789abcdef", lower(h))
		if d < 0 {
			p.fail("a bad escape")
		}
		r = r<<4 | rune(d)
	}
	if !utf8.ValidRune(r) {
		p.fail("an escape that is not a Unicode scalar value")
	}
	p.i += n
	out.WriteRune(r)
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 32
	}
	return c
}
