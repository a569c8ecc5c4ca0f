//! The plan language of `VXFAULT_PLAN` (surface.md's grammar plus the `##N`, `after:`
//! and new-family extensions) and the pure machinery `libvxfault.so` runs it with:
//! glob matching ([`glob`]), the `%P` draws ([`draw`]), the per-call decision
//! ([`decide`]), errno names ([`errno`]), the shared counter file's layout ([`shm`]),
//! trace names of open flags and lock operations ([`names`]), lexical path
//! normalisation ([`path`]), the fd → path table ([`fdtable`]) and the trace line
//! builder ([`line`]).
//!
//! One crate, used by the preload library (where nothing may allocate, lock or panic)
//! and by the `vxfault` runner (which checks plans before running anything). No
//! dependencies, `no_std`, no allocation; everything here is safe code except the
//! fd table's documented atomics, and runs under Miri (`cargo +nightly miri test -p
//! vxfault-plan`).
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(test)]
extern crate std;

pub mod attrs;
pub mod decide;
pub mod draw;
pub mod errno;
pub mod fdtable;
pub mod glob;
pub mod line;
pub mod names;
pub mod path;
pub mod shm;
pub mod syscalls;

pub use draw::{draw, fires, fnv1a, splitmix64};
pub use errno::{errno_from_name, errno_name, ERRNOS};
pub use glob::{escape_glob, glob_match, validate_glob};
pub use shm::*;

/// Most rules a plan may hold.
pub const MAX_RULES: usize = 32;
/// Longest glob (after unescaping) a rule may carry, in bytes.
pub const MAX_GLOB: usize = 512;

/// A call family, as named in the plan.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Op {
    Open = 0,
    Write = 1,
    Fsync = 2,
    Rename = 3,
    Unlink = 4,
    Mkdir = 5,
    Close = 6,
    Flock = 7,
    Ftruncate = 8,
    Rmdir = 9,
    Fallocate = 10,
    Link = 11,
    /// chmod, fchmod, fchmodat: a file's or directory's permission bits.
    Chmod = 12,
    /// utimensat, futimens, utimes, …: a file's timestamps.
    Utimens = 13,
}

/// Number of call families.
pub const NUM_OPS: usize = 14;

/// Every family, in index order.
pub const ALL_OPS: [Op; NUM_OPS] = [
    Op::Open,
    Op::Write,
    Op::Fsync,
    Op::Rename,
    Op::Unlink,
    Op::Mkdir,
    Op::Close,
    Op::Flock,
    Op::Ftruncate,
    Op::Rmdir,
    Op::Fallocate,
    Op::Link,
    Op::Chmod,
    Op::Utimens,
];

impl Op {
    /// The family's name in plans and traces.
    pub const fn name(self) -> &'static str {
        match self {
            Op::Open => "open",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Rename => "rename",
            Op::Unlink => "unlink",
            Op::Mkdir => "mkdir",
            Op::Close => "close",
            Op::Flock => "flock",
            Op::Ftruncate => "ftruncate",
            Op::Rmdir => "rmdir",
            Op::Fallocate => "fallocate",
            Op::Link => "link",
            Op::Chmod => "chmod",
            Op::Utimens => "utimens",
        }
    }

    /// The family named `s`, if any.
    pub fn from_name(s: &[u8]) -> Option<Op> {
        ALL_OPS.iter().copied().find(|op| op.name().as_bytes() == s)
    }
}

/// When a matching call fires its rule.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Trigger {
    /// Every matching call.
    Always,
    /// Only the Nth matching call (1-based).
    Nth(u64),
    /// The Nth and every later matching call.
    From(u64),
    /// Each matching call with this probability, in parts per million.
    Ppm(u32),
}

/// What a fired rule does.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Action {
    /// Fail with this errno without doing anything.
    Errno(i32),
    /// Do at most N bytes for real and return that count.
    Short(u64),
    /// Write N bytes for real, then SIGKILL the process.
    Torn(u64),
    /// SIGKILL before the call.
    Crash,
    /// Do the call, then SIGKILL.
    CrashAfter,
    /// Sleep this many milliseconds, then do the call.
    Delay(u64),
    /// Return success without doing the call.
    Lie,
    /// Do the call for real, then fail with this errno (the effect happened, the
    /// caller sees an error).
    After(i32),
}

