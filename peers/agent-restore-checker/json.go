package main

// A strict JSON reader of our own (RFC 8259 plus the fail-closed readings a trust
// boundary wants): UTF-8 without a byte-order mark, no raw control characters in
// strings, no escaped lone surrogates, no duplicate member names (compared after
// unescaping, so "na\u006de" duplicates "name"), nothing but whitespace after the
// value, and a nesting cap. Numbers stay as their source token: the archive rules
// decide which tokens each member may hold, and unknown members may hold any.

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// value is one parsed JSON value; kind is one of 'o' 'a' 's' 'n' 'b' 'z'.
type value struct {
	kind    byte
	members []member // objects, in source order
	items   []*value // arrays
	str     string   // strings; numbers keep their token here
	boolean bool
}

type member struct {
	name string
	val  *value
}

func (v *value) get(name string) *value {
	for _, m := range v.members {
		if m.name == name {
			return m.val
		}
	}
	return nil
}

// jsonError says what was wrong and at which byte, never the text around it.
type jsonError struct {
	at   int
	what string
}

func (e *jsonError) Error() string { return fmt.Sprintf("%s at byte %d", e.what, e.at) }

type reader struct {
	b        []byte
	i        int
	depth    int
	maxDepth int // 0: no cap
}

func parseJSON(b []byte, maxDepth int) (v *value, err error) {
	if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
		return nil, &jsonError{0, "a byte-order mark"}
	}
	if !utf8.Valid(b) {
		return nil, &jsonError{0, "invalid UTF-8"}
	}
	r := &reader{b: b, maxDepth: maxDepth}
	defer func() {
		if p := recover(); p != nil {
			je, ok := p.(*jsonError)
			if !ok {
				panic(p)
			}
			v, err = nil, je
		}
	}()
	r.space()
	v = r.value()
	r.space()
	if r.i != len(r.b) {
		r.fail("data after the value")
	}
	return v, nil
}

func (r *reader) fail(what string) { panic(&jsonError{r.i, what}) }

func (r *reader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *reader) peek() byte {
	if r.i >= len(r.b) {
		r.fail("unexpected end")
	}
	return r.b[r.i]
}

func (r *reader) literal(word string) {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		r.fail("not a JSON value")
	}
	r.i += len(word)
}

func (r *reader) enter() {
	r.depth++
	if r.maxDepth > 0 && r.depth > r.maxDepth {
		r.fail(fmt.Sprintf("nesting deeper than %d", r.maxDepth))
	}
}

func (r *reader) value() *value {
	switch c := r.peek(); {
	case c == '{':
		return r.object()
	case c == '[':
		return r.array()
	case c == '"':
		return &value{kind: 's', str: r.str()}
	case c == 't':
		r.literal("true")
		return &value{kind: 'b', boolean: true}
	case c == 'f':
		r.literal("false")
		return &value{kind: 'b'}
	case c == 'n':
		r.literal("null")
		return &value{kind: 'z'}
	case c == '-' || (c >= '0' && c <= '9'):
		return &value{kind: 'n', str: r.number()}
	default:
		r.fail("not a JSON value")
		return nil
	}
}

func (r *reader) object() *value {
	r.enter()
	r.i++
	v := &value{kind: 'o'}
	seen := map[string]bool{}
	r.space()
	if r.peek() == '}' {
		r.i++
		r.depth--
		return v
	}
	for {
		r.space()
		if r.peek() != '"' {
			r.fail("a member name expected")
		}
		at := r.i
		name := r.str()
		if seen[name] {
			r.i = at
			r.fail("a duplicate member name")
		}
		seen[name] = true
		r.space()
		if r.peek() != ':' {
			r.fail("':' expected")
		}
		r.i++
		r.space()
		v.members = append(v.members, member{name, r.value()})
		r.space()
		switch r.peek() {
		case ',':
			r.i++
		case '}':
			r.i++
			r.depth--
			return v
		default:
			r.fail("',' or '}' expected")
		}
	}
}

func (r *reader) array() *value {
	r.enter()
	r.i++
	v := &value{kind: 'a'}
	r.space()
	if r.peek() == ']' {
		r.i++
		r.depth--
		return v
	}
	for {
		r.space()
		v.items = append(v.items, r.value())
		r.space()
		switch r.peek() {
		case ',':
			r.i++
		case ']':
			r.i++
			r.depth--
			return v
		default:
			r.fail("',' or ']' expected")
		}
	}
}

func (r *reader) hex4() rune {
	if len(r.b)-r.i < 4 {
		r.fail("a short \\u escape")
	}
	var n rune
	for _, c := range r.b[r.i : r.i+4] {
		n <<= 4
		switch {
		case c >= '0' && c <= '9':
			n |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			n |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			n |= rune(c-'A') + 10
		default:
			r.fail("a bad \\u escape")
		}
	}
	r.i += 4
	return n
}

func (r *reader) str() string {
	r.i++ // the opening quote
	out := make([]byte, 0, 16)
	for {
		c := r.peek()
		switch {
		case c == '"':
			r.i++
			return string(out)
		case c < 0x20:
			r.fail("a raw control character in a string")
		case c != '\\':
			out = append(out, c)
			r.i++
			continue
		}
		r.i++
		e := r.peek()
		r.i++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			u := r.hex4()
			if utf16.IsSurrogate(u) {
				// Only a high surrogate followed by an escaped low one is a character.
				if u >= 0xDC00 || len(r.b)-r.i < 6 || r.b[r.i] != '\\' || r.b[r.i+1] != 'u' {
					r.fail("a lone surrogate escape")
				}
				r.i += 2
				lo := r.hex4()
				if lo < 0xDC00 || lo > 0xDFFF {
					r.fail("a lone surrogate escape")
				}
				u = utf16.DecodeRune(u, lo)
			}
			out = utf8.AppendRune(out, u)
		default:
			r.fail("a bad escape")
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number returns the token of one JSON number, checked against RFC 8259's grammar.
func (r *reader) number() string {
	start := r.i
	if r.b[r.i] == '-' {
		r.i++
	}
	switch {
	case r.i < len(r.b) && r.b[r.i] == '0':
		r.i++
	case r.i < len(r.b) && isDigit(r.b[r.i]):
		for r.i < len(r.b) && isDigit(r.b[r.i]) {
			r.i++
		}
	default:
		r.fail("a bad number")
	}
	if r.i < len(r.b) && r.b[r.i] == '.' {
		r.i++
		if r.i >= len(r.b) || !isDigit(r.b[r.i]) {
			r.fail("a bad number")
		}
		for r.i < len(r.b) && isDigit(r.b[r.i]) {
			r.i++
		}
	}
	if r.i < len(r.b) && (r.b[r.i] == 'e' || r.b[r.i] == 'E') {
		r.i++
		if r.i < len(r.b) && (r.b[r.i] == '+' || r.b[r.i] == '-') {
			r.i++
		}
		if r.i >= len(r.b) || !isDigit(r.b[r.i]) {
			r.fail("a bad number")
		}
		for r.i < len(r.b) && isDigit(r.b[r.i]) {
			r.i++
		}
	}
	return string(r.b[start:r.i])
}
