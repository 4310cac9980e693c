//! Text from outside — the marketplace's names and error bodies, campaign files, URLs —
//! made safe to show. On a terminal an ESC sequence can recolour, move the cursor, retitle
//! the window or hide what follows; a CR or a newline forges a log line; a BIDI override
//! (U+202E) reorders what a reader sees, in a terminal and in a browser; NUL cuts text short
//! for C tools. Every such character is written as a visible escape instead (`\x1b`,
//! `\r`, `\u{202e}`), so the text reads the same everywhere and hides nothing.
//!
//! [`line`] escapes all of them (a field, a log value, one line); [`block`] keeps line feeds
//! and tabs (a whole multi-line output the program laid out itself). Backslashes are left
//! alone: escapes are for reading, not for decoding back.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a screen as it is: control characters (C0, DEL, C1) and the
/// invisible formatting characters that reorder or hide text (BIDI embeddings, overrides and
/// isolates, marks, zero-width characters, line and paragraph separators, BOM).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{061C}'
            | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{FEFF}')
}

/// `s` for one line: every unsafe character escaped, line feeds and tabs included.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// `s` as a block of lines: line feeds and tabs kept, every other unsafe character escaped.
pub fn block(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

fn escape(s: &str, keep_layout: bool) -> Cow<'_, str> {
    let kept = |c: char| keep_layout && (c == '\n' || c == '\t');
    if !s.chars().any(|c| is_unsafe(c) && !kept(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if !is_unsafe(c) || kept(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_controls_and_bidi_overrides_become_visible() {
        assert_eq!(
            line("a\u{1b}[31mred\u{7}\0b\r\n\tc\u{202e}d\u{9b}e\u{2066}"),
            "a\\x1b[31mred\\x07\\0b\\r\\n\\tc\\u{202e}d\\u{9b}e\\u{2066}"
        );
    }

    #[test]
    fn a_block_keeps_its_lines_and_tabs_only() {
        assert_eq!(
            block("a\tb\nc\r\u{1b}]0;x\u{7}"),
            "a\tb\nc\\r\\x1b]0;x\\x07"
        );
    }

    #[test]
    fn plain_text_and_other_scripts_are_left_alone() {
        for s in ["plain", "Купить ссылку", "عربي", "日本語", "a\\x1b"] {
            assert!(matches!(line(s), Cow::Borrowed(_)), "{s}");
        }
    }
}
