//! A restore's fresh ids for the file's ids, and the `{previous, current}` mapping
//! the reply carries, serialized as it is built.

use crate::ids::{PaneId, SessionId, WindowId};
use crate::stream::Encoded;
use std::collections::BTreeMap;

/// Fresh ids for the file's ids, allocated in numeric source order.
pub(super) struct Ids {
    pub(super) sessions: BTreeMap<u64, SessionId>,
    pub(super) windows: BTreeMap<u64, WindowId>,
    pub(super) panes: BTreeMap<u64, PaneId>,
}

impl Ids {
    // The reader checked every reference, so a miss cannot happen; the fallback
    // keeps these total.
    pub(super) fn session(&self, n: u64) -> SessionId {
        self.sessions.get(&n).copied().unwrap_or(SessionId(n))
    }
    pub(super) fn window(&self, n: u64) -> WindowId {
        self.windows.get(&n).copied().unwrap_or(WindowId(n))
    }
    pub(super) fn pane(&self, n: u64) -> PaneId {
        self.panes.get(&n).copied().unwrap_or(PaneId(n))
    }

    /// The `{previous, current}` mapping of the reply, encoded as it is built: as a
    /// `Value` it was a map per resource (~30 MiB for 33 330 panes), alive beside the
    /// whole restored state at the peak.
    pub(super) fn mapping(&self, checkpoint: &str) -> Encoded {
        let capacity = 64 + 48 * (self.sessions.len() + self.windows.len() + self.panes.len());
        Encoded::of(&Mapping(checkpoint, self), capacity)
    }
}

/// The restore reply (keys in sorted order, as a `Value` prints them).
struct Mapping<'a>(&'a str, &'a Ids);

impl serde::Serialize for Mapping<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let ids = self.1;
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("checkpoint", self.0)?;
        m.serialize_entry("panes", &Pairs('p', &ids.panes))?;
        m.serialize_entry("sessions", &Pairs('s', &ids.sessions))?;
        m.serialize_entry("windows", &Pairs('w', &ids.windows))?;
        m.end()
    }
}

/// `[{"current": "<new id>", "previous": "<prefix><old number>"}, …]`.
struct Pairs<'a, V>(char, &'a BTreeMap<u64, V>);

impl<V: std::fmt::Display> serde::Serialize for Pairs<'_, V> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap as _, SerializeSeq as _};
        struct Pair<'a, V>(char, u64, &'a V);
        impl<V: std::fmt::Display> serde::Serialize for Pair<'_, V> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("current", &format_args!("{}", self.2))?;
                m.serialize_entry("previous", &format_args!("{}{}", self.0, self.1))?;
                m.end()
            }
        }
        let mut seq = s.serialize_seq(Some(self.1.len()))?;
        for (k, v) in self.1 {
            seq.serialize_element(&Pair(self.0, *k, v))?;
        }
        seq.end()
    }
}
