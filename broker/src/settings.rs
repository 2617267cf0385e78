//! How a broker setting is declared: once, with its command-line flag, its
//! TOML file key, its default, its check and its help text.
//!
//! A section of settings (the broker's own in [`crate::config`], the
//! cluster's next to the cluster code) is one `settings!` block. Each
//! entry gives
//!
//! - the help text (doc comment) and the flag (`#[arg(...)]`, clap's
//!   syntax; `#[arg(skip)]` for a key only the file has);
//! - the given value: its name is the file key and, with `-` for `_`, the
//!   flag; its type is `Option<T>` for a value, `bool` for a switch and
//!   `Vec<T>` for a repeatable flag or a file list;
//! - after `=>`, the resolved field, its type and the expression that
//!   computes it from the given value (by its name): the default, the
//!   conversion (milliseconds to a `Duration` with [`millis`], text to an
//!   enum) and the check ([`check`]), whose `Err(message)` stops startup
//!   with `?`.
//!
//! An entry without `=> ...` is only given (several of them resolve into
//! one field), and an entry that starts with `=>` is such a field: its
//! expression may use any given value and any field resolved above it.
//! The field's doc is the flag's unless `=>` is followed by its own.
//!
//! The block generates the given struct (`clap::Args`, so the binary's
//! `Cli` flattens it, and [`Settings`], so [`layered`] reads it from the
//! file and lays the flags over it: a flag given on the command line wins
//! over the file, which wins over the default) and the resolved struct
//! with `resolve_fields`, which each section wraps with the checks that
//! span settings.
//!
//! # Adding a setting
//!
//! One entry in the section's block; the broker then reads
//! `config.fetch_wait`:
//!
//! ```text
//! /// Longest wait of a FETCH for new records, in milliseconds. [default: 500]
//! #[arg(long, value_name = "MS")]
//! fetch_wait_ms: Option<u64> => fetch_wait: Duration =
//!     check(millis(fetch_wait_ms, 500), |d| !d.is_zero(), "fetch_wait_ms must be positive")?,
//! ```
//!
//! That is `--fetch-wait-ms 200` on the command line, `fetch_wait_ms = 200`
//! in the file, and a line in `--help`. Document it where the section's
//! settings are listed (docs/).

use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};

/// A configuration problem found at startup.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The config file is not valid TOML for this broker.
    #[error("invalid config file {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A value is out of range.
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// A section of given settings: what `settings!` generates for its given
/// struct. A tuple of sections is a section, so the assembly point reads
/// one file holding the keys of all of them.
pub trait Settings: Default {
    /// The file keys, in declaration order.
    fn keys() -> Vec<&'static str>;
    /// Reads the value of `key` from the file; `false` when the key is
    /// not this section's.
    fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error>;
    /// These values (the flags) over `lower` (the file's).
    fn over(self, lower: Self) -> Self;
}

impl<A: Settings, B: Settings> Settings for (A, B) {
    fn keys() -> Vec<&'static str> {
        let mut keys = A::keys();
        keys.extend(B::keys());
        keys
    }

    fn read<'de, M: MapAccess<'de>>(&mut self, key: &str, map: &mut M) -> Result<bool, M::Error> {
        Ok(self.0.read(key, map)? || self.1.read(key, map)?)
    }

    fn over(self, lower: Self) -> Self {
        (self.0.over(lower.0), self.1.over(lower.1))
    }
}

/// How a flag's value lies over the file's.
pub trait Layer {
    /// `self` (from the command line) over `lower` (from the file).
    fn over(self, lower: Self) -> Self;
}

impl<T> Layer for Option<T> {
    /// A flag given wins.
    fn over(self, lower: Self) -> Self {
        self.or(lower)
    }
}

impl Layer for bool {
    /// A switch is on when either turns it on.
    fn over(self, lower: Self) -> Self {
        self || lower
    }
}

impl<T> Layer for Vec<T> {
    /// Flags replace the file's list rather than adding to it.
    fn over(self, lower: Self) -> Self {
        if self.is_empty() {
            lower
        } else {
            self
        }
    }
}

/// `value` if `ok` holds for it, else the error `message` (an entry's check).
pub fn check<T>(value: T, ok: impl FnOnce(&T) -> bool, message: &str) -> Result<T, String> {
    match ok(&value) {
        true => Ok(value),
        false => Err(message.to_owned()),
    }
}

/// A duration given in milliseconds, or `default_ms`.
pub fn millis(given: Option<u64>, default_ms: u64) -> Duration {
    Duration::from_millis(given.unwrap_or(default_ms))
}

