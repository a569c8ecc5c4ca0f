//! The plan language of `VXFAULT_PLAN`, glob matching, errno names and the layout of
//! the shared counter file.
//!
//! This file is compiled twice: into `libvxfault.so` (where it must not allocate) and
//! into the `vxfault` runner library (which validates plans before running anything).
//! Everything here works on fixed-size storage and never allocates or panics on valid
//! indices.

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
}

/// Number of call families.
pub const NUM_OPS: usize = 12;

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

/// Refuses a glob that could never mean what it says: an unterminated `[` class
/// (`[abc`, `[!`, `[]`) or a reversed range (`[z-a]`).
pub fn validate_glob(pat: &[u8]) -> Result<(), &'static str> {
    let mut i = 0;
    while i < pat.len() {
        match pat[i] {
            b'\\' => i += 2,
            b'[' => i = class_end(pat, i)?,
            _ => i += 1,
        }
    }
    Ok(())
}

/// The index after the class that starts at `pat[start] == '['`, checking its ranges.
fn class_end(pat: &[u8], start: usize) -> Result<usize, &'static str> {
    const UNTERMINATED: &str = "unterminated '[' class in glob (write '\\[' for a literal '[')";
    let mut j = start + 1;
    if j < pat.len() && (pat[j] == b'!' || pat[j] == b'^') {
        j += 1;
    }
    let mut first = true;
    while j < pat.len() {
        if pat[j] == b']' && !first {
            return Ok(j + 1);
        }
        first = false;
        let (lo, next) = class_byte(pat, j).ok_or(UNTERMINATED)?;
        j = next;
        if j + 1 < pat.len() && pat[j] == b'-' && pat[j + 1] != b']' {
            let (hi, next) = class_byte(pat, j + 1).ok_or(UNTERMINATED)?;
            if hi < lo {
                return Err("reversed range in a '[' class of the glob (as in '[z-a]')");
            }
            j = next;
        }
    }
    Err(UNTERMINATED)
}

/// One (possibly `\`-escaped) byte of a class at `pat[j]`, and the index after it.
fn class_byte(pat: &[u8], j: usize) -> Option<(u8, usize)> {
    match pat.get(j)? {
        b'\\' => Some((*pat.get(j + 1)?, j + 2)),
        &c => Some((c, j + 1)),
    }
}

