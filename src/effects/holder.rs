//! Who this process is in the leases it takes, and whether another holder still exists
//! (issue 25, point 2). A lease left by a process that was killed (SIGKILL, OOM, a `once`
//! stopped twice) would block its campaign for the whole TTL; a process of the same host and
//! the same pid namespace can see that the holder is gone and take the lease over at once.
//!
//! Same host means the same boot id (`/proc/sys/kernel/random/boot_id`), not the same host
//! name: containers share pid 1 and a restarted pod keeps its name. Same pid namespace means
//! a pid names the same process for both. Gone means no process with that pid, a zombie, or
//! a process with that pid but another start time (the pid was reused). In every other case
//! — another host, another namespace, the holder alive, anything unreadable — the holder is
//! taken as alive and the TTL stays.

use std::path::Path;

use crate::store::{HolderIdentity, LeaseHolder};

/// This process's identity, for the lease rows it writes. `holder` is its holder id.
pub(crate) fn this_process(holder: String) -> HolderIdentity {
    let pid = std::process::id();
    HolderIdentity {
        holder,
        boot_id: read_trimmed(Path::new("/proc/sys/kernel/random/boot_id")),
        pid_ns: std::fs::read_link("/proc/self/ns/pid")
            .ok()
            .map(|p| p.to_string_lossy().into_owned()),
        pid: Some(i64::from(pid)),
        started: process_start(pid).map(|(start, _)| start),
    }
}

/// What this process can tell about a lease's holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    /// Of this host and pid namespace, and no such process exists any more.
    Gone,
    /// Of this host and pid namespace, and still running.
    Alive,
    /// Another host, another pid namespace, or a holder that did not say who it is.
    Elsewhere,
}

/// Whether `other` (a lease's recorded holder) still exists, seen from `me`.
pub(crate) fn judge(me: &HolderIdentity, other: &HolderIdentity) -> Holder {
    let same_place = me.boot_id.is_some()
        && me.pid_ns.is_some()
        && me.boot_id == other.boot_id
        && me.pid_ns == other.pid_ns;
    let (true, Some(pid), Some(started)) = (same_place, other.pid, other.started) else {
        return Holder::Elsewhere;
    };
    let Ok(pid) = u32::try_from(pid) else {
        return Holder::Elsewhere;
    };
    match process_start(pid) {
        None => Holder::Gone,
        Some((_, state)) if state == 'Z' || state == 'X' => Holder::Gone,
        Some((start, _)) if start != started => Holder::Gone,
        Some(_) => Holder::Alive,
    }
}

/// How a lease's holder reads in a message: its id, its pid, and whether it runs here.
pub(crate) fn describe(me: &HolderIdentity, lease: &LeaseHolder) -> String {
    let pid = lease
        .identity
        .pid
        .map(|p| format!(", pid {p}"))
        .unwrap_or_default();
    let where_ = match judge(me, &lease.identity) {
        Holder::Alive => "running on this host",
        Holder::Gone => "gone",
        Holder::Elsewhere => "on another host or in another container",
    };
    format!(
        "{}{pid}, {where_}; the lease expires at {} unless renewed",
        lease.identity.holder,
        lease.expires_at.format("%Y-%m-%d %H:%M:%S UTC")
    )
}

/// A process's start time (clock ticks since boot, field 22 of `/proc/PID/stat`) and state
/// (field 3); `None` when there is no such process.
fn process_start(pid: u32) -> Option<(i64, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&stat)
}

/// Fields 3 and 22 of a `stat` line. The command name (field 2) may hold spaces and
/// parentheses, so fields are counted after its last `)`.
fn parse_stat(stat: &str) -> Option<(i64, char)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((start, state))
}

fn read_trimmed(path: &Path) -> Option<String> {
    let s = std::fs::read_to_string(path).ok()?;
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_is_read_after_the_last_parenthesis_of_the_command() {
        let line = "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some((987654, 'S')));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_pid_that_never_ran_is_gone() {
        let me = this_process("me".into());
        assert!(me.boot_id.is_some() && me.pid_ns.is_some() && me.started.is_some());
        assert_eq!(judge(&me, &me), Holder::Alive);
        let reused = HolderIdentity {
            started: me.started.map(|s| s + 1),
            ..me.clone()
        };
        assert_eq!(judge(&me, &reused), Holder::Gone, "the pid was reused");
        let never = HolderIdentity {
            pid: Some(i64::from(u32::MAX - 1)),
            ..me.clone()
        };
        assert_eq!(judge(&me, &never), Holder::Gone);
    }

    #[test]
    fn a_holder_of_another_boot_or_namespace_or_that_did_not_say_is_elsewhere() {
        let me = this_process("me".into());
        let other_boot = HolderIdentity {
            boot_id: Some("another-boot".into()),
            pid: Some(1),
            ..me.clone()
        };
        assert_eq!(judge(&me, &other_boot), Holder::Elsewhere);
        let other_ns = HolderIdentity {
            pid_ns: Some("pid:[1]".into()),
            ..me.clone()
        };
        assert_eq!(judge(&me, &other_ns), Holder::Elsewhere);
        let old_version = HolderIdentity {
            holder: "old".into(),
            ..HolderIdentity::default()
        };
        assert_eq!(judge(&me, &old_version), Holder::Elsewhere);
    }
}
