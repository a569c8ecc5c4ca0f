package main

// The integration template checker (ADR-0068 §2 and §7): "An integration's
// [session_identity] may declare a dedicated PHUX_*_SESSION_ID native_env,
// structured resume_args, and structured fresh_args. Each argument vector contains
// exactly one standalone ${PHUX_AGENT_SESSION_ID} argument. … templates that position
// identity as executable or evaluator source are rejected. A fixed plugin-owned
// interpreter script remains valid." Keys outside [session_identity] and the fields
// read below are ignored, so the package format can grow; [session_identity] itself
// is closed, since a key it does not know may carry authority.

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

const (
	templateMaxBytes = 64 << 10
	placeholder      = "${PHUX_AGENT_SESSION_ID}"
	pluginRoot       = "${PHUX_PLUGIN_ROOT}/"
	envMaxBytes      = 128
	vectorMax        = 16
	argMaxBytes      = 4096
	commandMax       = 256
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// shells read their program from their arguments or stdin: only a fixed script of
// the plugin may follow them.
var shells = set("sh bash dash zsh ksh mksh ash hush yash fish csh tcsh rc es nu elvish xonsh pwsh powershell cmd")

// runners evaluate code or run another program from their arguments.
var runners = set("python python2 python3 pypy pypy3 node nodejs deno bun ruby perl lua luajit php tclsh wish expect " +
	"awk gawk mawk nawk busybox toybox env exec command nice nohup timeout stdbuf setsid sudo doas su runuser chroot " +
	"time xargs strace gdb watch flock ionice taskset chrt unshare nsenter script npx bunx pnpx uvx pipx systemd-run " +
	"firejail bwrap java julia rscript osascript jq sed make emacs vim nvim")

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

// program normalises a program name: its basename, lower case, without ".exe" and
// without a version tail ("python3.12" is python3, "python3" is python).
func program(p string) (base, unversioned string) {
	b := strings.TrimSuffix(strings.ToLower(path.Base(p)), ".exe")
	return b, strings.TrimRight(b, "0123456789.")
}

func checkTemplate(b []byte) {
	root, err := parseTOML(b)
	if err != nil {
		refuse("toml", "file", err.Error())
	}
	id := root.get("id")
	if id == nil {
		refuse("id", "id", "missing")
	}
	if id.kind != 's' {
		refuse("type", "id", "not a string")
	}
	if why := idProblem(id.str, ownerMaxBytes, false); why != "" {
		refuse("id", "id", why)
	}
	var command []string
	if l := root.get("launch"); l != nil {
		if l.kind != 't' {
			refuse("type", "launch", "not a table")
		}
		command = checkLaunch(l.table)
	}
	si := root.get("session_identity")
	if si == nil {
		return
	}
	if si.kind != 't' {
		refuse("type", "session_identity", "not a table")
	}
	if checkSessionIdentity(si.table) && command != nil {
		checkEvaluator(command)
	}
}

func stringsOf(v *tval, at string) []string {
	if v.kind != 'a' {
		refuse("type", at, "not an array of strings")
	}
	out := make([]string, 0, len(v.items))
	for _, it := range v.items {
		if it.kind != 's' {
			refuse("type", at, "not an array of strings")
		}
		out = append(out, it.str)
	}
	return out
}

func str(t *ttable, k, at string) (string, bool) {
	v := t.get(k)
	if v == nil {
		return "", false
	}
	if v.kind != 's' {
		refuse("type", at, "not a string")
	}
	return v.str, true
}

func checkLaunch(t *ttable) []string {
	v := t.get("command")
	if v == nil {
		refuse("command", "launch.command", "missing")
	}
	command := stringsOf(v, "launch.command")
	if len(command) == 0 || len(command) > commandMax || strings.TrimSpace(command[0]) == "" {
		refuse("command", "launch.command", "no program, or too many elements")
	}
	for _, w := range command {
		// The identity enters argv only through resume_args and fresh_args.
		if strings.Contains(w, placeholder) && !violated("placeholder-in-command") {
			refuse("command", "launch.command", "holds the session placeholder")
		}
	}
	if v := t.get("required_executables"); v != nil {
		for _, e := range stringsOf(v, "launch.required_executables") {
			if e == "" || strings.TrimSpace(e) != e || strings.ContainsAny(e, `/\`) {
				refuse("required-executables", "launch.required_executables", "not a bare program name")
			}
		}
	}
	if wd, ok := str(t, "working_directory", "launch.working_directory"); ok && wd != "workspace" && wd != "plugin-root" {
		refuse("working-directory", "launch.working_directory", "not workspace or plugin-root")
	}
	return command
}

// checkSessionIdentity checks the table and says whether the template resumes a
// native identity (the evaluator rules then apply to its program).
func checkSessionIdentity(t *ttable) bool {
	known := set("mode native_env restore resume_args fresh_args")
	for _, k := range t.keys {
		if !known[k] {
			refuse("session-key", "session_identity", "a key the policy does not have")
		}
	}
	mode, okM := str(t, "mode", "session_identity.mode")
	env, okE := str(t, "native_env", "session_identity.native_env")
	restore, okR := str(t, "restore", "session_identity.restore")
	if !okM || !okE || !okR {
		refuse("session-incomplete", "session_identity", "mode, native_env and restore are all needed")
	}
	if mode != "native-or-phux" && mode != "phux" {
		refuse("mode", "session_identity.mode", "not native-or-phux or phux")
	}
	if restore != "external-cli" && restore != "phux-session" {
		refuse("restore", "session_identity.restore", "not external-cli or phux-session")
	}
	checkEnv(env)
	resume, fresh := t.get("resume_args"), t.get("fresh_args")
	if resume != nil && (mode != "native-or-phux" || restore != "external-cli") {
		refuse("policy", "session_identity.resume_args", "only a native-or-phux, external-cli policy resumes")
	}
	if fresh != nil && resume == nil {
		refuse("policy", "session_identity.fresh_args", "a fresh identity that could never be resumed")
	}
	for _, k := range []string{"resume_args", "fresh_args"} {
		if v := t.get(k); v != nil {
			checkVector(stringsOf(v, "session_identity."+k), "session_identity."+k)
		}
	}
	return resume != nil
}

func checkEnv(env string) {
	at := "session_identity.native_env"
	if !envName.MatchString(env) || len(env) > envMaxBytes {
		refuse("native-env", at, "not an environment variable name")
	}
	if violated("env-any") {
		return
	}
	if !strings.HasPrefix(env, "PHUX_") || !strings.HasSuffix(env, "_SESSION_ID") ||
		len(env) <= len("PHUX_")+len("_SESSION_ID") {
		refuse("native-env", at, "outside the PHUX_*_SESSION_ID namespace")
	}
}

func checkVector(args []string, at string) {
	if len(args) == 0 || len(args) > vectorMax {
		refuse("vector", at, fmt.Sprintf("not 1 to %d elements", vectorMax))
	}
	whole, inside := 0, 0
	for _, a := range args {
		if a == "" || len(a) > argMaxBytes {
			refuse("vector", at, "an empty or oversized element")
		}
		switch {
		case a == placeholder:
			whole++
		case strings.Contains(a, placeholder):
			inside++
		}
	}
	if violated("placeholder-substring") {
		whole, inside = whole+inside, 0
	}
	if whole != 1 || inside != 0 {
		refuse("placeholder", at, "not exactly one standalone placeholder element")
	}
}

// checkEvaluator: the identity, appended after the program, must never become the
// program or source a shell or runner evaluates. A shell is allowed with a fixed
// script under the plugin's own root, the one "plugin-owned interpreter script".
func checkEvaluator(command []string) {
	base, unversioned := program(command[0])
	if runners[base] || runners[unversioned] {
		refuse("evaluator", "launch.command", "a program that runs its arguments")
	}
	if !shells[base] && !shells[unversioned] {
		return
	}
	if violated("shell-any-arg") && len(command) > 1 {
		return
	}
	if len(command) < 2 || !plainScript(command[1]) {
		refuse("evaluator", "launch.command", "a shell without a fixed plugin script")
	}
}

func plainScript(arg string) bool {
	if !strings.HasPrefix(arg, pluginRoot) {
		return false
	}
	for _, seg := range strings.Split(strings.TrimPrefix(arg, pluginRoot), "/") {
		if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, "-") || strings.ContainsAny(seg, `\$`) {
			return false
		}
	}
	return true
}
