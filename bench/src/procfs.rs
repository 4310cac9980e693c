//! Figures of a process from `/proc`: resident memory and CPU time, of this process
//! (`/proc/self`) or of another one by its id (the `linkrunner run` that target 3 spawns).
//! Linux only; on other systems the figures read as zero.

use std::time::Duration;

/// Which process to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Proc {
    /// The benchmark's own process.
    This,
    /// Another process (a child the benchmark spawned).
    Pid(u32),
}

impl Proc {
    fn path(self, file: &str) -> String {
        match self {
            Proc::This => format!("/proc/self/{file}"),
            Proc::Pid(pid) => format!("/proc/{pid}/{file}"),
        }
    }

    /// Peak resident memory (`VmHWM`) in bytes.
    pub(crate) fn peak_rss(self) -> u64 {
        self.status_kib("VmHWM:") * 1024
    }

    /// Current resident memory (`VmRSS`) in bytes.
    pub(crate) fn rss(self) -> u64 {
        self.status_kib("VmRSS:") * 1024
    }

    fn status_kib(self, key: &str) -> u64 {
        let status = std::fs::read_to_string(self.path("status")).unwrap_or_default();
        status_field_kib(&status, key)
    }

    /// CPU time (user + system) the process has used so far.
    pub(crate) fn cpu_time(self) -> Duration {
        let stat = std::fs::read_to_string(self.path("stat")).unwrap_or_default();
        stat_cpu_time(&stat)
    }
}

/// Peak resident memory (`VmHWM`) of this process in bytes.
pub(crate) fn peak_rss() -> u64 {
    Proc::This.peak_rss()
}

/// Resets the peak (`VmHWM`) to the current resident size, so a phase measures its own peak.
pub(crate) fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn status_field_kib(status: &str, key: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn stat_cpu_time(stat: &str) -> Duration {
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

pub(crate) fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_utime_plus_stime_after_a_command_name_with_spaces() {
        let stat =
            "4242 (linkrunner (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 150 25 0 0 20 0 9 0";

        assert_eq!(stat_cpu_time(stat), Duration::from_millis(1750));
    }

    #[test]
    fn a_status_field_is_read_in_kib() {
        let status = "Name:\tlinkrunner\nVmHWM:\t   81234 kB\nVmRSS:\t   60000 kB\n";

        assert_eq!(status_field_kib(status, "VmHWM:"), 81234);
        assert_eq!(status_field_kib(status, "VmSwap:"), 0);
    }

    #[test]
    fn a_child_process_is_read_by_its_id() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        let p = Proc::Pid(child.id());

        let rss = p.rss();
        let _ = child.kill();
        let _ = child.wait();

        assert!(rss > 0, "a running process has resident pages");
        assert_ne!(rss, Proc::This.rss());
    }
}
