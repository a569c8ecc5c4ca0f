//! A pane's tags: at most 16 `key → value` pairs (RFC §6 `pane.tag`), kept as a
//! vector sorted by key. A `BTreeMap` allocated a whole leaf node (~540 bytes) for
//! the one `owner` tag nearly every pane has; 33 330 restored panes held ~18 MiB of
//! them (issue 14).

/// Sorted by key, keys unique; iteration is in key order, as a `BTreeMap`'s was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags(Vec<(String, String)>);

impl Tags {
    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    pub fn get(&self, key: &str) -> Option<&String> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key`, replacing its value if present.
    pub fn insert(&mut self, key: String, value: String) {
        match self.find(&key) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => {
                // Exact growth: the default first growth is four pairs (192 bytes)
                // for the one `owner` tag nearly every pane has.
                self.0.reserve_exact(1);
                self.0.insert(i, (key, value));
            }
        }
    }

    pub fn remove(&mut self, key: &str) {
        if let Ok(i) = self.find(key) {
            self.0.remove(i);
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&String, &String)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
}

/// Later pairs replace earlier ones with the same key, as in a map.
impl FromIterator<(String, String)> for Tags {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        let mut tags = Tags::default();
        for (k, v) in pairs {
            tags.insert(k, v);
        }
        tags
    }
}

impl<const N: usize> From<[(String, String); N]> for Tags {
    fn from(pairs: [(String, String); N]) -> Self {
        pairs.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_sorted_map() {
        let mut t: Tags = [("b".into(), "1".into()), ("a".into(), "2".into())].into();
        t.insert("b".into(), "3".into());
        t.insert("c".into(), "4".into());
        assert_eq!(t.len(), 3);
        assert_eq!(t.get("b").map(String::as_str), Some("3"));
        assert!(t.contains_key("a") && !t.contains_key("z"));
        t.remove("a");
        t.remove("z");
        let keys: Vec<&str> = t.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "c"]);
        assert!(!t.is_empty());
        let one: Tags = [("owner".into(), "x".into())].into();
        assert_eq!(one.0.capacity(), 1, "one tag holds one pair");
    }
}
