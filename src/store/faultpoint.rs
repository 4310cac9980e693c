//! Test-only crash points for the kill suite (`tests/it/engine_kill.rs`), compiled only with the
//! `test-hooks` cargo feature (which `cargo test` turns on; `cargo build` and releases do not):
//! a production binary neither reads the variable nor can hang on it.
//!
//! When `LINKRUNNER_TEST_FAULTPOINT` names a boundary — of the money protocol
//! (`effects::protocol`): `after_begin`, `after_call` or `after_complete`, optionally with
//! `:KIND` (e.g. `after_call:purchase`); or of a journal transaction: `before_commit:rename`
//! (a rename's hand-over, everything moved, not yet committed) — the process prints
//! `linkrunner-faultpoint-reached BOUNDARY:KIND` to stderr at that boundary and then hangs, so
//! the test can kill it with SIGKILL exactly there. Unset it costs one cached lookup. It lives
//! in the journal's room so that both the protocol and a transaction can reach it.

/// Hangs here (forever) if the test asked for this boundary and kind; without `test-hooks`,
/// does nothing.
pub(crate) async fn reach(boundary: &str, kind: &str) {
    #[cfg(feature = "test-hooks")]
    hooks::reach(boundary, kind).await;
    #[cfg(not(feature = "test-hooks"))]
    let _ = (boundary, kind);
}

#[cfg(feature = "test-hooks")]
mod hooks {
    use std::sync::OnceLock;

    fn configured() -> Option<&'static (String, Option<String>)> {
        static POINT: OnceLock<Option<(String, Option<String>)>> = OnceLock::new();
        POINT
            .get_or_init(|| {
                let v = std::env::var("LINKRUNNER_TEST_FAULTPOINT").ok()?;
                let (at, kind) = match v.split_once(':') {
                    Some((a, k)) => (a.to_string(), Some(k.to_string())),
                    None => (v, None),
                };
                Some((at, kind))
            })
            .as_ref()
    }

    pub(super) async fn reach(boundary: &str, kind: &str) {
        let Some((at, want)) = configured() else {
            return;
        };
        if at != boundary || want.as_deref().is_some_and(|k| k != kind) {
            return;
        }
        eprintln!("linkrunner-faultpoint-reached {boundary}:{kind}");
        std::future::pending::<()>().await;
    }
}
