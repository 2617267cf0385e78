//! CBV2 batch decoder.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../bodies.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::batch(data));
