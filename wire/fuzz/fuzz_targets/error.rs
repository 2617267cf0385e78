//! Typed error payload decoder and the broker error-text parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../bodies.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::error(data));
