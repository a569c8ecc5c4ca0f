//! Capture (RFC §3): one consistent view of the tree at one reactor turn.

use super::archive::ArchiveText;
use super::durable::{to_format_spec, to_pane_state, tree_nodes};
use super::text::{screen_text, FreshText};
use crate::emulator::TextBounds;
use crate::reactor::State;
use crate::topology::Layer;
use std::sync::Arc;
use vx_format as fmt;
use vx_format::{Checkpoint, Shutdown, Text, Timestamp};

impl State {
    /// One consistent view at this turn (RFC §3): topology, lifecycle and, with
    /// `.plain`, bounded primary-screen text. An allowlist: the model has no field
    /// for argv, env, cwd, PIDs, principals or tokens.
    #[cfg(test)]
    pub(in crate::reactor) fn capture(&self, at: Timestamp, shutdown: Shutdown) -> Checkpoint {
        self.capture_for_write(at, shutdown).0
    }

    /// The capture a write publishes, and the panes whose text was read as plain rows,
    /// for the worker to encode ([`super::text::encode_fresh`]).
    pub(in crate::reactor) fn capture_for_write(
        &self,
        at: Timestamp,
        shutdown: Shutdown,
    ) -> (Checkpoint, Vec<FreshText>) {
        let rc = &self.config.recovery;
        let text_on = rc.text_enabled();
        let text_age_ms = (rc.text_max_age_seconds as i64).saturating_mul(1000);
        let sessions = self
            .topology
            .sessions
            .values()
            .map(|s| fmt::Session {
                id: s.id.0,
                name: s.name.clone(),
            })
            .collect();
        let windows = self
            .topology
            .windows
            .values()
            .map(|w| {
                let nodes = w.tree.as_ref().map(tree_nodes).unwrap_or_default();
                fmt::Window {
                    id: w.id.0,
                    session: w.session.0,
                    name: w.name.clone(),
                    revision: w.revision,
                    nodes,
                }
            })
            .collect();
        let mut fresh = Vec::new();
        let panes = self
            .topology
            .panes
            .values()
            .enumerate()
            .map(|(index, p)| {
                let archive = self.recovery.archives.get(&p.id);
                let float = match &p.layer {
                    Layer::Float { spec, z, .. } => Some(to_format_spec(spec, *z)),
                    Layer::Tiled => None,
                };
                let mut live_text = |saved_at: Timestamp, expires_at: Timestamp| {
                    let Some(screen) = self.screens.get(&p.id) else {
                        return Text::Omitted;
                    };
                    let Ok(e) = screen.lock() else {
                        return Text::Omitted;
                    };
                    let bounds = TextBounds {
                        rows: p.rows,
                        max_rows: rc.text_max_rows,
                        max_bytes: rc.text_max_bytes,
                    };
                    let (text, read_at) = screen_text(&e, bounds, saved_at, expires_at);
                    if let Some(version) = read_at {
                        fresh.push(FreshText {
                            pane: index,
                            screen: Arc::clone(screen),
                            version,
                            bounds,
                        });
                    }
                    text
                };
                let text = match archive.map(|a| a.text) {
                    Some(ArchiveText::Expired) => Text::Expired,
                    Some(ArchiveText::Omitted) => Text::Omitted,
                    // Archived text keeps its original lifetime; past it, it is gone.
                    Some(ArchiveText::Plain {
                        saved_at,
                        expires_at,
                    }) => {
                        if at < saved_at || at >= expires_at {
                            Text::Expired
                        } else if text_on {
                            live_text(saved_at, expires_at)
                        } else {
                            Text::Omitted
                        }
                    }
                    None if text_on => live_text(at, Timestamp(at.0.saturating_add(text_age_ms))),
                    None => Text::Omitted,
                };
                fmt::Pane {
                    id: p.id.0,
                    window: p.window.0,
                    session: p.session.0,
                    cols: p.cols,
                    rows: p.rows,
                    state: to_pane_state(&p.state),
                    previous_state: archive.map(|a| a.process_state),
                    float,
                    tags: p
                        .tags
                        .iter()
                        .map(|(k, v)| fmt::Tag {
                            key: k.clone(),
                            value: v.clone(),
                        })
                        .collect(),
                    text,
                }
            })
            .collect();
        let checkpoint = Checkpoint {
            // The store sets id, generation, socket and uid when it publishes.
            checkpoint: String::new(),
            generation: 0,
            socket: String::new(),
            uid: 0,
            captured_at: at,
            shutdown,
            sessions,
            windows,
            panes,
        };
        (checkpoint, fresh)
    }
}

