//! The one error type of the storage layer.

use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the storage layer.
pub type Result<T> = std::result::Result<T, StorageError>;

/// Everything that can go wrong in the storage layer.
///
/// On-disk damage is always reported as [`StorageError::Corruption`] (never a
/// panic, never silently empty data); operating-system failures carry the path
/// they happened on.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system I/O call failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// File or directory the failing call operated on.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },

    /// Data on disk is damaged in a way recovery must not repair silently
    /// (for example a checksum failure followed by valid entries, or a bad
    /// entry inside a sealed segment).
    #[error("corrupt data in {} at byte {position}: {reason}", path.display())]
    Corruption {
        /// The damaged file.
        path: PathBuf,
        /// Byte position in `path` where the damage was found.
        position: u64,
        /// Human-readable description of what is wrong.
        reason: String,
    },

    /// A JSON document (for example `__topic_metadata.json`) is malformed or
    /// has an unsupported format version.
    #[error("invalid document {}: {reason}", path.display())]
    InvalidDocument {
        /// The document's path.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// The caller passed an argument the storage layer cannot accept.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A read asked for an offset outside the retained range of a partition.
    #[error("offset {requested} out of range: earliest={earliest} latest={latest}")]
    OffsetOutOfRange {
        /// The offset that was asked for.
        requested: u64,
        /// First retained offset.
        earliest: u64,
        /// Next offset to be assigned (log end offset).
        latest: u64,
    },

    /// An earlier write or fdatasync failed, so the durable state of the file
    /// is unknown; the object refuses further work until it is reopened (which
    /// runs recovery).
    #[error("{} is unusable after an earlier failure ({reason}); reopen to recover", path.display())]
    Failed {
        /// The log directory or journal file.
        path: PathBuf,
        /// The original failure.
        reason: String,
    },

    /// The object was deleted with `delete()` and can no longer be used.
    #[error("{} has been deleted", path.display())]
    Deleted {
        /// The deleted log directory.
        path: PathBuf,
    },
}

impl StorageError {
    /// Builds an [`StorageError::Io`] for `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        StorageError::Io {
            path: path.into(),
            source,
        }
    }

    /// Builds a [`StorageError::Corruption`].
    pub fn corruption(path: impl Into<PathBuf>, position: u64, reason: impl Into<String>) -> Self {
        StorageError::Corruption {
            path: path.into(),
            position,
            reason: reason.into(),
        }
    }

    /// True if an append failed because the disk (or a quota) is full: the
    /// write was undone and appends work again once space is free.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, StorageError::Io { source, .. } if super::io::is_disk_full(source))
    }

    /// True if this error reports damaged data on disk.
    pub fn is_corruption(&self) -> bool {
        matches!(self, StorageError::Corruption { .. })
    }
}

/// Attaches a path to `io::Result`s.
pub(crate) trait IoContext<T> {
    /// Converts an `io::Error` into [`StorageError::Io`] naming `path`.
    fn ctx(self, path: &Path) -> Result<T>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, path: &Path) -> Result<T> {
        self.map_err(|e| StorageError::io(path, e))
    }
}
