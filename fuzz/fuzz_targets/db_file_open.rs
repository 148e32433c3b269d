#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| memstored_fuzz::engine_checks::db_file_open(data));
