#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memstored_fuzz::session_checks::session_bytes(data));
