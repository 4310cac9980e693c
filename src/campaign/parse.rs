//! Bytes → [`RawCampaign`]: size and encoding checks, YAML with limits against alias bombs
//! and deep nesting, and parser errors turned into positioned messages (with "did you mean"
//! for unknown keys). After a type error or an unknown key, the file is read again with a
//! stand-in for that value (or without that key) to find the next problem, up to
//! [`MAX_RECOVERIES`] times, so `validate` lists every problem of a file at once; a syntax
//! error still ends the search (past it, positions are guesses).

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Error as YamlError, MessageFormatter, Options, UserMessageFormatter};

use super::diag::Problems;
use super::keys;
use super::raw::RawCampaign;
use super::span::Pos;

/// Largest campaign file read, in bytes. Real campaigns are a few KiB.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Deepest nesting of YAML collections accepted; the format itself needs five.
pub(super) const MAX_DEPTH: usize = 16;
/// Most aliases (`*name`) in one file.
pub(super) const MAX_ALIASES: usize = 100;
/// Most events that alias expansion may add; stops "billion laughs" bombs early.
pub(super) const MAX_REPLAYED_EVENTS: usize = 10_000;

/// Most further problems looked for after a file's first parse error.
pub(super) const MAX_RECOVERIES: usize = 20;

/// Parses one file's bytes; on failure the problems say where and why.
pub(super) fn parse(bytes: &[u8]) -> Result<RawCampaign, Problems> {
    let mut p = Problems::default();
    if bytes.len() as u64 > MAX_FILE_BYTES {
        p.at(
            Pos::FILE,
            format!("file is larger than {MAX_FILE_BYTES} bytes"),
        );
        return Err(p);
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            p.at(
                position_of_byte(bytes, e.valid_up_to()),
                "file is not valid UTF-8 (first bad byte here)",
            );
            return Err(p);
        }
    };
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        p.at(
            Pos::FILE,
            "file is empty; a campaign needs at least `name`, `domain`, `urls` and `budget`",
        );
        return Err(p);
    }
    serde_saphyr::from_str_with_options::<RawCampaign>(text, options())
        .map_err(|e| every_problem(text, e))
}

/// How the search for the next problem gets past one.
enum Recovery {
    /// Read the file without this line (and the block under it): an unknown or repeated key.
    DropLine,
    /// Put a stand-in where the value was: a value of the wrong type.
    StandIn,
}

fn recovery(e: &YamlError) -> Option<Recovery> {
    match original(e) {
        YamlError::SerdeUnknownField { .. } | YamlError::DuplicateMappingKey { .. } => {
            Some(Recovery::DropLine)
        }
        YamlError::InvalidScalar { .. }
        | YamlError::SerdeInvalidType { .. }
        | YamlError::SerdeInvalidValue { .. }
        | YamlError::SerdeUnknownVariant { .. }
        | YamlError::InvalidBooleanStrict { .. }
        | YamlError::NullIntoString { .. }
        // A deserializer's own message (an amount of money); a scanner's (syntax) is not here.
        | YamlError::Message { .. } => Some(Recovery::StandIn),
        _ => None,
    }
}

/// The first error, then every further one found past it (see the module's map). Problems of
/// meaning are added once the file reads, only when no stand-in was needed (a stand-in value
/// would take part in checks across fields: `per_run` above a stand-in `daily_links`). A key
/// left out makes no "missing key" problem of its own: the unknown key's message says it.
fn every_problem(text: &str, first: YamlError) -> Problems {
    let mut p = Problems::default();
    let mut seen = std::collections::HashSet::new();
    let (mut stood_in, mut dropped) = (false, false);
    let mut text = text.to_string();
    let mut err = first;
    for _ in 0..=MAX_RECOVERIES {
        let pos = error_pos(&err);
        let missing = matches!(original(&err), YamlError::SerdeMissingField { .. });
        if !seen.insert(pos) || (dropped && missing) {
            break;
        }
        p.at(pos, error_message(&err));
        let Some(how) = recovery(&err) else {
            break;
        };
        let Some(next) = get_past(&text, pos, &how) else {
            break;
        };
        match how {
            Recovery::DropLine => dropped = true,
            Recovery::StandIn => stood_in = true,
        }
        match serde_saphyr::from_str_with_options::<RawCampaign>(&next, options()) {
            Ok(raw) => {
                if !stood_in && let Err(meaning) = super::validate::validate(&raw) {
                    p.extend_except(meaning, &seen);
                }
                break;
            }
            Err(e) => (text, err) = (next, e),
        }
    }
    p
}

