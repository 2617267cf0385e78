//! The Cursus reference broker: a real, standalone Wire v2 broker that every
//! binding of the SDK is tested against.
//!
//! * [`config`] — the broker's settings: flags, TOML file and defaults;
//! * [`settings`] — how a setting is declared once (flag, file key,
//!   default, check, help text) and read with precedence;
//! * [`auth`] — users, AUTH and the authorization of every request;
//! * [`server`] — the listener, connection limit and per-connection protocol;
//! * [`commands`] — one handler module per command family;
//! * [`topics`] — the manifest-backed topic registry and live partitions;
//! * [`broker`] — the shared state handlers work on;
//! * [`placement`] — the seam between the domain and the deployment mode
//!   (standalone or [`cluster`]), chosen once at startup;
//! * [`cluster`] — distributed mode, the clustered side of that seam;
//! * [`maintenance`] — background flush and retention;
//! * [`health`] — the `/live`, `/ready` and `/metrics` HTTP endpoints;
//! * [`metrics`] — the Prometheus metrics and their scrape-time collector;
//! * [`faults`] — injected faults for testing clients (off by default);
//! * [`groups`] — what the data path needs from consumer groups;
//! * [`storage`] — durable partition logs, manifest and journals;
//! * [`txn`] — the transaction coordinator and read isolation;
//! * [`eventsource`] — stream indexes and snapshots of event-sourcing topics.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod auth;
pub mod broker;
pub mod cluster;
pub mod commands;
pub mod config;
pub mod eventsource;
pub mod faults;
#[doc(hidden)]
pub mod fuzzing;
pub mod groups;
pub mod health;
pub mod maintenance;
pub mod metrics;
pub mod placement;
pub mod server;
pub mod settings;
pub mod storage;
pub mod topics;
pub mod txn;
