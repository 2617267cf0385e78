//! A group's subscription selector (`topic=`, `topics=` or `pattern=`) and
//! its expansion into concrete topic partitions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::topics::{is_internal_topic, is_valid_topic_name, TopicRegistry};

/// Longest glob pattern accepted by `REGISTER_GROUP pattern=`.
pub const MAX_PATTERN_LEN: usize = 249;

/// What a group subscribes to; stored durably with the registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Selector {
    /// One topic (`topic=`): replies use `assignments=[..]`.
    Topic(String),
    /// A fixed list of topics (`topics=a,b`), sorted and deduplicated.
    Topics(Vec<String>),
    /// Every topic whose name matches a glob (`*`, `?`), now and later.
    Pattern(String),
}

impl Selector {
    /// True when `topic` is selected (internal topics never are).
    pub fn covers(&self, topic: &str) -> bool {
        if is_internal_topic(topic) {
            return false;
        }
        match self {
            Selector::Topic(t) => t == topic,
            Selector::Topics(ts) => ts.iter().any(|t| t == topic),
            Selector::Pattern(p) => glob_match(p, topic),
        }
    }

    /// The topic of a single-topic group.
    pub fn single_topic(&self) -> Option<&str> {
        match self {
            Selector::Topic(t) => Some(t),
            _ => None,
        }
    }

    /// The selector kind as REGISTER_GROUP names it.
    pub fn kind(&self) -> &'static str {
        match self {
            Selector::Topic(_) => "topic",
            Selector::Topics(_) => "topics",
            Selector::Pattern(_) => "pattern",
        }
    }

    /// The selector value as REGISTER_GROUP takes it.
    pub fn value(&self) -> String {
        match self {
            Selector::Topic(t) | Selector::Pattern(t) => t.clone(),
            Selector::Topics(ts) => ts.join(","),
        }
    }

    /// The concrete expansion against the live topics: topic name to
    /// partition count, for every selected topic that exists.
    pub fn expand(&self, topics: &TopicRegistry) -> BTreeMap<String, u32> {
        match self {
            Selector::Topic(t) => topics
                .get(t)
                .map(|topic| (t.clone(), topic.def.partitions))
                .into_iter()
                .collect(),
            Selector::Topics(ts) => ts
                .iter()
                .filter_map(|t| topics.get(t).map(|topic| (t.clone(), topic.def.partitions)))
                .collect(),
            Selector::Pattern(_) => topics
                .list()
                .iter()
                .filter(|topic| self.covers(&topic.def.name))
                .map(|topic| (topic.def.name.clone(), topic.def.partitions))
                .collect(),
        }
    }
}

/// True for a usable glob: 1-249 bytes of topic-name characters, `*` and `?`.
pub fn is_valid_pattern(pattern: &str) -> bool {
    !pattern.is_empty()
        && pattern.len() <= MAX_PATTERN_LEN
        && pattern.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'=' | b'*' | b'?')
        })
}

/// Parses a `topics=` list: comma-separated valid names, at least one;
/// returns them sorted and deduplicated, or the first invalid name.
pub fn parse_topic_list(value: &str) -> Result<Vec<String>, String> {
    let mut names: Vec<String> = Vec::new();
    for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !is_valid_topic_name(name) {
            return Err(name.to_owned());
        }
        names.push(name.to_owned());
    }
    if names.is_empty() {
        return Err(value.to_owned());
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// Glob match over bytes: `*` matches any run (including none), `?` exactly
/// one byte, everything else itself. Linear-time backtracking on the last `*`.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_rules() {
        for (p, n) in [
            ("*", "orders"),
            ("ord*", "orders"),
            ("*ers", "orders"),
            ("o?ders", "orders"),
            ("o*d*s", "orders"),
            ("orders", "orders"),
            ("a*b*c", "aXbYbZc"),
        ] {
            assert!(glob_match(p, n), "{p} {n}");
        }
        for (p, n) in [
            ("ord", "orders"),
            ("?", ""),
            ("a*c", "ab"),
            ("x*", "orders"),
        ] {
            assert!(!glob_match(p, n), "{p} {n}");
        }
    }

    #[test]
    fn selectors_never_cover_internal_topics() {
        assert!(!Selector::Pattern("*".into()).covers("__consumer_offsets"));
        assert!(Selector::Pattern("*".into()).covers("a"));
        assert!(Selector::Topics(vec!["a".into(), "b".into()]).covers("b"));
    }

    #[test]
    fn topic_lists_and_patterns_are_validated() {
        assert_eq!(parse_topic_list("b,a,b").unwrap(), vec!["a", "b"]);
        assert!(parse_topic_list(",").is_err());
        assert_eq!(parse_topic_list("a,b/c").unwrap_err(), "b/c");
        assert!(is_valid_pattern("orders.*"));
        assert!(!is_valid_pattern("a b"));
        assert!(!is_valid_pattern(""));
    }
}