/// `text` read past the problem at `pos`: without its line, or with the first stand-in after
/// which the parser goes on past it (a stand-in that only moves the error to a syntax error,
/// or to a problem at or before the stand-in's own end, is not taken: that problem would be
/// the stand-in's, a type the file does not have).
fn get_past(text: &str, pos: Pos, how: &Recovery) -> Option<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let at = pos.line.checked_sub(1).filter(|&i| i < lines.len())?;
    match how {
        Recovery::DropLine => {
            let indent = |l: &str| l.len() - l.trim_start().len();
            let own = indent(lines[at]);
            let end = (at + 1..lines.len())
                .find(|&i| !lines[i].trim().is_empty() && indent(lines[i]) <= own)
                .unwrap_or(lines.len());
            // Blank, not removed: the lines below keep their numbers.
            let mut kept = lines.clone();
            kept[at..end].iter_mut().for_each(|l| *l = "");
            Some(kept.join("\n"))
        }
        Recovery::StandIn => ["1", "x", "[]", "{}", "true"]
            .into_iter()
            .find_map(|stand_in| {
                let line = replace_value(lines[at], pos.column, stand_in)?;
                let mut next = lines.clone();
                next[at] = &line;
                let candidate = next.join("\n");
                let past = Pos::new(pos.line, pos.column + stand_in.chars().count());
                match serde_saphyr::from_str_with_options::<RawCampaign>(&candidate, options()) {
                    Ok(_) => Some(candidate),
                    Err(e) if after(error_pos(&e), past) && recovery(&e).is_some() => {
                        Some(candidate)
                    }
                    Err(_) => None,
                }
            }),
    }
}

/// Whether `a` comes at or after `b` in the file.
fn after(a: Pos, b: Pos) -> bool {
    (a.line, a.column) >= (b.line, b.column)
}

/// `line` with the value starting at character `column` (1-based) replaced: up to the next
/// `,`, `}` or `]` inside a flow collection, else up to a comment or the end of the line. The
/// blanks before a comment are kept: `1# …` would be one plain scalar, comment and all.
fn replace_value(line: &str, column: usize, stand_in: &str) -> Option<String> {
    let chars: Vec<char> = line.chars().collect();
    let start = column.checked_sub(1).filter(|&c| c < chars.len())?;
    let in_flow = chars[..start].iter().any(|c| *c == '{' || *c == '[');
    let mut end = (start..chars.len())
        .find(|&i| {
            (in_flow && matches!(chars[i], ',' | '}' | ']'))
                || (chars[i] == '#' && i > start && chars[i - 1].is_whitespace())
        })
        .unwrap_or(chars.len());
    while end > start && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    let before: String = chars[..start].iter().collect();
    let after: String = chars[end..].iter().collect();
    Some(format!("{before}{stand_in}{after}"))
}

pub(super) fn options() -> Options {
    let budget = serde_saphyr::budget! {
        max_depth: MAX_DEPTH,
        max_aliases: MAX_ALIASES,
        max_documents: 1,
        max_reader_input_bytes: Some(MAX_FILE_BYTES as usize),
    };
    let alias_limits = serde_saphyr::alias_limits! {
        max_total_replayed_events: MAX_REPLAYED_EVENTS,
        max_replay_stack_depth: MAX_DEPTH,
    };
    serde_saphyr::options! {
        budget: budget,
        alias_limits: alias_limits,
        strict_booleans: true,
        with_snippet: false,
    }
}

/// Line and column (1-based, columns in characters) of the byte at `offset` in a prefix
/// known to be valid UTF-8 up to `offset`.
fn position_of_byte(bytes: &[u8], offset: usize) -> Pos {
    let valid = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line = valid.matches('\n').count() + 1;
    let line_start = valid.rfind('\n').map_or(0, |i| i + 1);
    Pos::new(line, valid[line_start..].chars().count() + 1)
}

fn original(mut e: &YamlError) -> &YamlError {
    while let YamlError::AliasError { error, .. } | YamlError::WithSnippet { error, .. } = e {
        e = error;
    }
    e
}

pub(super) fn error_pos(e: &YamlError) -> Pos {
    e.location().map_or(Pos::FILE, |l| {
        Pos::new(
            usize::try_from(l.line()).unwrap_or(0),
            usize::try_from(l.column()).unwrap_or(0),
        )
    })
}

pub(super) fn error_message(e: &YamlError) -> String {
    let e = original(e);
    match e {
        YamlError::SerdeUnknownField {
            field, expected, ..
        } => keys::unknown_key_message(field, expected),
        YamlError::SerdeMissingField { field, .. } => format!("missing key `{field}`"),
        YamlError::DuplicateMappingKey { key: Some(k), .. } => format!("duplicate key `{k}`"),
        YamlError::InvalidScalar { ty, .. } if ty.starts_with('i') || ty.starts_with('u') => {
            "expected a whole number".to_string()
        }
        YamlError::Budget { breach, .. } => budget_message(breach),
        YamlError::AliasReplayLimitExceeded { .. }
        | YamlError::AliasExpansionLimitExceeded { .. }
        | YamlError::AliasReplayStackDepthExceeded { .. } => {
            format!(
                "aliases expand to more than {MAX_REPLAYED_EVENTS} YAML events; refused as an alias bomb"
            )
        }
        YamlError::SerdeUnknownVariant {
            variant, expected, ..
        } => match keys::near_miss(variant, expected) {
            Some(k) => format!("unknown value `{variant}`: did you mean `{k}`?"),
            None => format!(
                "unknown value `{variant}`; expected one of: {}",
                expected.join(", ")
            ),
        },
        _ => sanitized(&UserMessageFormatter.format_message(e)),
    }
}

