//! Configured users: the `[[users]]` tables of the TOML file, their startup
//! validation, and token verification.
//!
//! Tokens are kept only as SHA-256 digests and compared in constant time;
//! no `Debug` output ever shows a token or a digest.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// One coarse permission of the authorization table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Topic administration (CREATE, DELETE, …) and cluster commands.
    Admin,
    /// Reading topics.
    TopicRead,
    /// Writing topics.
    TopicWrite,
    /// Consumer groups.
    Group,
    /// Transactions.
    Transaction,
}

impl Permission {
    /// Every permission, in the order of the configuration syntax.
    pub const ALL: [Permission; 5] = [
        Permission::Admin,
        Permission::TopicRead,
        Permission::TopicWrite,
        Permission::Group,
        Permission::Transaction,
    ];

    /// The configuration and wire name (`topic.read`, …).
    pub fn name(self) -> &'static str {
        match self {
            Permission::Admin => "admin",
            Permission::TopicRead => "topic.read",
            Permission::TopicWrite => "topic.write",
            Permission::Group => "group",
            Permission::Transaction => "transaction",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of permissions (`*` is all of them).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Permissions(u8);

impl Permissions {
    /// Every permission (`*`).
    pub fn all() -> Permissions {
        Permissions(Permission::ALL.iter().fold(0, |acc, p| acc | p.bit()))
    }

    /// True when `permission` is in the set.
    pub fn contains(self, permission: Permission) -> bool {
        self.0 & permission.bit() != 0
    }

    /// Parses a configured list; the unknown name on failure.
    fn parse(names: &[String]) -> Result<Permissions, String> {
        let mut set = Permissions::default();
        for name in names {
            if name == "*" {
                set = Permissions::all();
                continue;
            }
            let p = Permission::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .ok_or_else(|| name.clone())?;
            set.0 |= p.bit();
        }
        Ok(set)
    }
}

impl fmt::Debug for Permissions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set()
            .entries(Permission::ALL.iter().filter(|p| self.contains(**p)))
            .finish()
    }
}

/// A `[[users]]` table as written in the TOML file. Every key is optional
/// here so that a missing one is reported by [`Users::from_entries`] with
/// the user's name instead of a bare serde message.
#[derive(Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserEntry {
    principal: Option<String>,
    token: Option<String>,
    token_sha256: Option<String>,
    permissions: Option<Vec<String>>,
}

impl fmt::Debug for UserEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UserEntry")
            .field("principal", &self.principal)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field(
                "token_sha256",
                &self.token_sha256.as_ref().map(|_| "<redacted>"),
            )
            .field("permissions", &self.permissions)
            .finish()
    }
}

/// A validated user: the digest of its token and its permissions.
#[derive(Clone, PartialEq, Eq)]
struct User {
    digest: [u8; 32],
    permissions: Permissions,
}

/// The validated users, by principal.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Users {
    by_principal: BTreeMap<String, User>,
}

impl fmt::Debug for Users {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Principals and permissions only: digests stay out of logs too.
        f.debug_map()
            .entries(
                self.by_principal
                    .iter()
                    .map(|(p, u)| (p, (u.permissions, "token=<redacted>"))),
            )
            .finish()
    }
}

