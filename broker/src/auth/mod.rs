//! Authentication and authorization (docs/security.md).
//!
//! * [`users`] — configured principals, their tokens and permissions.

pub mod users;
