//! Capture (RFC §3): one consistent view of the tree at one reactor turn.

use super::archive::ArchiveText;
use super::durable::{to_format_spec, to_pane_state, tree_nodes_into};
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
        *self.capture_for_write(at, shutdown, None).0
    }

    /// The capture a write publishes, and the panes whose text was read as plain rows,
    /// for the worker to encode ([`super::text::encode_fresh`]). `spent` is a
    /// checkpoint the worker is done with: every field of it is overwritten, so its
    /// strings and lists are reused instead of allocated again in this turn.
    pub(in crate::reactor) fn capture_for_write(
        &self,
        at: Timestamp,
        shutdown: Shutdown,
        spent: Option<Box<Checkpoint>>,
    ) -> (Box<Checkpoint>, Vec<FreshText>) {
        let mut cp = spent.unwrap_or_else(|| {
            Box::new(Checkpoint {
                checkpoint: String::new(),
                generation: 0,
                socket: String::new(),
                uid: 0,
                captured_at: at,
                shutdown,
                sessions: Vec::new(),
                windows: Vec::new(),
                panes: Vec::new(),
            })
        });
        // The store sets id, generation, socket and uid when it publishes.
        cp.checkpoint.clear();
        cp.generation = 0;
        cp.socket.clear();
        cp.uid = 0;
        cp.captured_at = at;
        cp.shutdown = shutdown;
        fill(&mut cp.sessions, self.topology.sessions.values(), |d, s| {
            d.id = s.id.0;
            d.name.clone_from(&s.name);
        });
        fill(&mut cp.windows, self.topology.windows.values(), |d, w| {
            d.id = w.id.0;
            d.session = w.session.0;
            d.name.clone_from(&w.name);
            d.revision = w.revision;
            match &w.tree {
                Some(tree) => tree_nodes_into(tree, &mut d.nodes),
                None => d.nodes.clear(),
            }
        });
        let mut fresh = Vec::new();
        let mut index = 0;
        fill(&mut cp.panes, self.topology.panes.values(), |d, p| {
            let archive = self.recovery.archives.get(&p.id);
            d.id = p.id.0;
            d.window = p.window.0;
            d.session = p.session.0;
            d.cols = p.cols;
            d.rows = p.rows;
            d.state = to_pane_state(&p.state);
            d.previous_state = archive.map(|a| a.process_state);
            d.float = match &p.layer {
                Layer::Float { spec, z, .. } => Some(to_format_spec(spec, *z)),
                Layer::Tiled => None,
            };
            d.tags.truncate(p.tags.len());
            let mut live = p.tags.iter();
            for (tag, (k, v)) in d.tags.iter_mut().zip(live.by_ref()) {
                tag.key.clone_from(k);
                tag.value.clone_from(v);
            }
            d.tags.extend(live.map(|(k, v)| fmt::Tag {
                key: k.clone(),
                value: v.clone(),
            }));
            d.text = self.pane_text(p, archive, at, index, &mut fresh);
            index += 1;
        });
        (cp, fresh)
    }

    /// A pane's text at `at`: archived text keeps its original lifetime; a live
    /// screen's is read under the configured bounds (a screen read as plain rows is
    /// listed in `fresh`, by its index among the panes).
    fn pane_text(
        &self,
        p: &crate::topology::Pane,
        archive: Option<&super::archive::Archive>,
        at: Timestamp,
        index: usize,
        fresh: &mut Vec<FreshText>,
    ) -> Text {
        let rc = &self.config.recovery;
        let live_text = |fresh: &mut Vec<FreshText>, saved_at: Timestamp, expires_at: Timestamp| {
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
        match archive.map(|a| a.text) {
            Some(ArchiveText::Expired) => Text::Expired,
            Some(ArchiveText::Omitted) => Text::Omitted,
            // Archived text keeps its original lifetime; past it, it is gone.
            Some(ArchiveText::Plain {
                saved_at,
                expires_at,
            }) => {
                if at < saved_at || at >= expires_at {
                    Text::Expired
                } else if rc.text_enabled() {
                    live_text(fresh, saved_at, expires_at)
                } else {
                    Text::Omitted
                }
            }
            None if rc.text_enabled() => {
                let age_ms = (rc.text_max_age_seconds as i64).saturating_mul(1000);
                live_text(fresh, at, Timestamp(at.0.saturating_add(age_ms)))
            }
            None => Text::Omitted,
        }
    }
}

