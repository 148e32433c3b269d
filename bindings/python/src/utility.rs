//! `Utility`: the parts of tkrzw-python's utility class that programs written
//! for it use, such as its perf.py's memory figures.

use pyo3::prelude::*;

/// A `kB` figure of /proc/self/status or /proc/meminfo, in bytes; -1 when
/// the file or the line is missing (not Linux).
fn proc_kib(file: &str, field: &str) -> i64 {
    std::fs::read_to_string(file)
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|rest| {
                    rest.trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse::<i64>()
                        .ok()
                })
        })
        .map_or(-1, |kib| kib * 1024)
}

#[pyclass(module = "memstored", frozen)]
pub struct Utility;

#[pymethods]
impl Utility {
    #[classattr]
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    #[classattr]
    const OS_NAME: &'static str = std::env::consts::OS;
    #[classattr]
    const INT32MIN: i64 = i32::MIN as i64;
    #[classattr]
    const INT32MAX: i64 = i32::MAX as i64;
    #[classattr]
    const UINT32MAX: u64 = u32::MAX as u64;
    #[classattr]
    const INT64MIN: i64 = i64::MIN;
    #[classattr]
    const INT64MAX: i64 = i64::MAX;
    #[classattr]
    const UINT64MAX: u64 = u64::MAX;

    /// The machine's memory in bytes, or -1 when unknown.
    #[staticmethod]
    #[pyo3(name = "GetMemoryCapacity")]
    fn get_memory_capacity() -> i64 {
        proc_kib("/proc/meminfo", "MemTotal:")
    }

    /// The process's resident memory in bytes, or -1 when unknown.
    #[staticmethod]
    #[pyo3(name = "GetMemoryUsage")]
    fn get_memory_usage() -> i64 {
        proc_kib("/proc/self/status", "VmRSS:")
    }

    /// Levenshtein distance between two strings, over characters.
    #[staticmethod]
    #[pyo3(name = "EditDistanceLev")]
    fn edit_distance_lev(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        memstored_engine::search::edit_distance(&a, &b)
    }
}
