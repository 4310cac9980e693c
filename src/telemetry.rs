//! Logging through `tracing`: human-readable by default, JSON on request.
//! Logs go to stderr so command output on stdout stays machine-readable. Colour only when
//! stderr is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>): a file, a
//! pipe, journald or `kubectl logs` get plain text. JSON is never coloured.
//!
//! Values come from outside (marketplace error bodies and names, file contents), so no log
//! line carries their control characters, escape sequences or BIDI overrides as they are:
//! human lines write every field through [`crate::domain::shown::line`] (a CR or newline in
//! a value cannot forge a line, an ESC cannot reach the terminal); JSON lines have what
//! serde_json leaves raw (DEL, C1 controls, BIDI and zero-width characters) written as
//! `\uXXXX` escapes, which decode to the same strings.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, IsTerminal as _, Write};

use tracing::field::Field;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::MakeExt as _;
use tracing_subscriber::fmt::format::Writer;

use crate::domain::shown;

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
        .with_ansi(colour);
    let result = match format {
        LogFormat::Human => builder
            .with_writer(io::stderr)
            .fmt_fields(tracing_subscriber::fmt::format::debug_fn(human_field).delimited(" "))
            .try_init(),
        LogFormat::Json => builder
            .with_writer(|| SafeJson(io::stderr()))
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
    result.map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

/// One field of a human log line, `name=value` (the message alone), escaped.
fn human_field(w: &mut Writer<'_>, field: &Field, value: &dyn fmt::Debug) -> fmt::Result {
    let text = format!("{value:?}");
    match field.name() {
        "message" => write!(w, "{}", shown::line(&text)),
        name => write!(w, "{name}={}", shown::line(&text)),
    }
}

/// A JSON log line with every character serde_json leaves raw but a screen would act on
/// (DEL, C1 controls, BIDI and zero-width characters) written as a `\uXXXX` escape. The
/// formatter hands over one whole line per write; raw C0 controls cannot occur in its
/// output, so only the line's own newline is kept.
pub struct SafeJson<W: Write>(pub W);

/// `line` with the characters above escaped for JSON.
pub fn json_safe(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(|c| c != '\n' && shown::is_unsafe(c)) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if c != '\n' && shown::is_unsafe(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl<W: Write> Write for SafeJson<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) => self.0.write_all(json_safe(text).as_bytes())?,
            Err(_) => self.0.write_all(buf)?,
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
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
    fn json_lines_escape_what_serde_leaves_raw_and_still_decode_to_the_same_text() {
        let value = "a\u{7f}b\u{9b}c\u{202e}d\u{1b}e\n";
        let line = format!("{}\n", serde_json::json!({ "error": value }));
        let safe = json_safe(&line);
        assert!(safe.ends_with('\n'));
        assert!(!safe.trim_end().chars().any(shown::is_unsafe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["error"], value);
    }

    #[test]
    fn json_logs_are_never_coloured() {
        assert!(!use_colour(LogFormat::Json, true, None));
    }
}
