//! Authentication and authorization (docs/security.md).
//!
//! * [`users`] — configured principals, their tokens and permissions;
//! * [`permissions`] — what each command needs (the documented table);
//! * [`policy`] — a topic's `auth_policy` and ACLs;
//! * [`session`] — a connection's principal and the gate every request
//!   passes before its handler.

pub mod permissions;
pub mod policy;
pub mod session;
pub mod users;

pub use permissions::Access;
pub use session::{Admission, Session};
