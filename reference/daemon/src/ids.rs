//! Resource IDs: `s<n>`, `w<n>`, `p<n>` with `<n>` a decimal safe integer without a
//! leading zero. Counters are monotonic per daemon start and never reuse a number.

use std::fmt;

pub use vx_format::limits::MAX_SAFE_INTEGER;

macro_rules! id_type {
    ($name:ident, $prefix:literal, $kind:literal) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u64);

        impl $name {
            pub const PREFIX: char = $prefix;
            pub const KIND: &'static str = $kind;

            pub fn parse(text: &str) -> Option<Self> {
                parse_numbered(text, $prefix).map($name)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", $prefix, self.0)
            }
        }
    };
}

id_type!(SessionId, 's', "session");
id_type!(WindowId, 'w', "window");
id_type!(PaneId, 'p', "pane");

fn parse_numbered(text: &str, prefix: char) -> Option<u64> {
    vx_format::ids::parse_resource_id(text, prefix as u8)
}

/// A monotonic counter that hands out each number once.
#[derive(Debug, Default)]
pub struct Counter(u64);

impl Counter {
    pub fn take(&mut self) -> Option<u64> {
        if self.0 > MAX_SAFE_INTEGER {
            return None;
        }
        let n = self.0;
        self.0 += 1;
        Some(n)
    }

    pub fn peek(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_canonical_ids_only() {
        assert_eq!(PaneId::parse("p0"), Some(PaneId(0)));
        assert_eq!(PaneId::parse("p17"), Some(PaneId(17)));
        assert_eq!(PaneId::parse("p01"), None);
        assert_eq!(PaneId::parse("p"), None);
        assert_eq!(PaneId::parse("s1"), None);
        assert_eq!(PaneId::parse("p-1"), None);
        assert_eq!(
            PaneId::parse("p9007199254740991"),
            Some(PaneId(MAX_SAFE_INTEGER))
        );
        assert_eq!(PaneId::parse("p9007199254740992"), None);
        assert_eq!(SessionId(3).to_string(), "s3");
    }

    #[test]
    fn counter_never_repeats() {
        let mut c = Counter::default();
        assert_eq!(c.take(), Some(0));
        assert_eq!(c.take(), Some(1));
    }
}