#[cfg(test)]
mod tests {
    use super::super::archive::Archive;
    use super::*;
    use crate::emulator::Emulator;
    use crate::ids::{PaneId, SessionId, WindowId};
    use crate::topology::tree::Axis;
    use crate::topology::{Pane, PaneState};
    use std::sync::{Arc, Mutex};
    use vx_format::PreviousState;

    fn live_pane(state: &mut State, window: WindowId, session: SessionId, argv0: &str) -> PaneId {
        let id = state.topology.allocate_pane().unwrap();
        let pane = Pane {
            id,
            window,
            session,
            cols: 10,
            rows: 2,
            layer: Layer::Tiled,
            state: PaneState::Running,
            argv0: Some(argv0.into()),
            tags: [("owner".to_string(), "venomx".to_string())].into(),
            principal: Some("t7".into()),
        };
        if state.topology.windows[&window].tree.is_none() {
            state.topology.insert_root(pane);
        } else {
            let first = state.topology.panes.keys().next().copied().unwrap();
            state
                .topology
                .insert_split(first, pane, Axis::Cols, Some(2500), false);
        }
        state
            .screens
            .insert(id, Arc::new(Mutex::new(Emulator::new(10, 2, 100))));
        id
    }

    #[test]
    fn capture_is_an_allowlist_with_bounded_primary_screen_text() {
        let mut state = crate::reactor::test_state();
        state.config.recovery.terminal_text = crate::config::schema::TerminalText::Plain;
        state.config.recovery.text_max_rows = 4;
        state.config.recovery.text_max_bytes = 1000;
        state.config.recovery.text_max_age_seconds = 60;
        let s = state.topology.create_session("work".into()).unwrap();
        let w = state.topology.create_window(s, "w".into(), 41, 2).unwrap();
        let a = live_pane(&mut state, w, s, "SECRET-ARGV0");
        let b = live_pane(&mut state, w, s, "sh");
        {
            let mut e = state.screens[&a].lock().unwrap();
            e.feed(b"h1\r\nh2\r\nh3\r\ns1\r\ns2");
            e.feed(b"\x1b[?1049hALT");
        }
        state.topology.panes.get_mut(&b).unwrap().state = PaneState::Exited {
            exit_code: None,
            signal: Some("SIGKILL".into()),
        };
        state.recovery.archives.insert(
            b,
            Archive {
                checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
                previous_pane: "p40".into(),
                process_state: PreviousState::Interrupted,
                text: ArchiveText::Expired,
                cut_rows: 0,
                unknown_preset: false,
            },
        );
        let at = Timestamp(1_800_000_000_000);
        let cp = state.capture(at, Shutdown::Open);
        assert_eq!(
            cp.sessions,
            vec![fmt::Session {
                id: 0,
                name: "work".into()
            }]
        );
        assert_eq!(
            cp.windows[0].nodes[0],
            fmt::Node::Split {
                axis: fmt::Axis::Cols,
                first: 1,
                second: 2,
                ratio: Some(2500)
            }
        );
        let pa = &cp.panes[0];
        assert_eq!(pa.state, fmt::PaneState::Running);
        assert_eq!(
            pa.tags,
            vec![fmt::Tag {
                key: "owner".into(),
                value: "venomx".into()
            }]
        );
        let Text::Plain(t) = pa.text.to_plain() else {
            panic!("plain text expected")
        };
        assert_eq!(
            t.screen,
            vec!["s1", "s2"],
            "primary screen, not the alternate one"
        );
        assert_eq!(
            t.history,
            vec!["h2", "h3"],
            "4 rows in all: oldest history dropped"
        );
        assert_eq!((t.saved_at, t.expires_at), (at, Timestamp(at.0 + 60_000)));
        let pb = &cp.panes[1];
        assert_eq!(
            pb.state,
            fmt::PaneState::Exited {
                exit: Some(fmt::Exit::Signal("SIGKILL".into()))
            }
        );
        assert_eq!(pb.previous_state, Some(PreviousState::Interrupted));
        assert_eq!(pb.text, Text::Expired);
        // The writer accepts it, and nothing outside the allowlist is in the file.
        let mut cp = cp;
        cp.checkpoint = "c01234567-89ab-4cde-8fab-0123456789ab".into();
        cp.generation = 1;
        cp.socket = "/run/test.sock".into();
        let bytes =
            String::from_utf8(vx_format::write(&cp, fmt::Format::CURRENT).unwrap()).unwrap();
        for leak in ["SECRET-ARGV0", "t7", "ALT", "venomx/test"] {
            assert!(!bytes.contains(leak), "{leak}");
        }
        // A clean checkpoint with a running pane is refused by the writer.
        cp.shutdown = Shutdown::Clean;
        assert!(vx_format::write(&cp, fmt::Format::CURRENT).is_err());
    }
}
