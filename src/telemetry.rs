//! Logging through `tracing`: human-readable by default, JSON on request.
//! Logs go to stderr so command output on stdout stays machine-readable. Colour only when
//! stderr is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>): a file, a
//! pipe, journald or `kubectl logs` get plain text. JSON is never coloured.

use std::ffi::OsString;
use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Human,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber. `filter` is in `tracing`'s EnvFilter syntax; the error
/// names the `--log-level` flag that carries it.
pub fn init(format: LogFormat, filter: &str) -> anyhow::Result<()> {
    let env_filter = EnvFilter::try_new(filter)
        .map_err(|e| anyhow::anyhow!("--log-level `{filter}` is not a valid filter: {e}"))?;
    let colour = use_colour(
        format,
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR"),
    );
    let builder = tracing_subscriber::fmt()
        .with_env_filter(env_filter)
        .with_writer(std::io::stderr)
        .with_ansi(colour);
    let result = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

/// Whether log lines carry ANSI colour escapes.
fn use_colour(format: LogFormat, stderr_is_terminal: bool, no_color: Option<OsString>) -> bool {
    let no_color = no_color.is_some_and(|v| !v.is_empty());
    format == LogFormat::Human && stderr_is_terminal && !no_color
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_logs_on_a_terminal_are_coloured() {
        assert!(use_colour(LogFormat::Human, true, None));
    }

    #[test]
    fn logs_to_a_file_or_pipe_are_never_coloured() {
        assert!(!use_colour(LogFormat::Human, false, None));
    }

    #[test]
    fn no_color_turns_colour_off_even_on_a_terminal() {
        assert!(!use_colour(LogFormat::Human, true, Some("1".into())));
        assert!(use_colour(LogFormat::Human, true, Some("".into())));
    }

    #[test]
    fn json_logs_are_never_coloured() {
        assert!(!use_colour(LogFormat::Json, true, None));
    }
}
