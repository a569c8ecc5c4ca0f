//! One viewer of a master: hello → the resume plan's frames → live output, while its
//! input and resizes reach the PTY. Detaching ends only this viewer.

use std::io::Write;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Duration;

use super::{frame, nudge, Shared, VIEWER_QUEUE, WRITE_TIMEOUT};
use crate::resume::{plan, ring_index, Plan};

/// A viewer that sends no hello this soon is closed.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

pub(super) fn serve(shared: &Shared, stream: UnixStream) {
    let _ = stream.set_read_timeout(Some(HELLO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut reader = stream;
    let Ok(Some((frame::HELLO, payload))) = frame::read(&mut reader) else {
        return;
    };
    let Some((have, gen)) = frame::parse_hello(&payload) else {
        return;
    };
    let _ = reader.set_read_timeout(None);
    let Ok(mut out) = reader.try_clone() else {
        return;
    };
    let (tx, rx) = mpsc::sync_channel::<Vec<u8>>(VIEWER_QUEUE);
    let writer = std::thread::spawn(move || {
        for bytes in rx {
            if out.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = out.shutdown(std::net::Shutdown::Write);
    });
    // The plan's frames are queued and the viewer registered under one lock, so no
    // output falls between the snapshot and the live stream.
    let (id, nudge_needed) = {
        let mut st = shared.state.lock().expect("state lock");
        let (total, len) = (st.ring.total(), st.ring.len());
        let p = plan(have, gen, total, len, shared.master_gen);
        let mut frames = vec![frame::encode(frame::PLAN, &frame::plan(p))];
        let mut nudge_needed = false;
        match p {
            Plan::Delta { from } => {
                let tail = st.ring.tail_from(ring_index(from, total, len));
                if !tail.is_empty() {
                    frames.push(frame::encode(frame::OUTPUT, &tail));
                }
            }
            _ => {
                if st.screen.active() {
                    nudge_needed = true;
                } else if !st.ring.is_empty() {
                    frames.push(frame::encode(frame::OUTPUT, &st.ring.tail_from(0)));
                }
                let mut seq = total.to_be_bytes().to_vec();
                seq.extend_from_slice(&shared.master_gen.to_be_bytes());
                frames.push(frame::encode(frame::SEQ, &seq));
            }
        }
        for f in frames {
            let _ = tx.try_send(f);
        }
        (st.add_viewer(tx, writer), nudge_needed)
    };
    if nudge_needed {
        nudge(shared);
    }
    while let Ok(Some((kind, payload))) = frame::read(&mut reader) {
        match kind {
            frame::INPUT => {
                if (&shared.pty).write_all(&payload).is_err() {
                    break;
                }
            }
            frame::RESIZE if payload.len() == 4 => {
                let cols = u16::from_be_bytes([payload[0], payload[1]]);
                let rows = u16::from_be_bytes([payload[2], payload[3]]);
                if cols > 0 && rows > 0 {
                    let _ = shared.pty.resize(pty_process::Size::new(rows, cols));
                }
            }
            frame::STOP => {
                let pid = nix::unistd::Pid::from_raw(shared.child_pid);
                let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGHUP);
            }
            // Anything else from a viewer is a protocol error: end this viewer only.
            _ => break,
        }
    }
    shared.state.lock().expect("state lock").remove_viewer(id);
}