fn budget_message(breach: &BudgetBreach) -> String {
    match breach {
        BudgetBreach::Depth { .. } => format!("nesting is deeper than {MAX_DEPTH} levels"),
        BudgetBreach::Documents { .. } => {
            "file holds more than one YAML document (`---`); write one campaign per file"
                .to_string()
        }
        BudgetBreach::Aliases { .. } => format!("file uses more than {MAX_ALIASES} aliases"),
        _ => "file is too large or too complex for a campaign".to_string(),
    }
}

/// Parser messages may quote file content; keep control characters out of terminals.
fn sanitized(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(yaml: &str) -> Vec<String> {
        match parse(yaml.as_bytes()) {
            Ok(_) => Vec::new(),
            Err(p) => p
                .into_diagnostics(std::path::Path::new("t.yaml"))
                .into_iter()
                .map(|d| format!("{}:{}: {}", d.line, d.column, d.message))
                .collect(),
        }
    }

    /// `found` is one problem for each of `starts`, in order, each starting with its own.
    fn assert_problems(found: &[String], starts: &[&str]) {
        assert_eq!(found.len(), starts.len(), "{found:#?}");
        for (problem, start) in found.iter().zip(starts) {
            assert!(problem.starts_with(start), "{start:?} in {found:#?}");
        }
    }

    #[test]
    fn every_problem_is_reported_after_a_type_error_and_an_unknown_key() {
        let yaml = "name: t\ndomain: https://t.example\nurls:\n  - url: https://t.example/a\n    texts: [\"#a#a#/a#\"]\nbudget:\n  monthly: 1000\n  max_link_price: 100\n  daily_links: lots\n  total_links: 50\n  colour: red\nbuy: {schedule: \"61 9 * * *\", link_type_id: 1, per_run: many}\n";

        let found = messages(yaml);

        assert_problems(
            &found,
            &[
                "9:16: expected a whole number",
                "11:3: unknown key `colour`",
                "12:57: expected a whole number",
            ],
        );
    }

    #[test]
    fn after_an_unknown_key_the_meaning_is_checked_and_no_missing_key_is_invented() {
        let file = "name: t\ndomain: https://t.example\nurls:\n  - url: https://t.example/a\n    texts: [\"#a#a#/a#\"]\nbudget:\n  monthly: 1000\n  max_link_price: 100\n  daily_links: 5\n  total_links: 50\n  colour: red\nbuy: {schedule: \"61 9 * * *\", link_type_id: 1, per_run: 5}\n";
        let found = messages(file);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found[1].starts_with("12:17: schedule `61 9 * * *`: minute `61`"),
            "{found:#?}"
        );

        let typo = messages(&file.replace("budget:", "budjet:"));
        assert_eq!(
            typo.len(),
            1,
            "the typo, not also `missing key budget`: {typo:#?}"
        );
    }

    #[test]
    fn a_type_error_before_a_comment_does_not_hide_a_misspelt_key_nor_invent_a_type() {
        let yaml = "name: t\ndomain: https://t.example\nurls:\n  - url: https://t.example/a\n    texts: [\"#a#a#/a#\"]\nbudget:\n  monthly: lots     # the cap: held links + autobuyers\n  max_link_price: 100\n  daily_links: 5\n  total_links: 50\nbuy:\n  schedule: \"0 9 * * *\"\n  link_type_id: 1\n  per_rnu: 5   # per round\n";

        let found = messages(yaml);

        assert_problems(
            &found,
            &[
                "7:12: `lots` is not an amount",
                "14:3: unknown key `per_rnu`: did you mean `per_run`?",
            ],
        );
        assert!(!found.iter().any(|f| f.contains("sequence")), "{found:#?}");
    }

    #[test]
    fn a_stand_in_keeps_the_blanks_before_a_comment() {
        assert_eq!(
            replace_value("  monthly: lots   # rubles", 12, "1").as_deref(),
            Some("  monthly: 1   # rubles")
        );
        assert_eq!(
            replace_value("budget: {monthly: lots , daily_links: 5}", 19, "1").as_deref(),
            Some("budget: {monthly: 1 , daily_links: 5}")
        );
    }

    #[test]
    fn a_syntax_error_still_ends_the_search() {
        let found = messages("name: t\ndomain: [unclosed\nbudget: 5\n");
        assert_eq!(found.len(), 1, "{found:#?}");
    }

    #[test]
    fn a_bad_byte_is_located_by_line_and_character_column() {
        let bytes = b"name: x\ndomain: \xc3\xa9\xff\n";
        assert_eq!(position_of_byte(bytes, 18), Pos::new(2, 10));
    }
}
