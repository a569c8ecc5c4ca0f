package main

// The workspace archive reader's checks (ADR-0068 §5 and §7, on phux's archive
// shape). Where the ADR is silent this reader makes its own choices, which differ
// from the kit's reference: a nesting cap of 512 (declared in the profile's
// archive_max_depth), any JSON number inside a member it does not know (schema 2 is
// "additive data format changes", so an unknown member is never judged beyond being
// JSON), and no rule order (the first problem found is the one reported).

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
)

const (
	// archiveMaxBytes: phux's own archives stay far below; a reader must stop somewhere.
	archiveMaxBytes = 16 << 20
	// archiveMaxDepth: our nesting cap (the profile's archive_max_depth says so).
	archiveMaxDepth = 512
	cellsMax        = 65535
	argvMax         = 256
	ratioMaxBytes   = 32
)

// refusal is the checker's verdict on a refused input: a class of its own naming
// and where in the input, never the input's content.
type refusal struct {
	class string
	at    string
	why   string
}

func (r *refusal) Error() string { return fmt.Sprintf("%s at %s: %s", r.class, r.at, r.why) }

func refuse(class, at, why string) { panic(&refusal{class, at, why}) }

// readCapped reads at most max+1 bytes: a longer file is refused by its length.
func readCapped(path string, max int64) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		return nil, true, nil
	}
	buf := make([]byte, 0, 1<<16)
	for {
		if int64(len(buf)) > max {
			return nil, true, nil
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if int64(len(buf)) > max {
				return nil, true, nil
			}
			return buf, false, nil
		}
	}
}

func checkArchive(b []byte) {
	top, err := parseJSON(b, archiveMaxDepth)
	if err != nil {
		refuse("not-strict-json", "$", err.Error())
	}
	if top.kind != 'o' {
		refuse("structure", "$", "the archive is not an object")
	}
	schema := 0
	for _, m := range top.members {
		switch m.name {
		case "schema_version":
			switch {
			case m.val.kind == 'n' && m.val.str == "1":
				schema = 1
			case m.val.kind == 'n' && m.val.str == "2":
				schema = 2
			case violated("schema-any") && m.val.kind == 'n' && isIntToken(m.val.str):
				schema = 2
			default:
				refuse("unknown-schema", "$.schema_version", "not schema 1 or 2")
			}
		case "sessions":
		default:
			// The top level is the archive's envelope, not one of the additive parts.
			refuse("structure", "$", "a member the archive's top level does not have")
		}
	}
	if schema == 0 {
		refuse("unknown-schema", "$", "no schema_version")
	}
	sessions := top.get("sessions")
	if sessions == nil || sessions.kind != 'a' {
		refuse("structure", "$.sessions", "missing or not an array")
	}
	names := map[string]bool{}
	for i, s := range sessions.items {
		at := fmt.Sprintf("$.sessions[%d]", i)
		name := checkSession(s, at, schema)
		if strings.TrimFunc(name, isBlank) == "" {
			refuse("session-name", at+".name", "blank")
		}
		if names[name] {
			refuse("session-name", at+".name", "a second session of this name")
		}
		names[name] = true
	}
}

// isBlank: a session name of only White_Space names nothing a user could pick.
func isBlank(r rune) bool { return unicode.IsSpace(r) }

