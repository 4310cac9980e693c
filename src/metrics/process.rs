//! The standard `process_*` series every Prometheus user expects (the names and units of the
//! official client libraries): resident and virtual memory, CPU seconds, open and maximum file
//! descriptors, threads, start time. Read from `/proc/self` on each scrape — a few small file
//! reads, no database — instead of the prometheus crate's `process` feature, which pulls in
//! `procfs` and its dependencies. Where `/proc` is absent (not Linux) the series are not
//! registered at all rather than exported as zeros.

use std::fs;

use prometheus::{Counter, Gauge, IntGauge, Registry};

use super::{gauge, int_gauge, reg};

/// Clock ticks per second of `/proc/self/stat`'s times: the kernel's `USER_HZ`, which is 100
/// on every architecture this builds for (it is part of the kernel's user-space ABI, unlike
/// the internal `HZ`).
const USER_HZ: f64 = 100.0;

#[derive(Clone)]
pub(super) struct ProcessMetrics {
    cpu_seconds_total: Counter,
    resident_memory_bytes: IntGauge,
    virtual_memory_bytes: IntGauge,
    open_fds: IntGauge,
    max_fds: IntGauge,
    threads: IntGauge,
    start_time_seconds: Gauge,
}

/// One reading of `/proc/self`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct Sample {
    cpu_seconds: f64,
    resident_bytes: i64,
    virtual_bytes: i64,
    open_fds: i64,
    max_fds: i64,
    threads: i64,
    start_time_seconds: f64,
}

impl ProcessMetrics {
    /// Registers the series when `/proc/self` can be read, else `None`.
    pub(super) fn register(r: &Registry) -> Option<ProcessMetrics> {
        let first = read()?;
        let m = ProcessMetrics {
            cpu_seconds_total: reg(
                r,
                Counter::new(
                    "process_cpu_seconds_total",
                    "Total user and system CPU time spent in seconds.",
                )
                .expect("valid metric"),
            ),
            resident_memory_bytes: int_gauge(
                r,
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
            ),
            virtual_memory_bytes: int_gauge(
                r,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
            ),
            open_fds: int_gauge(r, "process_open_fds", "Number of open file descriptors."),
            max_fds: int_gauge(
                r,
                "process_max_fds",
                "Maximum number of open file descriptors.",
            ),
            threads: int_gauge(r, "process_threads", "Number of OS threads in the process."),
            start_time_seconds: gauge(
                r,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
            ),
        };
        m.set(&first);
        Some(m)
    }

    /// Reads `/proc/self` again (called on every scrape, before the registry is gathered).
    pub(super) fn update(&self) {
        if let Some(s) = read() {
            self.set(&s);
        }
    }

    fn set(&self, s: &Sample) {
        let grown = s.cpu_seconds - self.cpu_seconds_total.get();
        if grown > 0.0 {
            self.cpu_seconds_total.inc_by(grown);
        }
        self.resident_memory_bytes.set(s.resident_bytes);
        self.virtual_memory_bytes.set(s.virtual_bytes);
        self.open_fds.set(s.open_fds);
        self.max_fds.set(s.max_fds);
        self.threads.set(s.threads);
        self.start_time_seconds.set(s.start_time_seconds);
    }
}

/// The current values, or `None` without a readable `/proc/self`.
pub(super) fn read() -> Option<Sample> {
    let stat = fs::read_to_string("/proc/self/stat").ok()?;
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let (cpu_ticks, start_ticks) = parse_stat(&stat)?;
    let boot = fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| parse_boot_time(&s))?;
    Some(Sample {
        cpu_seconds: cpu_ticks as f64 / USER_HZ,
        resident_bytes: status_kib(&status, "VmRSS:").unwrap_or(0) * 1024,
        virtual_bytes: status_kib(&status, "VmSize:").unwrap_or(0) * 1024,
        open_fds: fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as i64),
        max_fds: fs::read_to_string("/proc/self/limits")
            .ok()
            .and_then(|l| parse_max_open_files(&l))
            .unwrap_or(0),
        threads: status_kib(&status, "Threads:").unwrap_or(0),
        start_time_seconds: boot as f64 + start_ticks as f64 / USER_HZ,
    })
}

/// `utime + stime` and `starttime` (clock ticks) from `/proc/self/stat`. The command name in
/// parentheses may hold spaces and `)`, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3 of stat(5), so field n is f[n - 3].
    let num = |n: usize| f.get(n - 3)?.parse::<u64>().ok();
    Some((num(14)?.checked_add(num(15)?)?, num(22)?))
}

/// `btime` of `/proc/stat`: the boot time in Unix seconds.
fn parse_boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// A `Key:   123 kB` (or plain count) line of `/proc/self/status`.
fn status_kib(status: &str, key: &str) -> Option<i64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// The soft limit of `Max open files` in `/proc/self/limits`.
fn parse_max_open_files(limits: &str) -> Option<i64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 123456 1000 50 18446744073709551615";
        assert_eq!(parse_stat(stat), Some((300, 123456)));
    }

    #[test]
    fn status_limits_and_boot_time_are_read_as_the_kernel_writes_them() {
        let status = "Name:\tlinkrunner\nVmSize:\t  123456 kB\nVmRSS:\t   20480 kB\nThreads:\t7\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(20480));
        assert_eq!(status_kib(status, "Threads:"), Some(7));
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \nMax open files            1024                 524288               files     \n";
        assert_eq!(parse_max_open_files(limits), Some(1024));
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nbtime 1700000000\nprocesses 5\n"),
            Some(1700000000)
        );
    }

    #[test]
    fn this_process_reads_as_alive_started_in_the_past_with_memory_and_files() {
        let Some(s) = read() else {
            return; // no /proc here: the series are not registered either
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        assert!(s.resident_bytes > 1024 * 1024, "{s:?}");
        assert!(s.open_fds >= 3 && s.max_fds >= s.open_fds, "{s:?}");
        assert!(s.threads >= 1, "{s:?}");
        assert!(
            s.start_time_seconds > now - 86_400.0 && s.start_time_seconds <= now + 1.0,
            "{s:?}"
        );
    }
}
