//! Signals, file watching and systemd notifications.
//!
//! - SIGTERM / SIGINT cancel the shutdown token; SIGHUP asks for a reload. A second SIGTERM
//!   or SIGINT exits at once with 128 + its number (143, 130), as if it had not been caught:
//!   what is in flight then stays in flight and is settled by the next start.
//! - The campaign directory is watched (not the files: Kubernetes swaps a `..data` symlink
//!   inside it), debounced, and a change asks for a reload.
//! - Under systemd (`NOTIFY_SOCKET` set): READY=1, STOPPING=1, and WATCHDOG=1 at half the
//!   configured `WatchdogSec`.

use std::path::Path;
use std::time::Duration;

use notify::RecursiveMode;
use notify_debouncer_full::new_debouncer;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Why a reload was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReloadCause {
    Signal,
    FileChange,
}

/// Cancels `shutdown` on SIGTERM or SIGINT and sends a reload request on SIGHUP; a second
/// SIGTERM or SIGINT exits at once.
pub(crate) fn spawn_signal_handlers(
    shutdown: CancellationToken,
    reload: mpsc::Sender<ReloadCause>,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let stop = StopSignals::install()?;
    let mut hup = signal(SignalKind::hangup())?;
    let first = shutdown.clone();
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = hup.recv() => { let _ = reload.try_send(ReloadCause::Signal); }
                _ = first.cancelled() => return,
            }
        }
    });
    stop.spawn(
        shutdown,
        "shutting down: in-flight calls finish and are recorded",
    );
    Ok(())
}

/// SIGTERM and SIGINT, caught: the first cancels a token (the command stops starting calls,
/// lets the one in flight finish and be recorded, releases its leases); the second exits at
/// once with 128 + its number. Installed before anything else, so no signal kills a command
/// half-way by default.
pub(crate) struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    /// The number of the first signal received (0: none yet).
    received: std::sync::Arc<std::sync::atomic::AtomicI32>,
}

impl StopSignals {
    pub(crate) fn install() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            received: Default::default(),
        })
    }

    /// The first signal's number, or `None`; shared with the task [`Self::spawn`] starts.
    pub(crate) fn received(&self) -> std::sync::Arc<std::sync::atomic::AtomicI32> {
        self.received.clone()
    }

    /// Waits for the signals in a task of its own: the first cancels `stop` (logged with
    /// `doing`, what the command does now), the second exits the process at once.
    pub(crate) fn spawn(mut self, stop: CancellationToken, doing: &'static str) {
        use std::sync::atomic::Ordering;
        tokio::spawn(async move {
            let first = self.next().await;
            self.received.store(first, Ordering::SeqCst);
            tracing::warn!(
                signal = signal_name(first),
                "{doing}; a second signal exits at once"
            );
            stop.cancel();
            let second = self.next().await;
            tracing::error!(
                signal = signal_name(second),
                "second signal: exiting now; what was in flight stays in flight and is settled at the next start"
            );
            eprintln!(
                "linkrunner: {}: exiting at once (exit {})",
                signal_name(second),
                128 + second
            );
            std::process::exit(128 + second);
        });
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.term.recv() => SIGTERM,
            _ = self.int.recv() => SIGINT,
        }
    }
}

const SIGINT: i32 = 2;
const SIGTERM: i32 = 15;

fn signal_name(n: i32) -> &'static str {
    match n {
        SIGINT => "SIGINT",
        _ => "SIGTERM",
    }
}

/// Watches `dir` and sends a reload request after changes settle. The returned guard must be
/// kept alive for as long as watching should go on.
pub(crate) fn watch_dir(
    dir: &Path,
    reload: mpsc::Sender<ReloadCause>,
) -> anyhow::Result<impl Drop> {
    let mut debouncer = new_debouncer(
        Duration::from_millis(500),
        None,
        move |res: notify_debouncer_full::DebounceEventResult| {
            // Reading the files ourselves raises access events: only changes count.
            let changed = |e: &notify_debouncer_full::DebouncedEvent| {
                !e.kind.is_access() && !e.kind.is_other()
            };
            if res.is_ok_and(|events| events.iter().any(changed)) {
                let _ = reload.try_send(ReloadCause::FileChange);
            }
        },
    )?;
    debouncer.watch(dir, RecursiveMode::NonRecursive)?;
    Ok(debouncer)
}

/// Tells systemd we are ready, and starts the watchdog pings if it asked for them. With a
/// probe port, each ping is sent only after `/healthz` answered there within a quarter of
/// the watchdog period: a daemon whose probes hang is restarted by systemd.
pub(crate) fn notify_ready(shutdown: CancellationToken, probe: Option<std::net::SocketAddr>) {
    if std::env::var_os("NOTIFY_SOCKET").is_none() {
        return;
    }
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
    if let Some(period) = sd_notify::watchdog_enabled() {
        let every = period / 2;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(every) => {
                        let alive = match probe {
                            Some(addr) => crate::http::self_check(addr, period / 4).await,
                            None => true,
                        };
                        if alive {
                            let _ = sd_notify::notify(&[sd_notify::NotifyState::Watchdog]);
                        } else {
                            tracing::warn!(probe = %addr_text(probe), "watchdog: /healthz on the probe port did not answer; no ping sent");
                        }
                    }
                    _ = shutdown.cancelled() => return,
                }
            }
        });
    }
}

fn addr_text(a: Option<std::net::SocketAddr>) -> String {
    a.map(|a| a.to_string()).unwrap_or_default()
}

pub(crate) fn notify_stopping() {
    if std::env::var_os("NOTIFY_SOCKET").is_some() {
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    }
}

pub(crate) fn notify_reloading(done: bool) {
    if std::env::var_os("NOTIFY_SOCKET").is_some() {
        if done {
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
        } else if let Ok(now) = sd_notify::NotifyState::monotonic_usec_now() {
            // systemd 253+ needs MONOTONIC_USEC with RELOADING=1.
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Reloading, now]);
        }
    }
}
