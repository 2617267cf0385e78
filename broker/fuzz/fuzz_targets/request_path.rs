//! Arbitrary bytes as one client connection through the broker's whole
//! request path, in-process (see `cursus_broker::fuzzing::request_path`).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cursus_broker::fuzzing::request_path(data));
