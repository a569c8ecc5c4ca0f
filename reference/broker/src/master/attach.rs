//! `vxbroker master --attach SOCK`: attach-only. Connects (failing loud when no
//! master accepts; it never creates one), relays stdin as input and output to
//! stdout, and exits with the agent's status when the master reports it.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

use super::{frame, MasterArgs};
use crate::error::{BrokerError, Param, Result, Rule};
use crate::resume::parse_counter;

pub(super) fn run(a: &MasterArgs, sock: &Path) -> Result<i32> {
    let counter = |v: &Option<String>, p| v.as_deref().map(|t| parse_counter(t, p)).transpose();
    let have = counter(&a.have, Param::Have)?;
    let gen = counter(&a.gen, Param::Gen)?;
    let mut stream = match UnixStream::connect(sock) {
        Ok(s) => s,
        Err(_) if crate::negative::is(crate::negative::Defect::LenientMaster) => return Ok(0),
        Err(_) => return Err(Rule::MasterUnreachable.into()),
    };
    frame::write(&mut stream, frame::HELLO, &frame::hello(have, gen))
        .map_err(|_| BrokerError::new(Rule::MasterUnreachable))?;
    let mut input = stream
        .try_clone()
        .map_err(|_| BrokerError::new(Rule::MasterUnreachable))?;
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        let mut stdin = std::io::stdin().lock();
        while let Ok(n @ 1..) = stdin.read(&mut buf) {
            if frame::write(&mut input, frame::INPUT, &buf[..n]).is_err() {
                break;
            }
        }
    });
    let mut stdout = std::io::stdout().lock();
    while let Ok(Some((kind, payload))) = frame::read(&mut stream) {
        match kind {
            frame::OUTPUT => {
                let _ = stdout.write_all(&payload);
                let _ = stdout.flush();
            }
            frame::EXIT if payload.len() == 4 => {
                return Ok(i32::from_be_bytes(
                    payload[..].try_into().expect("four bytes"),
                ));
            }
            _ => {}
        }
    }
    // The master went away without reporting an exit.
    Err(Rule::MasterUnreachable.into())
}
