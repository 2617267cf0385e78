//! The Cursus reference broker: a real, standalone Wire v2 broker that every
//! binding of the SDK is tested against.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod storage;
