//! The programs the seccomp backend is proven on, built once per test process: a Go
//! program (`testdata/goprobe.go`, raw system calls through the Go runtime) and a
//! statically linked C program (`testdata/cprobe.c`, `gcc -static`). Without `go` or
//! a static libc a test says so and passes, unless `VXFAULT_REQUIRE_PROGRAMS=1` (set by
//! `.ci/run`), which makes a missing toolchain a failure.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One built program.
#[derive(Debug, Clone)]
pub struct Program {
    pub name: &'static str,
    pub path: PathBuf,
}

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(name)
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("seccomp-programs");
    std::fs::create_dir_all(&d).expect("create the programs' directory");
    d
}

/// Runs `cmd`, which writes `out.<pid>`, then renames that to `out` (another test
/// process may be using the previous build).
fn build(name: &'static str, mut cmd: Command, out: PathBuf) -> Result<Program, String> {
    let o = cmd
        .output()
        .map_err(|e| format!("{name}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !o.status.success() {
        return Err(format!(
            "{name}: build failed: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    std::fs::rename(partial(&out), &out).map_err(|e| format!("{name}: {e}"))?;
    Ok(Program { name, path: out })
}

fn partial(out: &Path) -> PathBuf {
    out.with_extension(std::process::id().to_string())
}

fn build_all() -> Vec<Result<Program, String>> {
    let dir = out_dir();
    let go_out = dir.join("goprobe");
    let mut go = Command::new("go");
    go.arg("build")
        .arg("-o")
        .arg(partial(&go_out))
        .arg(testdata("goprobe.go"))
        .env("CGO_ENABLED", "0")
        .env("GO111MODULE", "off")
        .env("GOFLAGS", "")
        .current_dir(&dir);
    if std::env::var_os("GOCACHE").is_none() {
        go.env(
            "GOCACHE",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("go-cache"),
        );
    }
    let c_out = dir.join("cprobe");
    let mut cc = Command::new("cc");
    cc.args(["-static", "-O1", "-pthread", "-o"])
        .arg(partial(&c_out))
        .arg(testdata("cprobe.c"));
    vec![build("go", go, go_out), build("static-c", cc, c_out)]
}

/// The programs that could be built. A program that could not is a skip with its
/// reason, or a failure under `VXFAULT_REQUIRE_PROGRAMS=1`.
pub fn programs() -> Vec<Program> {
    static BUILT: OnceLock<Vec<Result<Program, String>>> = OnceLock::new();
    let built = BUILT.get_or_init(build_all);
    let mut out = Vec::new();
    for b in built {
        match b {
            Ok(p) => out.push(p.clone()),
            Err(why) => {
                assert!(
                    std::env::var_os("VXFAULT_REQUIRE_PROGRAMS").is_none(),
                    "{why} (VXFAULT_REQUIRE_PROGRAMS is set)"
                );
                eprintln!("note: skipped: {why}");
            }
        }
    }
    out
}

/// The Go program, if it could be built.
pub fn go() -> Option<Program> {
    programs().into_iter().find(|p| p.name == "go")
}