/// Makes `list` one record per item of `live`, each overwritten by `set` in place
/// (a record beyond the old length starts [`Blank`]).
fn fill<T: Blank, S>(
    list: &mut Vec<T>,
    live: impl ExactSizeIterator<Item = S>,
    mut set: impl FnMut(&mut T, S),
) {
    list.truncate(live.len());
    let mut live = live;
    for (record, item) in list.iter_mut().zip(live.by_ref()) {
        set(record, item);
    }
    for item in live {
        let mut record = T::blank();
        set(&mut record, item);
        list.push(record);
    }
}

/// A record for [`fill`] to overwrite (every field is set there; a blank record
/// is never published).
trait Blank {
    fn blank() -> Self;
}

impl Blank for fmt::Session {
    fn blank() -> Self {
        fmt::Session {
            id: 0,
            name: String::new(),
        }
    }
}

impl Blank for fmt::Window {
    fn blank() -> Self {
        fmt::Window {
            id: 0,
            session: 0,
            name: String::new(),
            revision: 0,
            nodes: Vec::new(),
        }
    }
}

impl Blank for fmt::Pane {
    fn blank() -> Self {
        fmt::Pane {
            id: 0,
            window: 0,
            session: 0,
            cols: 0,
            rows: 0,
            state: fmt::PaneState::Running,
            previous_state: None,
            float: None,
            tags: Vec::new(),
            text: Text::Omitted,
        }
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

    /// The archive of a pane restored from a checkpoint where it was running.
    pub(super) fn interrupted_archive() -> Archive {
        Archive {
            checkpoint: "c01234567-89ab-4cde-8fab-0123456789ab".into(),
            previous_pane: "p40".into(),
            process_state: PreviousState::Interrupted,
            text: ArchiveText::Expired,
            cut_rows: 0,
            unknown_preset: false,
        }
    }

    fn live_pane(state: &mut State, window: WindowId, session: SessionId, argv0: &str) -> PaneId {
        live_pane_in(state, window, session, Layer::Tiled, Some(argv0))
    }

    /// A running pane with a 10x2 screen: a float, the window's root, or split off
    /// its first pane.
    pub(super) fn live_pane_in(
        state: &mut State,
        window: WindowId,
        session: SessionId,
        layer: Layer,
        argv0: Option<&str>,
    ) -> PaneId {
        let id = state.topology.allocate_pane().unwrap();
        let float = matches!(layer, Layer::Float { .. });
        let pane = Pane {
            id,
            window,
            session,
            cols: 10,
            rows: 2,
            layer,
            state: PaneState::Running,
            argv0: argv0.map(Into::into),
            tags: [("owner".to_string(), "venomx".to_string())].into(),
            principal: Some("t7".into()),
        };
        if float {
            state.topology.insert_float(pane);
        } else if state.topology.windows[&window].tree.is_none() {
            state.topology.insert_root(pane);
        } else {
            let first = state.topology.panes_of(window).next().unwrap().id;
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
        state.recovery.archives.insert(b, interrupted_archive());
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

#[cfg(test)]
mod reuse_tests {
    use super::*;
    use crate::ids::{SessionId, WindowId};
    use crate::topology::float::{FloatSpec, Geometry};
    use crate::topology::PaneState;

    fn pane(state: &mut State, window: WindowId, session: SessionId, layer: Layer) {
        let id = super::tests::live_pane_in(state, window, session, layer, None);
        let text = format!("pane {}\r\n\"{}\"", id.0, id.0 * 7);
        state.screens[&id].lock().unwrap().feed(text.as_bytes());
    }

    fn float() -> Layer {
        Layer::Float {
            spec: Box::new(FloatSpec {
                title: Some("notes".into()),
                ..FloatSpec::default()
            }),
            z: 3,
            geometry: Geometry {
                col: 0,
                row: 0,
                cols: 10,
                rows: 2,
            },
        }
    }

    /// What the worker hands back: the published checkpoint without its text.
    fn spent(mut cp: Box<Checkpoint>) -> Box<Checkpoint> {
        for p in &mut cp.panes {
            p.text = Text::Omitted;
        }
        cp
    }

    /// Each step changes the topology (records renamed, retagged, exited,
    /// archived, added, removed, down to none); after each, a capture overwriting
    /// the previous step's spent checkpoint equals a capture from nothing.
    #[test]
    fn a_capture_into_a_spent_checkpoint_is_a_fresh_capture() {
        let mut state = crate::reactor::test_state();
        state.config.recovery.terminal_text = crate::config::schema::TerminalText::Plain;
        state.config.recovery.text_max_age_seconds = 60;
        let s = state.topology.create_session("work".into()).unwrap();
        let w = state.topology.create_window(s, "w".into(), 41, 2).unwrap();
        for _ in 0..3 {
            pane(&mut state, w, s, Layer::Tiled);
        }
        pane(&mut state, w, s, float());
        let at = Timestamp(1_800_000_000_000);
        type Step = fn(&mut State);
        let steps: &[(&str, Step)] = &[
            ("unchanged", |_| {}),
            ("renamed and retagged", |state| {
                let s = state.topology.sessions.values_mut().next().unwrap();
                s.name = "a longer session name".into();
                let w = state.topology.windows.values_mut().next().unwrap();
                w.name = "x".into();
                w.revision += 1;
                let mut panes = state.topology.panes.values_mut();
                let p = panes.next().unwrap();
                p.tags.remove("owner");
                let p = panes.next().unwrap();
                p.tags
                    .insert("role".into(), "a much longer tag value".into());
                p.tags.insert("zz".into(), "z".into());
            }),
            ("exited and archived", |state| {
                let ids: Vec<_> = state.topology.panes.keys().copied().collect();
                state.topology.panes.get_mut(&ids[0]).unwrap().state = PaneState::Exited {
                    exit_code: None,
                    signal: Some("SIGKILL".into()),
                };
                state
                    .recovery
                    .archives
                    .insert(ids[0], super::tests::interrupted_archive());
            }),
            ("more of everything", |state| {
                let s = state.topology.create_session("second".into()).unwrap();
                for name in ["a", "b"] {
                    let w = state.topology.create_window(s, name.into(), 41, 2).unwrap();
                    pane(state, w, s, Layer::Tiled);
                    pane(state, w, s, Layer::Tiled);
                    pane(state, w, s, float());
                }
            }),
            ("a pane gone", |state| {
                let id = *state.topology.panes.keys().nth(1).unwrap();
                state.topology.remove_pane(id).unwrap();
            }),
            ("a session gone", |state| {
                let s = *state.topology.sessions.keys().next().unwrap();
                state.topology.remove_session(s);
            }),
            ("text off", |state| {
                state.config.recovery.terminal_text = crate::config::schema::TerminalText::Off;
            }),
            ("nothing left", |state| {
                let sessions: Vec<_> = state.topology.sessions.keys().copied().collect();
                for s in sessions {
                    state.topology.remove_session(s);
                }
            }),
        ];
        let (first, _) = state.capture_for_write(at, Shutdown::Open, None);
        let mut kept = spent(first);
        for (what, step) in steps {
            step(&mut state);
            let fresh = state.capture(at, Shutdown::Open);
            let (reused, _) = state.capture_for_write(at, Shutdown::Open, Some(kept));
            assert_eq!(*reused, fresh, "{what}");
            kept = spent(reused);
        }
        assert!(kept.panes.is_empty() && kept.sessions.is_empty());
    }
}