impl Users {
    /// Validates the configured tables (docs/security.md "Authentication");
    /// the error names the user and the problem.
    pub fn from_entries(entries: &[UserEntry]) -> Result<Users, String> {
        let mut by_principal = BTreeMap::new();
        for (i, entry) in entries.iter().enumerate() {
            let principal = entry.principal.as_deref().unwrap_or_default();
            let who = if principal.is_empty() {
                format!("users[{i}]")
            } else {
                format!("user {principal:?}")
            };
            if principal.is_empty() {
                return Err(format!("{who}: principal is missing or empty"));
            }
            if principal.contains(char::is_whitespace) {
                return Err(format!("{who}: principal contains whitespace"));
            }
            if by_principal.contains_key(principal) {
                return Err(format!("{who}: principal is configured twice"));
            }
            let digest = match (&entry.token, &entry.token_sha256) {
                (None, None) => return Err(format!("{who}: needs token or token_sha256")),
                (Some(_), Some(_)) => {
                    return Err(format!("{who}: has both token and token_sha256; keep one"))
                }
                (Some(token), None) if token.is_empty() => {
                    return Err(format!("{who}: token is empty"))
                }
                (Some(token), None) => digest_of(token),
                (None, Some(hex)) => parse_hex_digest(hex)
                    .ok_or_else(|| format!("{who}: token_sha256 must be 64 hexadecimal digits"))?,
            };
            let names = entry.permissions.as_deref().unwrap_or_default();
            if names.is_empty() {
                return Err(format!("{who}: permissions must be a non-empty list"));
            }
            let permissions = Permissions::parse(names).map_err(|unknown| {
                format!(
                    "{who}: unknown permission {unknown:?} (known: admin, topic.read, \
                     topic.write, group, transaction, *)"
                )
            })?;
            by_principal.insert(
                principal.to_owned(),
                User {
                    digest,
                    permissions,
                },
            );
        }
        Ok(Users { by_principal })
    }

    /// True when no user is configured.
    pub fn is_empty(&self) -> bool {
        self.by_principal.is_empty()
    }

    /// The permissions of `principal` when `token` is its token.
    ///
    /// The digest comparison runs in constant time, and an unknown
    /// principal costs the same comparison, so timing tells nothing about
    /// the token.
    pub fn verify(&self, principal: &str, token: &str) -> Option<Permissions> {
        let offered = digest_of(token);
        match self.by_principal.get(principal) {
            Some(user) if bool::from(user.digest.ct_eq(&offered)) => Some(user.permissions),
            Some(_) => None,
            None => {
                let _ = [0u8; 32].ct_eq(&offered);
                None
            }
        }
    }
}

fn digest_of(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn parse_hex_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(principal: &str, token: Option<&str>, sha: Option<&str>, perms: &[&str]) -> UserEntry {
        UserEntry {
            principal: Some(principal.into()),
            token: token.map(Into::into),
            token_sha256: sha.map(Into::into),
            permissions: Some(perms.iter().map(|p| p.to_string()).collect()),
        }
    }

    #[test]
    fn verifies_plain_and_hashed_tokens() {
        // sha256("test")
        let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let users = Users::from_entries(&[
            entry("a", Some("secret"), None, &["group"]),
            entry("b", None, Some(sha), &["*"]),
        ])
        .unwrap();
        let a = users.verify("a", "secret").unwrap();
        assert!(a.contains(Permission::Group) && !a.contains(Permission::Admin));
        assert_eq!(users.verify("b", "test"), Some(Permissions::all()));
        assert_eq!(users.verify("a", "wrong"), None);
        assert_eq!(users.verify("nobody", "secret"), None);
    }

    #[test]
    fn invalid_entries_name_the_user() {
        let bad = |e: UserEntry, needle: &str| {
            let msg = Users::from_entries(&[e]).unwrap_err();
            assert!(msg.contains(needle), "{msg}");
        };
        bad(entry("", Some("t"), None, &["*"]), "users[0]: principal");
        bad(entry("a b", Some("t"), None, &["*"]), "whitespace");
        bad(entry("u", None, None, &["*"]), "user \"u\": needs token");
        bad(entry("u", Some("t"), Some("x"), &["*"]), "both");
        bad(entry("u", None, Some("abc"), &["*"]), "64 hexadecimal");
        bad(entry("u", Some("t"), None, &[]), "non-empty");
        bad(
            entry("u", Some("t"), None, &["root"]),
            "unknown permission \"root\"",
        );
        let twice = Users::from_entries(&[
            entry("u", Some("t"), None, &["*"]),
            entry("u", Some("t"), None, &["*"]),
        ]);
        assert!(twice.unwrap_err().contains("twice"));
    }

    #[test]
    fn debug_never_shows_tokens() {
        let e = entry("u", Some("hunter2"), None, &["*"]);
        assert!(!format!("{e:?}").contains("hunter2"));
        let users = Users::from_entries(&[e]).unwrap();
        let shown = format!("{users:?}");
        assert!(
            shown.contains("\"u\"") && shown.contains("<redacted>"),
            "{shown}"
        );
    }
}
