//! "Not found / not finished" answers to the search-result fetch (operation 4).
//!
//! The spec does not say how a job that is still running answers. One real server answers
//! `404 {"isError":true,"message":"job not found or not finished"}` until the job is done, so
//! a 404, or an error whose message says the job is not found, not finished or not ready
//! (English or Russian, any case), is not a rejection: the engine polls on until the search
//! deadline and then says the marketplace kept answering "not found". Anything else stays
//! a rejection.

use serde_json::Value;

use super::message_of;

/// Longest message kept (it goes into logs and the round's reason).
const MAX_MESSAGE_CHARS: usize = 200;

/// Phrases, matched lowercase, that say "this job is not there or not done yet".
const NOT_READY_PHRASES: [&str; 16] = [
    "not found",
    "notfound",
    "not_found",
    "not finished",
    "not_finished",
    "not ready",
    "not_ready",
    "not yet",
    "not complete",
    "no such job",
    "unknown job",
    "не найден",
    "не заверш",
    "не готов",
    "ещё не",
    "еще не",
];

/// Whether an error message says the job is not found, not finished or not ready.
pub(crate) fn says_not_ready(message: &str) -> bool {
    let lower = message.to_lowercase();
    NOT_READY_PHRASES.iter().any(|p| lower.contains(p))
}

/// A refused answer (HTTP `status`, redacted `body`) as "not found yet": `Some(message)` for a
/// 404 whatever its body, or any 4xx whose message says so; `None` keeps it a rejection.
pub(crate) fn not_found(status: u16, body: &str) -> Option<String> {
    let message = message_in(body);
    let matches = match &message {
        Some(m) => says_not_ready(m),
        None => says_not_ready(body),
    };
    if status != 404 && !((400..500).contains(&status) && matches) {
        return None;
    }
    let text = message.unwrap_or_else(|| body.trim().to_string());
    Some(match text.is_empty() {
        true => format!("HTTP {status}"),
        false => short(&text),
    })
}

/// A message cut to [`MAX_MESSAGE_CHARS`] characters.
pub(crate) fn short(message: &str) -> String {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &message[..at]),
        None => message.to_string(),
    }
}

fn message_in(body: &str) -> Option<String> {
    match serde_json::from_str::<Value>(body).ok()? {
        Value::Object(obj) => message_of(&obj),
        Value::String(s) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_and_not_finished_messages_are_recognised_in_any_case() {
        for m in [
            "job not found or not finished",
            "Job NOT FOUND",
            "Result not ready",
            "Task is not finished yet",
            "Задача не найдена или ещё не завершена",
            "Результат не готов",
        ] {
            assert!(says_not_ready(m), "{m}");
        }
    }

    #[test]
    fn other_messages_are_not_pending() {
        for m in ["insufficient balance", "bad metaData", "forbidden", ""] {
            assert!(!says_not_ready(m), "{m}");
        }
    }

    #[test]
    fn a_404_is_not_found_whatever_its_body() {
        assert_eq!(
            not_found(
                404,
                r#"{"isError":true,"message":"job not found or not finished"}"#
            ),
            Some("job not found or not finished".into())
        );
        assert_eq!(
            not_found(404, "<html>gone</html>"),
            Some("<html>gone</html>".into())
        );
        assert_eq!(not_found(404, ""), Some("HTTP 404".into()));
    }

    #[test]
    fn another_4xx_is_not_found_only_when_its_message_says_so() {
        assert_eq!(
            not_found(422, r#"{"error":"job not finished"}"#),
            Some("job not finished".into())
        );
        assert_eq!(not_found(422, r#"{"error":"bad metaData"}"#), None);
        assert_eq!(not_found(400, "not ready"), Some("not ready".into()));
        assert_eq!(not_found(500, "not ready"), None);
    }

    #[test]
    fn a_long_message_is_cut() {
        let long = "не найден ".repeat(50);
        let m = not_found(404, &long).unwrap();
        assert_eq!(m.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(m.ends_with('…'));
    }
}
