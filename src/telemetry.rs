//! Logging through `tracing`: human-readable by default, JSON on request.
//! Logs go to stderr so command output on stdout stays machine-readable. Colour only when
//! stderr is a terminal and `NO_COLOR` is unset or empty (<https://no-color.org>): a file, a
//! pipe, journald or `kubectl logs` get plain text. JSON is never coloured.
//!
//! Values come from outside (marketplace error bodies and names, file contents), so no log
//! line carries their control characters, escape sequences or BIDI overrides as they are:
//! human lines write every field through [`linkrunner_domain::shown::line`] (a CR or newline in
//! a value cannot forge a line, an ESC cannot reach the terminal); JSON lines have what
//! serde_json leaves raw (DEL, C1 controls, BIDI and zero-width characters) written as
//! `\uXXXX` escapes, which decode to the same strings.
//!
//! A JSON line ([`JsonLines`]) carries the fields of every span it was written in at its top
//! level: a line written inside a campaign's work has `campaign` (and `round`, `action`,
//! `intent` where they apply) as keys of its own, so a log system can filter one campaign's
//! story by a plain field. The innermost span is also kept under `span`, as before.
//!
//! May import: nothing.

use std::ffi::OsString;
use std::fmt;
use std::io::{self, IsTerminal as _, Write};

use chrono::{SecondsFormat, Utc};
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::MakeExt as _;
use tracing_subscriber::fmt::format::{JsonFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

use linkrunner_domain::shown;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LogFormat {
    Human,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber. `filter` is in `tracing`'s EnvFilter syntax; the error
/// names the `--log-level` flag that carries it.
pub(crate) fn init(format: LogFormat, filter: &str) -> anyhow::Result<()> {
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
            .fmt_fields(JsonFields::new())
            .event_format(JsonLines)
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
pub(crate) struct SafeJson<W: Write>(W);

/// `line` with the characters above escaped for JSON.
pub(crate) fn json_safe(line: &str) -> std::borrow::Cow<'_, str> {
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

/// One JSON object per line: `timestamp`, `level`, `target`, the event's fields (`message`
/// among them), the fields of every span in scope (outermost first; an inner span's or the
/// event's own field wins a clash), and the innermost span again under `span` with its
/// `name`.
pub(crate) struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut line = Map::new();
        let now = Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true);
        line.insert("timestamp".into(), now.into());
        line.insert("level".into(), event.metadata().level().as_str().into());
        let mut innermost = None;
        for span in ctx.event_scope().into_iter().flat_map(|s| s.from_root()) {
            let ext = span.extensions();
            // The span's fields as `JsonFields` recorded them: one JSON object.
            let mut fields = ext
                .get::<FormattedFields<N>>()
                .and_then(|f| serde_json::from_str::<Map<String, Value>>(f).ok())
                .unwrap_or_default();
            line.extend(fields.iter().map(|(k, v)| (k.clone(), v.clone())));
            fields.insert("name".into(), span.name().into());
            innermost = Some(fields);
        }
        event.record(&mut JsonVisitor(&mut line));
        line.insert("target".into(), event.metadata().target().into());
        if let Some(span) = innermost {
            line.insert("span".into(), Value::Object(span));
        }
        writeln!(w, "{}", Value::Object(line))
    }
}

/// Writes an event's fields into a JSON object, numbers as numbers.
struct JsonVisitor<'a>(&'a mut Map<String, Value>);

impl Visit for JsonVisitor<'_> {
    fn record_f64(&mut self, f: &Field, v: f64) {
        let v = serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number);
        self.0.insert(f.name().into(), v);
    }
    fn record_i64(&mut self, f: &Field, v: i64) {
        self.0.insert(f.name().into(), v.into());
    }
    fn record_u64(&mut self, f: &Field, v: u64) {
        self.0.insert(f.name().into(), v.into());
    }
    fn record_bool(&mut self, f: &Field, v: bool) {
        self.0.insert(f.name().into(), v.into());
    }
    fn record_str(&mut self, f: &Field, v: &str) {
        self.0.insert(f.name().into(), v.into());
    }
    fn record_error(&mut self, f: &Field, v: &(dyn std::error::Error + 'static)) {
        self.0.insert(f.name().into(), v.to_string().into());
    }
    fn record_debug(&mut self, f: &Field, v: &dyn std::fmt::Debug) {
        // `log` records bridged by tracing-log carry their metadata as `log.*` fields.
        if !f.name().starts_with("log.") {
            self.0.insert(f.name().into(), format!("{v:?}").into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines a subscriber with [`JsonLines`] writes while `work` runs.
    fn json_lines(work: impl FnOnce()) -> Vec<Value> {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || out.clone())
            .fmt_fields(JsonFields::new())
            .event_format(JsonLines)
            .finish();
        tracing::subscriber::with_default(subscriber, work);
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    #[test]
    fn a_line_inside_spans_carries_their_fields_at_the_top_level() {
        let lines = json_lines(|| {
            let round =
                tracing::info_span!("round", campaign = "acme", round = "2026-11-22T09:00:00Z");
            let _r = round.enter();
            let step = tracing::info_span!("step", action = "buy");
            let _s = step.enter();
            tracing::info!(intent = 7_i64, price = 1.5, "bought");
        });
        let l = &lines[0];
        assert_eq!(l["campaign"], "acme");
        assert_eq!(l["round"], "2026-11-22T09:00:00Z");
        assert_eq!(l["action"], "buy");
        assert_eq!(l["intent"], 7);
        assert_eq!(l["price"], 1.5);
        assert_eq!(l["message"], "bought");
        assert_eq!(l["level"], "INFO");
        assert_eq!(l["span"]["name"], "step");
        assert!(l["timestamp"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn an_events_own_field_wins_and_a_line_outside_spans_has_no_span() {
        let lines = json_lines(|| {
            let span = tracing::info_span!("campaign", campaign = "outer");
            span.in_scope(|| tracing::warn!(campaign = "inner", "x"));
            tracing::info!("process line");
        });
        assert_eq!(lines[0]["campaign"], "inner");
        assert!(lines[1].get("campaign").is_none() && lines[1].get("span").is_none());
    }

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