impl Action {
    /// Whether this action ends the process.
    pub const fn kills(self) -> bool {
        matches!(self, Action::Torn(_) | Action::Crash | Action::CrashAfter)
    }
}

/// One parsed rule.
#[derive(Clone, Copy)]
pub struct Rule {
    pub op: Op,
    glob: [u8; MAX_GLOB],
    glob_len: u16,
    /// False when the rule has no glob or the glob is just `*`: no path is needed.
    pub needs_path: bool,
    pub trigger: Trigger,
    /// Count across the whole process tree (`##N`) rather than per process.
    pub tree: bool,
    pub action: Action,
}

impl Rule {
    const EMPTY: Rule = Rule {
        op: Op::Open,
        glob: [0; MAX_GLOB],
        glob_len: 0,
        needs_path: false,
        trigger: Trigger::Always,
        tree: false,
        action: Action::Lie,
    };

    /// The glob, unescaped except that `\` escapes stay (they are glob syntax too).
    pub fn glob(&self) -> &[u8] {
        let n = (self.glob_len as usize).min(MAX_GLOB);
        &self.glob[..n]
    }

    /// Whether this rule's glob accepts `path` (always true without a glob).
    pub fn matches(&self, path: &[u8]) -> bool {
        !self.needs_path || glob_match(self.glob(), path)
    }
}

/// A parsed plan: at most [`MAX_RULES`] rules in fixed storage.
pub struct Plan {
    rules: [Rule; MAX_RULES],
    len: usize,
}

impl Plan {
    /// The empty plan.
    pub const EMPTY: Plan = Plan {
        rules: [Rule::EMPTY; MAX_RULES],
        len: 0,
    };

    /// The rules, in plan order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules[..self.len.min(MAX_RULES)]
    }
}

/// Why a plan was rejected: a fixed message and the 1-based rule number.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PlanError {
    pub rule: usize,
    pub msg: &'static str,
}

fn err(rule: usize, msg: &'static str) -> PlanError {
    PlanError { rule, msg }
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if first.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if last.is_ascii_whitespace() {
            s = rest;
        } else {
            break;
        }
    }
    s
}

fn parse_u64(s: &[u8]) -> Option<u64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(v)
}

/// The `N` of `#N`/`##N`, with a message naming what is wrong with it.
fn parse_count(n: &[u8], rule: usize) -> Result<u64, PlanError> {
    if n.is_empty() {
        return Err(err(rule, "'#' needs a number N (as in '#2' or '#2+')"));
    }
    if n.contains(&b'%') {
        return Err(err(
            rule,
            "a rule takes one trigger: '#N' and '%P' cannot be combined",
        ));
    }
    if n.contains(&b'#') {
        return Err(err(rule, "'#N': too many '#' (use '#N' or '##N')"));
    }
    if !n.iter().all(u8::is_ascii_digit) {
        return Err(err(
            rule,
            "'#N': N must be a decimal number, optionally followed by '+'",
        ));
    }
    match parse_u64(n) {
        None => Err(err(
            rule,
            "'#N': N is too large (at most 18446744073709551615)",
        )),
        Some(0) => Err(err(rule, "'#N' counts from 1: needs N >= 1")),
        Some(v) => Ok(v),
    }
}

/// `P` percent, with up to four decimals, as parts per million (0..=1_000_000).
fn parse_percent(s: &[u8]) -> Option<u32> {
    let (int, frac) = match s.iter().position(|&c| c == b'.') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[..0]),
    };
    if int.is_empty() || frac.len() > 4 || (s.len() > int.len() && frac.is_empty()) {
        return None;
    }
    let whole = parse_u64(int)?;
    if whole > 100 {
        return None;
    }
    let mut ppm = whole * 10_000;
    let mut scale = 1000;
    for &c in frac {
        if !c.is_ascii_digit() {
            return None;
        }
        ppm += u64::from(c - b'0') * scale;
        scale /= 10;
    }
    if ppm > 1_000_000 {
        return None;
    }
    Some(ppm as u32)
}

