//! Figures of this process from `/proc/self`: resident memory and CPU time. Linux only; on
//! other systems the figures read as zero.

use std::time::Duration;

/// Peak resident memory (`VmHWM`) in bytes.
pub fn peak_rss() -> u64 {
    status_kib("VmHWM:") * 1024
}

/// Current resident memory (`VmRSS`) in bytes.
pub fn rss() -> u64 {
    status_kib("VmRSS:") * 1024
}

/// Resets the peak (`VmHWM`) to the current resident size, so a phase measures its own peak.
pub fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn status_kib(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) this process has used so far.
pub fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command name.
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let total = ticks(11) + ticks(12);
    // The kernel reports in USER_HZ, which is 100 on every Linux ABI in use.
    Duration::from_millis(total * 10)
}

pub fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
