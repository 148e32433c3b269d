//! `Utility`: the parts of tkrzw-python's utility class that programs written
//! for it use, such as its perf.py's memory figures.

use crate::convert::data;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

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

/// The OS as Tkrzw names it (`Linux`, not Rust's `linux`).
const fn os_name() -> &'static str {
    if cfg!(target_os = "linux") {
        "Linux"
    } else if cfg!(target_os = "macos") {
        "Mac OS X"
    } else if cfg!(target_os = "freebsd") {
        "FreeBSD"
    } else if cfg!(target_os = "windows") {
        "Windows"
    } else {
        std::env::consts::OS
    }
}

/// The page size the kernel gave the process (AT_PAGESZ, type 6, in the
/// auxiliary vector of native-endian word pairs), read without unsafe code.
fn page_size() -> Option<u64> {
    let aux = std::fs::read("/proc/self/auxv").ok()?;
    const W: usize = std::mem::size_of::<usize>();
    let word = |b: &[u8]| -> u64 {
        let mut a = [0u8; W];
        a.copy_from_slice(b);
        usize::from_ne_bytes(a) as u64
    };
    aux.chunks_exact(2 * W)
        .find(|p| word(&p[..W]) == 6)
        .map(|p| word(&p[W..]))
}

/// The first 8 bytes of `b`, big-endian, as Tkrzw's `StrToIntBigEndian`
/// reads them (shorter input: its bytes as an unsigned number).
fn int_of(b: &[u8]) -> i64 {
    b.iter().take(8).fold(0u64, |n, x| n << 8 | u64::from(*x)) as i64
}

/// A big-endian double (8 bytes) or float (4 bytes); NaN otherwise.
fn float_of(b: &[u8]) -> f64 {
    match b.len() {
        8 => f64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        4 => f64::from(f32::from_be_bytes([b[0], b[1], b[2], b[3]])),
        _ => f64::NAN,
    }
}

#[pyclass(module = "memstored", frozen)]
pub struct Utility;

#[pymethods]
impl Utility {
    #[classattr]
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    #[classattr]
    const OS_NAME: &'static str = os_name();
    /// The memory page size: the kernel's AT_PAGESZ, else 4096.
    #[classattr]
    #[allow(non_snake_case)]
    fn PAGE_SIZE() -> u64 {
        page_size().unwrap_or(4096)
    }
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

    /// Tkrzw's bucket hash of `data`, modulo `num_buckets` (0: 2^64-1).
    #[staticmethod]
    #[pyo3(name = "PrimaryHash", signature = (data, num_buckets = 0))]
    fn primary_hash(data: &Bound<'_, PyAny>, num_buckets: u64) -> PyResult<u64> {
        Ok(crate::hash::primary(&self::data(data)?, num_buckets))
    }

    /// Tkrzw's shard hash of `data`, modulo `num_shards` (0: 2^64-1).
    #[staticmethod]
    #[pyo3(name = "SecondaryHash", signature = (data, num_shards = 0))]
    fn secondary_hash(data: &Bound<'_, PyAny>, num_shards: u64) -> PyResult<u64> {
        Ok(crate::hash::secondary(&self::data(data)?, num_shards))
    }

    /// 8 big-endian bytes of `num`.
    #[staticmethod]
    #[pyo3(name = "SerializeInt")]
    fn serialize_int(py: Python<'_>, num: i64) -> Bound<'_, PyBytes> {
        PyBytes::new(py, &num.to_be_bytes())
    }

    #[staticmethod]
    #[pyo3(name = "DeserializeInt")]
    fn deserialize_int(data: &Bound<'_, PyAny>) -> PyResult<i64> {
        Ok(int_of(&self::data(data)?))
    }

    /// 8 big-endian bytes of the IEEE double `num`.
    #[staticmethod]
    #[pyo3(name = "SerializeFloat")]
    fn serialize_float(py: Python<'_>, num: f64) -> Bound<'_, PyBytes> {
        PyBytes::new(py, &num.to_be_bytes())
    }

    #[staticmethod]
    #[pyo3(name = "DeserializeFloat")]
    fn deserialize_float(data: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(float_of(&self::data(data)?))
    }
}