/// The settings given as `flags`, over those of the TOML file at `file`
/// when there is one.
pub fn layered<S: Settings>(flags: S, file: Option<&Path>) -> Result<S, ConfigError> {
    let from_file = match file {
        Some(path) => read_file(path)?,
        None => S::default(),
    };
    Ok(flags.over(from_file))
}

fn read_file<S: Settings>(path: &Path) -> Result<S, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    toml::from_str::<File<S>>(&text)
        .map(|file| file.0)
        .map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// A TOML file of settings `S`: a table of their keys, any other key
/// refused (naming the known ones).
struct File<S>(S);

impl<'de, S: Settings> de::Deserialize<'de> for File<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(FileVisitor(PhantomData))
    }
}

struct FileVisitor<S>(PhantomData<S>);

impl<'de, S: Settings> Visitor<'de> for FileVisitor<S> {
    type Value = File<S>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a table of settings")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<File<S>, A::Error> {
        let mut settings = S::default();
        while let Some(key) = map.next_key_seed(Key::<S>(PhantomData))? {
            if !settings.read(&key, &mut map)? {
                return Err(de::Error::custom(format!("no section reads key `{key}`")));
            }
        }
        Ok(File(settings))
    }
}

/// A key of the file, refused unless some section declares it (the
/// error is raised while the key is read, so it points at the key).
struct Key<S>(PhantomData<S>);

impl<'de, S: Settings> DeserializeSeed<'de> for Key<S> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        deserializer.deserialize_identifier(self)
    }
}

impl<'de, S: Settings> Visitor<'de> for Key<S> {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a setting name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<String, E> {
        let keys = S::keys();
        if keys.contains(&key) {
            return Ok(key.to_owned());
        }
        // serde wants the list for the whole program's life; this is the
        // error that stops startup, built once.
        Err(E::unknown_field(key, Vec::leak(keys)))
    }
}

