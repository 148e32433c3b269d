#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memstored_fuzz::protocol_checks::rpc_frame(data));
