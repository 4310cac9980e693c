//! Bytes → [`RawCampaign`]: size and encoding checks, YAML with limits against alias bombs
//! and deep nesting, and parser errors turned into positioned messages (with "did you mean"
//! for unknown keys). Stops at the first syntax or type error: past it, positions are guesses.

use serde_saphyr::budget::BudgetBreach;
use serde_saphyr::{Error as YamlError, MessageFormatter, Options, UserMessageFormatter};

use super::diag::Problems;
use super::keys;
use super::raw::RawCampaign;
use super::span::Pos;

/// Largest campaign file read, in bytes. Real campaigns are a few KiB.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// Deepest nesting of YAML collections accepted; the format itself needs five.
pub const MAX_DEPTH: usize = 16;
/// Most aliases (`*name`) in one file.
pub const MAX_ALIASES: usize = 100;
/// Most events that alias expansion may add; stops "billion laughs" bombs early.
pub const MAX_REPLAYED_EVENTS: usize = 10_000;

/// Parses one file's bytes; on failure the problems say where and why.
pub fn parse(bytes: &[u8]) -> Result<RawCampaign, Problems> {
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
    serde_saphyr::from_str_with_options::<RawCampaign>(text, options()).map_err(|e| {
        p.at(error_pos(&e), error_message(&e));
        p
    })
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

    #[test]
    fn a_bad_byte_is_located_by_line_and_character_column() {
        let bytes = b"name: x\ndomain: \xc3\xa9\xff\n";
        assert_eq!(position_of_byte(bytes, 18), Pos::new(2, 10));
    }
}