/// Declares a section of settings; see the [module documentation](self).
macro_rules! settings {
    (
        $(#[$given_meta:meta])*
        $given_vis:vis struct $Given:ident;
        $(#[$resolved_meta:meta])*
        $resolved_vis:vis struct $Resolved:ident;
        $($entries:tt)*
    ) => {
        $crate::settings::settings!(@entry
            [$(#[$given_meta])* $given_vis struct $Given]
            [$(#[$resolved_meta])* $resolved_vis struct $Resolved]
            given[] resolved[] keys[] fields[] steps[]
            $($entries)*
        );
    };

    // A given setting with its resolved field, which has its own doc.
    (@entry $g:tt $r:tt
        given[$($given:tt)*] resolved[$($resolved:tt)*] keys[$($key:ident)*] fields[$($field:ident)*] steps[$($step:tt)*]
        $(#[doc = $doc:literal])* #[arg($($arg:tt)*)] $name:ident : $gty:ty
        => $(#[doc = $rdoc:literal])+ $res:ident : $rty:ty = $value:expr,
        $($rest:tt)*
    ) => {
        $crate::settings::settings!(@entry $g $r
            given[$($given)* $(#[doc = $doc])* #[arg($($arg)*)] pub $name: $gty,]
            resolved[$($resolved)* $(#[doc = $rdoc])+ pub $res: $rty,]
            keys[$($key)* $name] fields[$($field)* $res]
            steps[$($step)* let $res: $rty = $value;]
            $($rest)*
        );
    };

    // A given setting with its resolved field, documented as the flag.
    (@entry $g:tt $r:tt
        given[$($given:tt)*] resolved[$($resolved:tt)*] keys[$($key:ident)*] fields[$($field:ident)*] steps[$($step:tt)*]
        $(#[doc = $doc:literal])* #[arg($($arg:tt)*)] $name:ident : $gty:ty
        => $res:ident : $rty:ty = $value:expr,
        $($rest:tt)*
    ) => {
        $crate::settings::settings!(@entry $g $r
            given[$($given)* $(#[doc = $doc])* #[arg($($arg)*)] pub $name: $gty,]
            resolved[$($resolved)* $(#[doc = $doc])* pub $res: $rty,]
            keys[$($key)* $name] fields[$($field)* $res]
            steps[$($step)* let $res: $rty = $value;]
            $($rest)*
        );
    };

    // A given setting without a field of its own.
    (@entry $g:tt $r:tt
        given[$($given:tt)*] resolved[$($resolved:tt)*] keys[$($key:ident)*] fields[$($field:ident)*] steps[$($step:tt)*]
        $(#[doc = $doc:literal])* #[arg($($arg:tt)*)] $name:ident : $gty:ty,
        $($rest:tt)*
    ) => {
        $crate::settings::settings!(@entry $g $r
            given[$($given)* $(#[doc = $doc])* #[arg($($arg)*)] pub $name: $gty,]
            resolved[$($resolved)*]
            keys[$($key)* $name] fields[$($field)*]
            steps[$($step)*]
            $($rest)*
        );
    };

    // A field resolved from several given settings.
    (@entry $g:tt $r:tt
        given[$($given:tt)*] resolved[$($resolved:tt)*] keys[$($key:ident)*] fields[$($field:ident)*] steps[$($step:tt)*]
        => $(#[doc = $rdoc:literal])+ $res:ident : $rty:ty = $value:expr,
        $($rest:tt)*
    ) => {
        $crate::settings::settings!(@entry $g $r
            given[$($given)*]
            resolved[$($resolved)* $(#[doc = $rdoc])+ pub $res: $rty,]
            keys[$($key)*] fields[$($field)* $res]
            steps[$($step)* let $res: $rty = $value;]
            $($rest)*
        );
    };

    // Every entry read: the two structs.
    (@entry
        [$(#[$given_meta:meta])* $given_vis:vis struct $Given:ident]
        [$(#[$resolved_meta:meta])* $resolved_vis:vis struct $Resolved:ident]
        given[$($given:tt)*] resolved[$($resolved:tt)*] keys[$($key:ident)*] fields[$($field:ident)*] steps[$($step:tt)*]
    ) => {
        $(#[$given_meta])*
        #[derive(Debug, Clone, Default, clap::Args)]
        $given_vis struct $Given {
            $($given)*
        }

        impl $crate::settings::Settings for $Given {
            fn keys() -> Vec<&'static str> {
                vec![$(stringify!($key)),*]
            }

            fn read<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                match key {
                    $(stringify!($key) => self.$key = map.next_value()?,)*
                    _ => return Ok(false),
                }
                Ok(true)
            }

            fn over(self, lower: Self) -> Self {
                $Given {
                    $($key: $crate::settings::Layer::over(self.$key, lower.$key),)*
                }
            }
        }

        $(#[$resolved_meta])*
        $resolved_vis struct $Resolved {
            $($resolved)*
        }

        impl $Resolved {
            /// Every field from the given settings: the value given or the
            /// default, converted and checked, in declaration order.
            fn resolve_fields(given: $Given) -> Result<$Resolved, String> {
                let $Given { $($key),* } = given;
                $($step)*
                Ok($Resolved { $($field),* })
            }
        }
    };
}

pub(crate) use settings;

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    settings! {
        /// Given.
        pub struct Given;
        /// Resolved.
        #[derive(Debug, PartialEq, Eq)]
        pub struct Resolved;

        /// A count. [default: 3]
        #[arg(long, value_name = "N")]
        count: Option<u32> => count: u32 = check(count.unwrap_or(3), |n| *n > 0, "count must be positive")?,
        /// A switch.
        #[arg(long)]
        on: bool => on: bool = on,
        /// A list.
        #[arg(long = "item")]
        items: Vec<String>,
        /// Only in the file.
        #[arg(skip)]
        extra: Option<String>,
        =>
        /// The items and the extra one.
        all: Vec<String> = items.into_iter().chain(extra).collect(),
    }

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        given: Given,
    }

    fn resolve(args: &[&str], file: &str) -> Result<Resolved, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.toml");
        std::fs::write(&path, file).unwrap();
        let cli = Cli::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap();
        let given = layered(cli.given, Some(&path)).map_err(|e| e.to_string())?;
        Resolved::resolve_fields(given)
    }

    #[test]
    fn flags_win_over_the_file_over_the_default() {
        let r = resolve(&[], "").unwrap();
        assert_eq!((r.count, r.on, r.all), (3, false, vec![]));
        let r = resolve(
            &[],
            "count = 5\non = true\nitems = [\"a\"]\nextra = \"x\"\n",
        )
        .unwrap();
        assert_eq!(
            (r.count, r.on, r.all.clone()),
            (5, true, vec!["a".into(), "x".into()])
        );
        let r = resolve(
            &["--count", "7", "--item", "b"],
            "count = 5\nitems = [\"a\"]\n",
        )
        .unwrap();
        assert_eq!((r.count, r.all), (7, vec!["b".to_string()]));
    }

    #[test]
    fn checks_and_unknown_keys_fail() {
        assert_eq!(
            resolve(&["--count", "0"], "").unwrap_err(),
            "count must be positive"
        );
        let e = resolve(&[], "cuont = 1\n").unwrap_err();
        assert!(
            e.contains("unknown field `cuont`, expected one of `count`, `on`, `items`, `extra`"),
            "{e}"
        );
        let e = resolve(&[], "count = \"x\"\n").unwrap_err();
        assert!(
            e.contains("line 1, column 9") && e.contains("expected u32"),
            "{e}"
        );
    }
}
