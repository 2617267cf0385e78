//! CRQ2 command decoder and the text-command parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../bodies.rs"]
mod bodies;

fuzz_target!(|data: &[u8]| bodies::command(data));
