package main

// The identity bounds of ADR-0068 §7, shared by archive records and templates:
// "Plugin and integration ids are trimmed, control-free UTF-8 of at most 120 bytes.
// Native ids are trimmed, non-option-shaped, control-free UTF-8 of at most 1024
// bytes." Trimmed is read as Unicode White_Space at either end (Go's unicode.IsSpace
// is that property), control-free as no Cc character (C0, DEL, C1), and an empty id
// is refused: it names nothing, and trimming any padding would leave it empty.

import (
	"unicode"
	"unicode/utf8"
)

const (
	ownerMaxBytes  = 120
	nativeMaxBytes = 1024
)

// idProblem says what is wrong with one identity, or "" when it is good.
func idProblem(s string, maxBytes int, native bool) string {
	if s == "" {
		return "empty"
	}
	if violated("owner-unbounded") && !native {
		maxBytes = 1 << 30
	}
	n := len(s)
	if violated("rune-count") {
		n = utf8.RuneCountInString(s)
	}
	if n > maxBytes {
		return "too long"
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if isPad(first) || isPad(last) {
		return "padded"
	}
	for _, r := range s {
		if isControl(r) {
			return "holds a control character"
		}
	}
	if native && s[0] == '-' && !violated("option-shaped-ok") {
		return "option-shaped"
	}
	return ""
}

func isPad(r rune) bool {
	if violated("ascii-trim") {
		return r == ' ' || (r >= '\t' && r <= '\r')
	}
	return unicode.IsSpace(r)
}

func isControl(r rune) bool {
	if violated("c1-allowed") {
		return r < 0x20 || r == 0x7f
	}
	return unicode.Is(unicode.Cc, r)
}
