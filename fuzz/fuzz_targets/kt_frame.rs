#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memstored_fuzz::kt_checks::kt_frame(data));
