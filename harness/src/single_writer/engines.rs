//! The engine set the profile declares (`[single_writer] known_engines`, each
//! engine's id class) and the engine the missing-program row launches
//! (`missing_program_engine`). The seed names engines only by example ("claude:<uuid>,
//! opencode:<ses_…>"), so which names an implementation knows is its own: the kit's
//! corpus and rows are written against the seed's three (claude and gemini take
//! uuids, opencode mints `ses_…` ids) and the fixture's `ghost` and `nosuch`, and a
//! key whose engine the profile's set judges otherwise is checked with a stand-in
//! engine of the kind the row is about (a known one of the same id class, or a name
//! the implementation does not know), so every row still tests what it says.

use std::collections::BTreeMap;

/// The seed's engines and their id classes: the default of `known_engines`.
pub const KIT_ENGINES: [(&str, &str); 3] =
    [("claude", "uuid"), ("gemini", "uuid"), ("opencode", "ses")];
/// The id classes an engine may have: the broker mints a uuid and pins it
/// (`--session-id`), or the engine mints its own `ses_…` id (placeholder first).
pub const CLASSES: [&str; 2] = ["uuid", "ses"];
/// The fixture's engine whose program does not exist (the default of
/// `missing_program_engine`), as the features name it.
pub const KIT_MISSING: &str = "ghost";
/// The engine name the live rows use for one no implementation knows.
pub const KIT_UNKNOWN: &str = "nosuch";
/// The engines the live rows open, with the class each must have: the seed's own
/// examples, which the suite's engines fixture runs as its stand-in agent.
pub const LIVE_ENGINES: [(&str, &str); 2] = [("claude", "uuid"), ("opencode", "ses")];

/// The kit's engine grammar, without its length cap (`engine_max_bytes` is a pin):
/// `[a-z][a-z0-9_-]*`.
pub fn is_engine_name(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b.first(), Some(b'a'..=b'z'))
        && b[1..]
            .iter()
            .all(|c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-'))
}

/// The profile's engine set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engines {
    /// Engine name → id class.
    pub known: BTreeMap<String, String>,
    /// The engine the missing-program row opens.
    pub missing: String,
}

pub fn kit_known() -> BTreeMap<String, String> {
    KIT_ENGINES
        .iter()
        .map(|(e, c)| (e.to_string(), c.to_string()))
        .collect()
}

pub fn kit_missing() -> String {
    KIT_MISSING.into()
}

impl Engines {
    /// Checks the two keys: names in the kit's grammar, classes `uuid` or `ses`;
    /// with the broker part claimed, the live rows' engines with their classes and a
    /// missing-program engine that is not one of them. Errors name the key and value.
    pub fn check(&self, live: bool) -> Result<(), String> {
        for (e, c) in &self.known {
            if !is_engine_name(e) {
                return Err(format!(
                    "[single_writer] known_engines: {e:?} is not an engine name ([a-z][a-z0-9_-]*)"
                ));
            }
            if !CLASSES.contains(&c.as_str()) {
                return Err(format!(
                    "[single_writer] known_engines.{e} = {c:?}: the id class is \"uuid\" (the broker mints and pins it) or \"ses\" (the engine mints ses_… ids)"
                ));
            }
        }
        for class in CLASSES {
            if !self.known.values().any(|c| c == class) {
                return Err(format!(
                    "[single_writer] known_engines: no engine of id class {class:?} (the seed's examples have one of each)"
                ));
            }
        }
        if !is_engine_name(&self.missing) {
            return Err(format!(
                "[single_writer] missing_program_engine = {:?}: not an engine name ([a-z][a-z0-9_-]*)",
                self.missing
            ));
        }
        if !live {
            return Ok(());
        }
        for (e, class) in LIVE_ENGINES {
            if self.known.get(e).map(String::as_str) != Some(class) {
                return Err(format!(
                    "[single_writer] known_engines: the live rows open {e} keys, so {e} = {class:?} must be known (the seed's own example engines)"
                ));
            }
            if self.missing == e {
                return Err(format!(
                    "[single_writer] missing_program_engine = {e:?}: the live rows launch {e} sessions; name another engine, whose program the setup hook points at {{missing_program}}"
                ));
            }
        }
        Ok(())
    }

    /// A name the implementation does not know, like `like`: itself when unknown,
    /// else it with `x` appended until unknown (never the missing-program engine,
    /// which the implementation may know).
    pub fn unknown_like(&self, like: &str) -> String {
        let mut name = like.to_string();
        while self.known.contains_key(&name) || name == self.missing {
            name.push('x');
        }
        name
    }

    /// The engine a kit engine of class `class` stands for: itself when the profile
    /// knows it with that class, else the `nth` of the profile's engines of the class
    /// that the kit does not name itself (so two kit engines get two stand-ins while
    /// there are enough), the last one when there are fewer.
    fn stand_in(&self, kit: &str, class: &str) -> Option<String> {
        if self.known.get(kit).map(String::as_str) == Some(class) {
            return Some(kit.to_string());
        }
        let kit_known = kit_known();
        let nth = KIT_ENGINES
            .iter()
            .filter(|(e, c)| *c == class && self.known.get(*e).map(String::as_str) != Some(class))
            .position(|(e, _)| *e == kit)
            .unwrap_or(0);
        let free: Vec<&String> = self
            .known
            .iter()
            .filter(|(e, c)| *c == class && kit_known.get(*e) != Some(c))
            .map(|(e, _)| e)
            .collect();
        free.get(nth)
            .or(free.last())
            .map(|e| e.to_string())
            .or_else(|| {
                // Every engine of the class is one the kit names too: reuse one.
                self.known
                    .iter()
                    .find(|(_, c)| *c == class)
                    .map(|(e, _)| e.clone())
            })
    }