func isIntToken(t string) bool {
	s := strings.TrimPrefix(t, "-")
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func want(v *value, kind byte, at, what string) {
	if v.kind != kind {
		refuse("structure", at, "not "+what)
	}
}

func checkArgv(v *value, at string) {
	want(v, 'a', at, "an array of strings")
	if len(v.items) == 0 || len(v.items) > argvMax {
		refuse("argv", at, fmt.Sprintf("not 1 to %d elements", argvMax))
	}
	for i, it := range v.items {
		want(it, 's', fmt.Sprintf("%s[%d]", at, i), "a string")
	}
}

// checkSession checks one session and returns its name.
func checkSession(s *value, at string, schema int) string {
	want(s, 'o', at, "an object")
	var name *value
	for _, m := range s.members {
		mat := at + "." + m.name
		switch m.name {
		case "name":
			want(m.val, 's', mat, "a string")
			name = m.val
		case "active":
			want(m.val, 'b', mat, "a boolean")
		case "cwd":
			want(m.val, 's', mat, "a string")
		case "command":
			checkArgv(m.val, mat)
		case "windows":
			want(m.val, 'a', mat, "an array")
			for i, w := range m.val.items {
				checkWindow(w, fmt.Sprintf("%s[%d]", mat, i), schema)
			}
		default:
			// Additive: a member a later writer added is read past.
		}
	}
	if name == nil {
		refuse("structure", at+".name", "missing")
	}
	if s.get("windows") == nil {
		refuse("structure", at+".windows", "missing")
	}
	return name.str
}

func checkWindow(w *value, at string, schema int) {
	want(w, 'o', at, "an object")
	var panes, layout *value
	for _, m := range w.members {
		mat := at + "." + m.name
		switch m.name {
		case "name":
			want(m.val, 's', mat, "a string")
		case "active":
			want(m.val, 'b', mat, "a boolean")
		case "layout":
			layout = m.val
		case "panes":
			want(m.val, 'a', mat, "an array")
			panes = m.val
			for i, p := range m.val.items {
				checkPane(p, fmt.Sprintf("%s[%d]", mat, i), schema)
			}
		}
	}
	if w.get("name") == nil {
		refuse("structure", at+".name", "missing")
	}
	if panes == nil {
		refuse("structure", at+".panes", "missing")
	}
	if layout != nil {
		seen := make([]bool, len(panes.items))
		checkLayout(layout, at+".layout", seen)
		for i, ok := range seen {
			if !ok {
				refuse("layout", at+".layout", fmt.Sprintf("pane %d is not in the layout", i))
			}
		}
	}
}

func checkLayout(n *value, at string, seen []bool) {
	want(n, 'o', at, "a layout node")
	kind := n.get("kind")
	if kind == nil || kind.kind != 's' {
		refuse("structure", at+".kind", "missing or not a string")
	}
	allowed := map[string]bool{"kind": true}
	switch kind.str {
	case "pane":
		allowed["pane"] = true
		p := n.get("pane")
		if p == nil || p.kind != 'n' || !isIntToken(p.str) {
			refuse("structure", at+".pane", "missing or not an integer")
		}
		i, err := strconv.Atoi(p.str)
		if err != nil || i < 0 || i >= len(seen) {
			refuse("layout", at+".pane", "no such pane")
		}
		if seen[i] {
			refuse("layout", at+".pane", "a pane placed twice")
		}
		seen[i] = true
	case "split":
		for _, k := range []string{"dir", "ratio", "left", "right"} {
			allowed[k] = true
			if n.get(k) == nil {
				refuse("structure", at+"."+k, "missing")
			}
		}
		if d := n.get("dir"); d.kind != 's' || (d.str != "horizontal" && d.str != "vertical") {
			refuse("structure", at+".dir", "not horizontal or vertical")
		}
		checkRatio(n.get("ratio"), at+".ratio")
		checkLayout(n.get("left"), at+".left", seen)
		checkLayout(n.get("right"), at+".right", seen)
	default:
		refuse("structure", at+".kind", "not pane or split")
	}
	// A layout node is a closed tree: its meaning is the whole of it.
	for _, m := range n.members {
		if !allowed[m.name] {
			refuse("structure", at, "a member a layout node does not have")
		}
	}
}

// checkRatio: a decimal written 0.DIGITS, at most 32 bytes, strictly inside (0, 1)
// once read as a double (the split a restore rebuilds from it).
func checkRatio(v *value, at string) {
	if v.kind != 'n' {
		refuse("structure", at, "not a number")
	}
	t := v.str
	ok := len(t) > 2 && len(t) <= ratioMaxBytes && strings.HasPrefix(t, "0.")
	for i := 2; ok && i < len(t); i++ {
		ok = isDigit(t[i])
	}
	if !ok {
		refuse("ratio", at, "not a decimal 0.DIGITS of at most 32 bytes")
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 || f >= 1 {
		refuse("ratio", at, "not strictly between 0 and 1")
	}
}

func checkCells(v *value, at string) {
	if v.kind != 'n' || !isIntToken(v.str) {
		refuse("structure", at, "not an integer")
	}
	n, err := strconv.Atoi(v.str)
	if err != nil || n < 0 || n > cellsMax {
		refuse("cells", at, "outside 0 to 65535")
	}
}

func checkPane(p *value, at string, schema int) {
	want(p, 'o', at, "an object")
	for _, m := range p.members {
		mat := at + "." + m.name
		switch m.name {
		case "active":
			want(m.val, 'b', mat, "a boolean")
		case "title", "cwd":
			want(m.val, 's', mat, "a string")
		case "command":
			checkArgv(m.val, mat)
		case "cols", "rows":
			checkCells(m.val, mat)
		case "agent_session":
			checkRecord(m.val, mat, schema)
		}
	}
}

// checkRecord: "phux.agent-session/v1 is an opaque, Terminal-scoped L3 record
// containing only plugin_id, integration_id, and native_id" (§1); schema 1 "has no
// native restore semantics" (§5), so a schema-1 archive carrying one is refused
// rather than half-read.
func checkRecord(v *value, at string, schema int) {
	if schema == 1 {
		refuse("schema1-record", at, "a schema-1 archive carries an agent_session")
	}
	want(v, 'o', at, "a record object")
	fields := map[string]int{"plugin_id": ownerMaxBytes, "integration_id": ownerMaxBytes, "native_id": nativeMaxBytes}
	for _, m := range v.members {
		max, known := fields[m.name]
		if !known {
			if violated("record-open") {
				continue
			}
			refuse("record", at, "a member the record does not have")
		}
		want(m.val, 's', at+"."+m.name, "a string")
		if why := idProblem(m.val.str, max, m.name == "native_id"); why != "" {
			refuse("identity", at+"."+m.name, why)
		}
	}
	for name := range fields {
		if v.get(name) == nil {
			refuse("record", at+"."+name, "missing")
		}
	}
}