/// Splits `s` at the first unescaped byte in `stops`.
fn split_unescaped<'a>(s: &'a [u8], stops: &[u8]) -> (&'a [u8], &'a [u8]) {
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' {
            i += 2;
            continue;
        }
        if stops.contains(&s[i]) {
            return (&s[..i], &s[i..]);
        }
        i += 1;
    }
    (s, &s[s.len()..])
}

fn parse_action(s: &[u8], rule: usize) -> Result<Action, PlanError> {
    let num = |prefix: &[u8], what: &'static str| -> Result<u64, PlanError> {
        parse_u64(&s[prefix.len()..]).ok_or(err(rule, what))
    };
    if s.starts_with(b"short:") {
        return Ok(Action::Short(num(
            b"short:",
            "short:N needs a byte count N",
        )?));
    }
    if s.starts_with(b"torn:") {
        return Ok(Action::Torn(num(b"torn:", "torn:N needs a byte count N")?));
    }
    if s.starts_with(b"delay:") {
        let ms = num(b"delay:", "delay:MS needs milliseconds MS")?;
        if ms > 3_600_000 {
            return Err(err(rule, "delay:MS is limited to one hour"));
        }
        return Ok(Action::Delay(ms));
    }
    if let Some(name) = s.strip_prefix(b"after:") {
        return errno_from_name(name).map(Action::After).ok_or(err(
            rule,
            "after:ERRNO needs an errno name (as in after:EIO)",
        ));
    }
    match s {
        b"crash" => return Ok(Action::Crash),
        b"crash-after" => return Ok(Action::CrashAfter),
        b"lie" => return Ok(Action::Lie),
        _ => {}
    }
    if let Some(e) = errno_from_name(s) {
        return Ok(Action::Errno(e));
    }
    if s.first() == Some(&b'E') {
        return Err(err(rule, "unknown errno name"));
    }
    Err(err(
        rule,
        "unknown action (expected ERRNO, short:N, torn:N, crash, crash-after, delay:MS, lie or after:ERRNO)",
    ))
}

/// Parses a whole plan into `out`. Empty rules (`;;`, trailing `;`) are ignored.
pub fn parse(input: &[u8], out: &mut Plan) -> Result<(), PlanError> {
    out.len = 0;
    let mut rest = input;
    let mut number = 0;
    loop {
        let (chunk, after) = split_unescaped(rest, b";");
        let chunk = trim(chunk);
        if !chunk.is_empty() {
            number += 1;
            if out.len >= MAX_RULES {
                return Err(err(number, "too many rules (at most 32)"));
            }
            let rule = parse_rule(chunk, number)?;
            out.rules[out.len] = rule;
            out.len += 1;
        }
        if after.is_empty() {
            break;
        }
        rest = &after[1..];
    }
    Ok(())
}

