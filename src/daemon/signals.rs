//! Signals, file watching and systemd notifications.
//!
//! - SIGTERM / SIGINT cancel the shutdown token; SIGHUP asks for a reload.
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
pub enum ReloadCause {
    Signal,
    FileChange,
}

/// Cancels `shutdown` on SIGTERM or SIGINT and sends a reload request on SIGHUP.
pub fn spawn_signal_handlers(
    shutdown: CancellationToken,
    reload: mpsc::Sender<ReloadCause>,
) -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = term.recv() => { tracing::info!("SIGTERM: shutting down"); shutdown.cancel(); return; }
                _ = int.recv() => { tracing::info!("SIGINT: shutting down"); shutdown.cancel(); return; }
                _ = hup.recv() => { let _ = reload.try_send(ReloadCause::Signal); }
                _ = shutdown.cancelled() => return,
            }
        }
    });
    Ok(())
}

/// Watches `dir` and sends a reload request after changes settle. The returned guard must be
/// kept alive for as long as watching should go on.
pub fn watch_dir(dir: &Path, reload: mpsc::Sender<ReloadCause>) -> anyhow::Result<impl Drop> {
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
pub fn notify_ready(shutdown: CancellationToken, probe: Option<std::net::SocketAddr>) {
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

pub fn notify_stopping() {
    if std::env::var_os("NOTIFY_SOCKET").is_some() {
        let _ = sd_notify::notify(&[sd_notify::NotifyState::Stopping]);
    }
}

pub fn notify_reloading(done: bool) {
    if std::env::var_os("NOTIFY_SOCKET").is_some() {
        if done {
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
        } else if let Ok(now) = sd_notify::NotifyState::monotonic_usec_now() {
            // systemd 253+ needs MONOTONIC_USEC with RELOADING=1.
            let _ = sd_notify::notify(&[sd_notify::NotifyState::Reloading, now]);
        }
    }
}