/// Shell-style glob: `*` any bytes (including `/`), `?` one byte, `[a-z]`/`[!a-z]`
/// classes, `\x` a literal `x`.
pub fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pat.len() {
            match pat[p] {
                b'*' => {
                    while p < pat.len() && pat[p] == b'*' {
                        p += 1;
                    }
                    if p == pat.len() {
                        return true;
                    }
                    star = Some((p, i));
                    continue;
                }
                b'?' => {
                    p += 1;
                    i += 1;
                    continue;
                }
                b'[' => {
                    if let Some((ok, next)) = class_match(pat, p, s[i]) {
                        if ok {
                            p = next;
                            i += 1;
                            continue;
                        }
                    } else if s[i] == b'[' {
                        // An unterminated '[' is a literal.
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
                b'\\' if p + 1 < pat.len() => {
                    if pat[p + 1] == s[i] {
                        p += 2;
                        i += 1;
                        continue;
                    }
                }
                c => {
                    if c == s[i] {
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    while p < pat.len() && pat[p] == b'*' {
        p += 1;
    }
    p == pat.len()
}

/// Matches byte `c` against the class starting at `pat[start] == '['`. Returns whether
/// it matched and the index after the class, or `None` if the class is unterminated.
fn class_match(pat: &[u8], start: usize, c: u8) -> Option<(bool, usize)> {
    let mut j = start + 1;
    let negate = j < pat.len() && (pat[j] == b'!' || pat[j] == b'^');
    if negate {
        j += 1;
    }
    let mut matched = false;
    let mut first = true;
    while j < pat.len() {
        let mut lo = pat[j];
        if lo == b']' && !first {
            return Some((matched != negate, j + 1));
        }
        first = false;
        if lo == b'\\' && j + 1 < pat.len() {
            j += 1;
            lo = pat[j];
        }
        let mut hi = lo;
        if j + 2 < pat.len() && pat[j + 1] == b'-' && pat[j + 2] != b']' {
            hi = pat[j + 2];
            if hi == b'\\' && j + 3 < pat.len() {
                j += 1;
                hi = pat[j + 2];
            }
            j += 2;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
        j += 1;
    }
    None
}

/// Escapes `path` so that it is a glob matching exactly that path and is safe inside
/// a rule (`*?[]\` and the plan's own separators `;#%=` get a backslash).
/// Returns the bytes written to `out`, or `None` if `out` is too small.
pub fn escape_glob(path: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut n = 0;
    for &c in path {
        if matches!(
            c,
            b'*' | b'?' | b'[' | b']' | b'\\' | b';' | b'#' | b'%' | b'='
        ) {
            *out.get_mut(n)? = b'\\';
            n += 1;
        }
        *out.get_mut(n)? = c;
        n += 1;
    }
    Some(n)
}

/// FNV-1a, used to tie the shared counter file to one plan text.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// splitmix64: the per-call random draw for `%P` triggers.
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Whether the `ordinal`-th matching call of rule `rule`, in the process whose random
/// stream is `stream`, fires with probability `ppm`. Every process of a tree has its
/// own stream, so N processes making one call each draw N independent decisions.
pub fn draw(seed: u64, stream: u64, rule: usize, ordinal: u64, ppm: u32) -> bool {
    let call = splitmix64((rule as u64 + 1).wrapping_mul(0x1000_0000_01b3) ^ ordinal);
    let x = splitmix64(seed ^ splitmix64(stream.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ call));
    (x % 1_000_000) < u64::from(ppm)
}

/// Whether a call that is the `ordinal`-th match of rule `rule` fires.
pub fn fires(trigger: Trigger, seed: u64, stream: u64, rule: usize, ordinal: u64) -> bool {
    match trigger {
        Trigger::Always => true,
        Trigger::Nth(n) => ordinal == n,
        Trigger::From(n) => ordinal >= n,
        Trigger::Ppm(p) => draw(seed, stream, rule, ordinal, p),
    }
}

/// Errno names accepted in plans (Linux numbering, x86_64 and aarch64 agree).
pub const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("ESRCH", 3),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("E2BIG", 7),
    ("ENOEXEC", 8),
    ("EBADF", 9),
    ("ECHILD", 10),
    ("EAGAIN", 11),
    ("EWOULDBLOCK", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("ENOTBLK", 15),
    ("EBUSY", 16),
    ("EEXIST", 17),
    ("EXDEV", 18),
    ("ENODEV", 19),
    ("ENOTDIR", 20),
    ("EISDIR", 21),
    ("EINVAL", 22),
    ("ENFILE", 23),
    ("EMFILE", 24),
    ("ENOTTY", 25),
    ("ETXTBSY", 26),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("EMLINK", 31),
    ("EPIPE", 32),
    ("EDOM", 33),
    ("ERANGE", 34),
    ("EDEADLK", 35),
    ("EDEADLOCK", 35),
    ("ENAMETOOLONG", 36),
    ("ENOLCK", 37),
    ("ENOSYS", 38),
    ("ENOTEMPTY", 39),
    ("ELOOP", 40),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOLINK", 67),
    ("EPROTO", 71),
    ("EOVERFLOW", 75),
    ("EBADFD", 77),
    ("EILSEQ", 84),
    ("EUSERS", 87),
    ("ENOTSOCK", 88),
    ("EOPNOTSUPP", 95),
    ("ENOTSUP", 95),
    ("ECONNRESET", 104),
    ("ENOBUFS", 105),
    ("ENOTCONN", 107),
    ("ETIMEDOUT", 110),
    ("ECONNREFUSED", 111),
    ("EALREADY", 114),
    ("EINPROGRESS", 115),
    ("ESTALE", 116),
    ("EUCLEAN", 117),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ECANCELED", 125),
    ("EOWNERDEAD", 130),
    ("ENOTRECOVERABLE", 131),
];

/// The errno called `name`.
pub fn errno_from_name(name: &[u8]) -> Option<i32> {
    ERRNOS
        .iter()
        .find(|(n, _)| n.as_bytes() == name)
        .map(|&(_, v)| v)
}

/// The first name of errno `e` (`EAGAIN` rather than `EWOULDBLOCK`).
pub fn errno_name(e: i32) -> Option<&'static str> {
    ERRNOS.iter().find(|&&(_, v)| v == e).map(|&(n, _)| n)
}

// ---------------------------------------------------------------------------------
// The shared counter file (`VXFAULT_SHM`): a fixed array of u64 words, mapped
// MAP_SHARED by every process of the tree. All words are little-endian native u64
// updated with atomic operations.

/// `VXFAULT_SHM` file size in bytes.
pub const SHM_SIZE: usize = 4096;
/// Word index of the magic number.
pub const SHM_MAGIC: usize = 0;
/// Word index of the FNV-1a hash of the plan text.
pub const SHM_PLAN_HASH: usize = 1;
/// Word index of the tree-wide trace sequence counter.
pub const SHM_SEQ: usize = 2;
/// Word index of the number of processes that loaded the preload.
pub const SHM_LOADED: usize = 3;
/// Word index of the number of processes that found a different plan (and so did
/// not use these counters).
pub const SHM_PLAN_MISMATCH: usize = 4;
/// Word index of the number of processes whose `VXFAULT_PLAN` did not parse.
pub const SHM_PLAN_ERROR: usize = 5;
/// Word index of the number of trace lines that could not be written.
pub const SHM_TRACE_ERRORS: usize = 6;
/// Word index of the tree-wide count of random streams handed out (one per process).
pub const SHM_STREAMS: usize = 7;
/// First word of the per-op "calls seen" counters (`NUM_OPS` words).
pub const SHM_SEEN: usize = 16;
/// First word of the per-rule "matching calls" counters (`MAX_RULES` words).
pub const SHM_MATCHED: usize = 32;
/// First word of the per-rule "fired" counters (`MAX_RULES` words).
pub const SHM_FIRED: usize = 64;
/// Number of u64 words used.
pub const SHM_WORDS: usize = 96;
/// The magic number ("vxfault1").
pub const SHM_MAGIC_VALUE: u64 = u64::from_le_bytes(*b"vxfault1");