fn parse_rule(s: &[u8], number: usize) -> Result<Rule, PlanError> {
    let mut rule = Rule::EMPTY;
    // op: letters up to '@', '#', '%' or '='.
    let op_end = s
        .iter()
        .position(|&c| matches!(c, b'@' | b'#' | b'%' | b'='))
        .ok_or(err(number, "missing '=' and action"))?;
    if trim(&s[..op_end]).is_empty() {
        return Err(err(number, "missing op before '@', '#', '%' or '='"));
    }
    rule.op = Op::from_name(trim(&s[..op_end])).ok_or(err(
        number,
        "unknown op (expected open, write, fsync, rename, unlink, rmdir, mkdir, link, close, flock, ftruncate or fallocate)",
    ))?;
    let mut rest = &s[op_end..];
    if rest[0] == b'@' {
        let (glob, after) = split_unescaped(&rest[1..], b"#%=");
        if glob.is_empty() {
            return Err(err(number, "empty glob after '@'"));
        }
        if glob.len() > MAX_GLOB {
            return Err(err(number, "glob too long (at most 512 bytes)"));
        }
        if glob.last() == Some(&b'\\') && !ends_with_escaped_backslash(glob) {
            return Err(err(number, "glob ends with a lone '\\'"));
        }
        validate_glob(glob).map_err(|msg| err(number, msg))?;
        rule.glob[..glob.len()].copy_from_slice(glob);
        rule.glob_len = glob.len() as u16;
        rule.needs_path = glob.iter().any(|&c| c != b'*');
        rest = after;
    }
    if rest.is_empty() {
        return Err(err(number, "missing '=' and action"));
    }
    match rest[0] {
        b'#' => {
            let mut t = &rest[1..];
            if t.first() == Some(&b'#') {
                rule.tree = true;
                t = &t[1..];
            }
            let end = t
                .iter()
                .position(|&c| c == b'=')
                .ok_or(err(number, "missing '=' and action"))?;
            let mut n = trim(&t[..end]);
            let from = n.last() == Some(&b'+');
            if from {
                n = &n[..n.len() - 1];
            }
            let v = parse_count(n, number)?;
            rule.trigger = if from {
                Trigger::From(v)
            } else {
                Trigger::Nth(v)
            };
            rest = &t[end..];
        }
        b'%' => {
            let t = &rest[1..];
            let end = t
                .iter()
                .position(|&c| c == b'=')
                .ok_or(err(number, "missing '=' and action"))?;
            let text = trim(&t[..end]);
            if text.contains(&b'#') || text.contains(&b'%') {
                return Err(err(
                    number,
                    "a rule takes one trigger: '#N' and '%P' cannot be combined",
                ));
            }
            let p = parse_percent(text).ok_or(err(
                number,
                "'%P' needs a percentage 0..100 (up to 4 decimals)",
            ))?;
            rule.trigger = Trigger::Ppm(p);
            rest = &t[end..];
        }
        _ => {}
    }
    if rest.first() != Some(&b'=') {
        return Err(err(number, "expected '=' before the action"));
    }
    let action = trim(&rest[1..]);
    if action.is_empty() {
        return Err(err(number, "missing action after '='"));
    }
    rule.action = parse_action(action, number)?;
    match (rule.op, rule.action) {
        (Op::Write, _) => {}
        (_, Action::Short(_)) => {
            return Err(err(number, "short:N applies to write only"));
        }
        (_, Action::Torn(_)) => {
            return Err(err(number, "torn:N applies to write only"));
        }
        (Op::Open, Action::Lie) => {
            return Err(err(
                number,
                "lie is not defined for open (there is no fd to return)",
            ));
        }
        _ => {}
    }
    Ok(rule)
}

fn ends_with_escaped_backslash(glob: &[u8]) -> bool {
    let trailing = glob.iter().rev().take_while(|&&c| c == b'\\').count();
    trailing % 2 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Result<std::boxed::Box<Plan>, PlanError> {
        let mut p = std::boxed::Box::new(Plan::EMPTY);
        parse(text.as_bytes(), &mut p).map(|()| p)
    }

    #[test]
    fn parses_every_form() {
        let p = parsed(
            "fsync@*/r/*#2=EIO;rename@*.json=crash;write#3+=short:10;write%12.5=torn:4;\
             mkdir##2=EDQUOT;close=after:EIO;rmdir=lie;link@/x=EMLINK;fallocate=ENOSPC;;",
        )
        .unwrap();
        let r = p.rules();
        assert_eq!(r.len(), 9);
        assert_eq!((r[0].op, r[0].trigger), (Op::Fsync, Trigger::Nth(2)));
        assert_eq!(r[2].trigger, Trigger::From(3));
        assert_eq!(r[3].trigger, Trigger::Ppm(125_000));
        assert!(r[4].tree && !r[0].tree);
        assert_eq!(r[5].action, Action::After(5));
        assert_eq!(
            (r[6].op, r[7].op, r[8].op),
            (Op::Rmdir, Op::Link, Op::Fallocate)
        );
        assert!(r[0].needs_path && !r[8].needs_path);
        assert!(parsed("").unwrap().rules().is_empty());
    }

    #[test]
    fn errors_name_the_rule_and_the_problem() {
        let e = |t: &str| parsed(t).err().unwrap();
        assert_eq!(e("write=EIO;fsync=EBOGUS").rule, 2);
        assert!(e("write#2%5=EIO").msg.contains("cannot be combined"));
        assert!(e("write#99999999999999999999=EIO")
            .msg
            .contains("too large"));
        assert!(e("write@[z-a]=EIO").msg.contains("reversed range"));
        assert!(e("open=lie").msg.contains("not defined for open"));
        assert!(e("fsync=short:1").msg.contains("write only"));
    }
}
