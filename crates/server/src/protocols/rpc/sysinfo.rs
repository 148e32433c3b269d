//! The `sys_*` fields of Kyoto Tycoon's report, as Kyoto Cabinet's
//! `getsysinfo` gathers them on Linux: CPU times, and memory in bytes from
//! /proc (absent where /proc is not there).

/// `sys_ru_utime`, `sys_ru_stime`, `sys_mem_peak`, `sys_mem_size`,
/// `sys_mem_rss`, `sys_mem_total`, `sys_mem_free`, `sys_mem_cached`.
pub fn sys_info() -> Vec<(String, String)> {
    let (utime, stime) = crate::protocols::stats::rusage();
    let mut out = vec![
        ("sys_ru_utime".to_string(), utime),
        ("sys_ru_stime".to_string(), stime),
    ];
    let fields = [
        ("/proc/self/status", "VmPeak:", "sys_mem_peak"),
        ("/proc/self/status", "VmSize:", "sys_mem_size"),
        ("/proc/self/status", "VmRSS:", "sys_mem_rss"),
        ("/proc/meminfo", "MemTotal:", "sys_mem_total"),
        ("/proc/meminfo", "MemFree:", "sys_mem_free"),
        ("/proc/meminfo", "Cached:", "sys_mem_cached"),
    ];
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    for (file, label, name) in fields {
        let text = if file == "/proc/meminfo" {
            &meminfo
        } else {
            &status
        };
        if let Some(kib) = kib_field(text, label) {
            out.push((name.to_string(), kib.saturating_mul(1024).to_string()));
        }
    }
    out
}

/// The number of a `Label:   123 kB` line.
fn kib_field(text: &str, label: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(label))?;
    line[label.len()..].split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn kib_fields_are_read_from_proc_style_text() {
        let text = "Name:\tx\nVmPeak:\t  2048 kB\nVmRSS:\t 12 kB\n";
        assert_eq!(super::kib_field(text, "VmPeak:"), Some(2048));
        assert_eq!(super::kib_field(text, "VmRSS:"), Some(12));
        assert_eq!(super::kib_field(text, "VmSize:"), None);
    }
}