    /// The key of the kit's corpus as the profile's engine set reads it: unchanged
    /// when its engine is judged alike (known with the same class, or unknown, by
    /// both); a kit engine the profile does not know (or knows with another class)
    /// becomes a profile engine of the kit's class; an engine the kit does not know
    /// but the profile does becomes a name neither knows. `None` when the profile has
    /// no engine of the class the key needs.
    pub fn corpus_key(&self, key: &str) -> Option<String> {
        let Some((engine, id)) = key.split_once(':') else {
            return Some(key.to_string());
        };
        let kit = kit_known();
        let (kit_class, own_class) = (kit.get(engine), self.known.get(engine));
        if kit_class == own_class {
            return Some(key.to_string());
        }
        let engine = match kit_class {
            Some(class) => self.stand_in(engine, class)?,
            None => self.unknown_like(engine),
        };
        Some(format!("{engine}:{id}"))
    }

    /// The key a live row opens: the fixture's missing-program engine as the
    /// profile names it, the fixture's unknown engine as a name the profile does not
    /// know; every other key unchanged.
    pub fn live_key(&self, key: &str) -> String {
        match key.split_once(':') {
            Some((KIT_MISSING, id)) => format!("{}:{id}", self.missing),
            Some((KIT_UNKNOWN, id)) => format!("{}:{id}", self.unknown_like(KIT_UNKNOWN)),
            _ => key.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const U: &str = "6a73c0de-1234-4abc-8def-0123456789ab";

    fn engines(known: &[(&str, &str)], missing: &str) -> Engines {
        Engines {
            known: known
                .iter()
                .map(|(e, c)| (e.to_string(), c.to_string()))
                .collect(),
            missing: missing.into(),
        }
    }

    #[test]
    fn the_kit_set_leaves_every_key_as_it_is() {
        let e = engines(&KIT_ENGINES, KIT_MISSING);
        e.check(true).unwrap();
        for k in [
            format!("claude:{U}"),
            format!("codex:{U}"),
            "a_b:c".into(),
            "claude".into(),
        ] {
            assert_eq!(e.corpus_key(&k), Some(k.clone()));
        }
        assert_eq!(e.live_key(&format!("ghost:{U}")), format!("ghost:{U}"));
        assert_eq!(e.live_key(&format!("nosuch:{U}")), format!("nosuch:{U}"));
    }

    /// A broker that knows codex and not gemini: codex keys stand for an unknown
    /// engine no more (a name neither knows is used), gemini keys run under codex.
    #[test]
    fn a_set_of_its_own_maps_the_corpus_by_kind() {
        let e = engines(
            &[("claude", "uuid"), ("codex", "uuid"), ("opencode", "ses")],
            "codex",
        );
        e.check(true).unwrap();
        assert_eq!(
            e.corpus_key(&format!("codex:{U}")),
            Some(format!("codexx:{U}"))
        );
        assert_eq!(
            e.corpus_key(&format!("gemini:{U}")),
            Some(format!("codex:{U}"))
        );
        assert_eq!(
            e.corpus_key(&format!("claude:{U}")),
            Some(format!("claude:{U}"))
        );
        assert_eq!(e.live_key(&format!("ghost:{U}")), format!("codex:{U}"));
        // The unknown name is never the missing-program engine.
        let e = engines(&[("claude", "uuid"), ("opencode", "ses")], "nosuch");
        assert_eq!(e.live_key(&format!("nosuch:{U}")), format!("nosuchx:{U}"));
    }

    /// Two kit engines of one class the profile lacks get two stand-ins.
    #[test]
    fn two_missing_kit_engines_get_two_stand_ins() {
        let e = engines(
            &[("codex", "uuid"), ("qwen", "uuid"), ("crush", "ses")],
            "ghost",
        );
        e.check(false).unwrap();
        assert_eq!(e.corpus_key("claude:x"), Some("codex:x".into()));
        assert_eq!(e.corpus_key("gemini:x"), Some("qwen:x".into()));
        assert_eq!(e.corpus_key("opencode:ses_a"), Some("crush:ses_a".into()));
        // Opencode known with the other class is a stand-in too.
        let e = engines(&[("claude", "uuid"), ("opencode", "uuid")], "ghost");
        assert!(e.check(false).is_err());
        assert_eq!(e.corpus_key("opencode:ses_a"), None);
    }

    #[test]
    fn bad_sets_are_refused_naming_the_key_and_value() {
        let e = engines(&[("Claude", "uuid"), ("opencode", "ses")], "ghost");
        assert!(e.check(false).unwrap_err().contains("\"Claude\""));
        let e = engines(&[("claude", "guid"), ("opencode", "ses")], "ghost");
        assert!(e
            .check(false)
            .unwrap_err()
            .contains("known_engines.claude = \"guid\""));
        let e = engines(&[("codex", "uuid"), ("opencode", "ses")], "ghost");
        e.check(false).unwrap();
        assert!(e.check(true).unwrap_err().contains("claude"));
        let e = engines(&KIT_ENGINES, "claude");
        assert!(e
            .check(true)
            .unwrap_err()
            .contains("missing_program_engine = \"claude\""));
        let e = engines(&KIT_ENGINES, "Ghost");
        assert!(e.check(false).unwrap_err().contains("\"Ghost\""));
    }
}
