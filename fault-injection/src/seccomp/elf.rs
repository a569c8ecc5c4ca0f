//! `--backend auto`: does the program go through libc's file entry points (then the
//! preload sees it), or not (a static binary, a Go program, a program that imports
//! none of them)? Read from the ELF headers, the dynamic symbol table and the section
//! names; a `#!` script is judged by its interpreter.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// libc symbols whose import means the preload can see the program's file calls.
const LIBC_FILE_CALLS: &[&str] = &[
    "open",
    "open64",
    "openat",
    "openat64",
    "__open_2",
    "__open64_2",
    "__openat_2",
    "__openat64_2",
    "creat",
    "creat64",
    "fopen",
    "fopen64",
    "write",
    "pwrite",
    "pwrite64",
    "writev",
    "pwritev",
    "pwritev2",
    "fwrite",
    "fputs",
    "fsync",
    "fdatasync",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "mkdir",
    "mkdirat",
    "close",
    "fclose",
    "flock",
    "fcntl",
    "fcntl64",
    "ftruncate",
    "ftruncate64",
    "truncate",
    "truncate64",
    "mknod",
    "mknodat",
    "mkfifo",
    "mkfifoat",
    "chmod",
    "fchmod",
    "fchmodat",
    "utimensat",
    "futimens",
    "utimes",
    "utime",
    "syscall",
];

/// What the program is, as far as the choice of backend goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Dynamically linked and imports libc's file calls (the preload sees it).
    Libc,
    /// Statically linked (no program interpreter).
    Static,
    /// A Go program (its runtime makes raw system calls even when linked dynamically).
    Go,
    /// Dynamically linked, but imports none of libc's file calls.
    NoLibcCalls,
    /// Not an ELF file or a script we can follow.
    Unknown(String),
}

fn u16_at(b: &[u8], o: usize) -> Option<usize> {
    Some(u16::from_le_bytes(b.get(o..o + 2)?.try_into().ok()?) as usize)
}
fn u32_at(b: &[u8], o: usize) -> Option<usize> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as usize)
}
fn u64_at(b: &[u8], o: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?)).ok()
}
fn cstr_at(b: &[u8], o: usize) -> &[u8] {
    let s = b.get(o..).unwrap_or(&[]);
    &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
}

/// Classifies an ELF64 little-endian image (x86_64, aarch64).
pub fn classify_elf(b: &[u8]) -> Kind {
    if b.get(..4) != Some(b"\x7fELF") || b.get(4) != Some(&2) || b.get(5) != Some(&1) {
        return Kind::Unknown("not a 64-bit little-endian ELF file".into());
    }
    let parse = || -> Option<Kind> {
        let (phoff, phentsize, phnum) = (u64_at(b, 0x20)?, u16_at(b, 0x36)?, u16_at(b, 0x38)?);
        let interp = (0..phnum).any(|i| u32_at(b, phoff + i * phentsize) == Some(3));
        let (shoff, shentsize, shnum, shstrndx) = (
            u64_at(b, 0x28)?,
            u16_at(b, 0x3a)?,
            u16_at(b, 0x3c)?,
            u16_at(b, 0x3e)?,
        );
        let sh = |i: usize| shoff + i * shentsize;
        let names_off = u64_at(b, sh(shstrndx) + 0x18)?;
        let mut dynsym = None;
        for i in 0..shnum {
            let name = cstr_at(b, names_off + u32_at(b, sh(i))?);
            if name == b".go.buildinfo" || name == b".note.go.buildid" {
                return Some(Kind::Go);
            }
            if u32_at(b, sh(i) + 4)? == 11 {
                dynsym = Some(i);
            }
        }
        if !interp {
            return Some(Kind::Static);
        }
        let Some(i) = dynsym else {
            return Some(Kind::NoLibcCalls);
        };
        let (off, size, link, ent) = (
            u64_at(b, sh(i) + 0x18)?,
            u64_at(b, sh(i) + 0x20)?,
            u32_at(b, sh(i) + 0x28)?,
            u64_at(b, sh(i) + 0x38)?.max(24),
        );
        let strs = u64_at(b, sh(link) + 0x18)?;
        let imports = (0..size / ent).any(|k| {
            let s = off + k * ent;
            let undefined = u16_at(b, s + 6) == Some(0);
            let name = u32_at(b, s).map(|n| cstr_at(b, strs + n)).unwrap_or(&[]);
            undefined && LIBC_FILE_CALLS.iter().any(|c| c.as_bytes() == name)
        });
        Some(if imports {
            Kind::Libc
        } else {
            Kind::NoLibcCalls
        })
    };
    parse().unwrap_or_else(|| Kind::Unknown("a truncated or malformed ELF file".into()))
}

/// Finds `prog` as exec would (a name without `/` through `$PATH`).
pub fn resolve(prog: &Path) -> Option<PathBuf> {
    if prog.as_os_str().as_encoded_bytes().contains(&b'/') {
        return prog.is_file().then(|| prog.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// Classifies the program `prog` (following one `#!` interpreter, and `env NAME`).
pub fn classify(prog: &Path) -> io::Result<(PathBuf, Kind)> {
    let path = resolve(prog).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    let head = read_head(&path)?;
    if let Some(line) = head.strip_prefix(b"#!") {
        let line = &line[..line.iter().position(|&c| c == b'\n').unwrap_or(line.len())];
        let text = String::from_utf8_lossy(line);
        let mut words = text.split_whitespace();
        let mut interp = PathBuf::from(words.next().unwrap_or(""));
        if interp.file_name().is_some_and(|n| n == "env") {
            interp = PathBuf::from(words.next().unwrap_or(""));
        }
        let ip = resolve(&interp).ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        return Ok((ip.clone(), classify_elf(&fs::read(&ip)?)));
    }
    Ok((path.clone(), classify_elf(&fs::read(&path)?)))
}

fn read_head(p: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = vec![0u8; 256];
    let n = fs::File::open(p)?.read(&mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_imports_libc_and_garbage_is_unknown() {
        let (_, k) = classify(Path::new("sh")).unwrap();
        assert_eq!(k, Kind::Libc);
        assert!(matches!(classify_elf(b"#!/bin/sh\n"), Kind::Unknown(_)));
        assert!(matches!(classify_elf(b"\x7fELF\x02\x01"), Kind::Unknown(_)));
    }
}
