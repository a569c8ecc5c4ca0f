//! Built statically by ../build.rs: a program whose calls never reach libvxfault.so
//! (glibc linked in, no dynamic loader), used to show the "not injectable" verdict.
use std::io::Write;

fn main() {
    let path = std::env::args().nth(1).expect("usage: static-probe FILE");
    let mut f = std::fs::File::create(&path).expect("create");
    f.write_all(b"static\n").expect("write");
    f.sync_all().expect("fsync");
    std::fs::rename(&path, format!("{path}.renamed")).expect("rename");
}
