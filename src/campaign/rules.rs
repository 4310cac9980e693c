//! Small pure checks on single values: names, domains, URLs, anchor texts, cron schedules.
//! Each returns what is wrong in words a campaign author can act on.

use chrono::{DateTime, TimeZone, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// Longest anchor text accepted, in characters.
pub(super) const MAX_TEXT_CHARS: usize = 1000;

/// Campaign, filter and autobuyer names: `[a-z0-9][a-z0-9-]{0,62}`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if name.is_empty() || name.len() > 63 || !ok_chars || name.starts_with('-') {
        return Err(format!(
            "name `{name}` must be 1 to 63 lowercase letters, digits or `-`, starting with a letter or digit"
        ));
    }
    Ok(())
}

/// `https://Acme.example/` → `https://acme.example`. Only scheme, host and port are allowed.
pub(super) fn normalize_domain(text: &str) -> Result<String, String> {
    let u = parse_http_url(text)?;
    if u.path() != "/" || u.query().is_some() || u.fragment().is_some() {
        return Err(format!(
            "domain `{text}` must be scheme and host only, e.g. `https://acme.example`"
        ));
    }
    let host = u.host_str().unwrap_or_default();
    Ok(match u.port() {
        Some(port) => format!("{}://{host}:{port}", u.scheme()),
        None => format!("{}://{host}", u.scheme()),
    })
}

/// A promoted URL: absolute http(s), on the domain's host and port; returned normalised.
pub(super) fn check_url_on_domain(text: &str, domain: &str) -> Result<String, String> {
    let u = parse_http_url(text)?;
    let d = url::Url::parse(domain).map_err(|e| e.to_string())?;
    if u.host_str() != d.host_str() || u.port_or_known_default() != d.port_or_known_default() {
        let host = d.host_str().unwrap_or_default();
        return Err(format!(
            "URL `{text}` is not on the campaign's domain `{host}`"
        ));
    }
    if u.fragment().is_some() {
        return Err(format!("URL `{text}` must not carry a `#fragment`"));
    }
    Ok(u.to_string())
}

fn parse_http_url(text: &str) -> Result<url::Url, String> {
    let u = url::Url::parse(text).map_err(|e| format!("`{text}` is not an absolute URL ({e})"))?;
    if u.scheme() != "http" && u.scheme() != "https" {
        return Err(format!(
            "`{text}` must use http or https, not `{}`",
            u.scheme()
        ));
    }
    if u.host_str().is_none_or(str::is_empty) {
        return Err(format!("`{text}` has no host"));
    }
    if !u.username().is_empty() || u.password().is_some() {
        let mut shown = u.clone();
        // Never echo a credential, even one that is already in the file.
        let _ = (shown.set_username("***"), shown.set_password(None));
        return Err(format!("`{shown}` must not carry a user name or password"));
    }
    Ok(u)
}

/// A text holds exactly one `#a#anchor#/a#`, in that order, with a non-blank anchor.
pub(super) fn check_text(text: &str) -> Result<(), String> {
    if text.chars().count() > MAX_TEXT_CHARS {
        return Err(format!("text is longer than {MAX_TEXT_CHARS} characters"));
    }
    let (opens, closes) = (text.matches("#a#").count(), text.matches("#/a#").count());
    if opens != 1 || closes != 1 {
        return Err(format!(
            "text must hold exactly one anchor `#a#…#/a#`, found {opens} `#a#` and {closes} `#/a#`"
        ));
    }
    let start = text.find("#a#").map_or(0, |i| i + 3);
    let end = text.find("#/a#").unwrap_or(0);
    if end < start {
        return Err("text closes its anchor `#/a#` before opening it with `#a#`".to_string());
    }
    if text[start..end].trim().is_empty() {
        return Err("the anchor between `#a#` and `#/a#` is blank".to_string());
    }
    Ok(())
}

/// The parser every part of linkrunner uses for `buy.schedule`: five fields, no seconds or
/// years, day-of-month OR day-of-week as in standard cron.
pub fn parse_schedule(expr: &str) -> Result<Cron, String> {
    let fields = expr.split_whitespace().count();
    if fields != 5 || expr.contains('@') {
        return Err(format!(
            "schedule `{expr}` must have five fields (minute hour day-of-month month day-of-week), found {fields}"
        ));
    }
    let parser = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .dom_and_dow(false)
        .build();
    // The library's own message ("Component error: Number out of bounds.") names no field:
    // each field is checked here first, and said in the file's terms.
    if let Some(problem) = explain_fields(expr) {
        return Err(format!("schedule `{expr}`: {problem}"));
    }
    parser.parse(expr).map_err(|_| {
        format!(
            "schedule `{expr}` is not a cron schedule linkrunner understands: five fields, minute \
             hour day-of-month month day-of-week, each `*`, a number, a range `a-b`, a list `a,b` \
             or a step `*/n` (e.g. `0 9 * * 1-5`)"
        )
    })
}

/// The five fields: name, smallest and largest value, and the names allowed for values.
const FIELDS: [(&str, u32, u32, &[&str]); 5] = [
    ("minute", 0, 59, &[]),
    ("hour", 0, 23, &[]),
    ("day of month", 1, 31, &[]),
    (
        "month",
        1,
        12,
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
    ),
    (
        "day of week",
        0,
        7,
        &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    ),
];

/// The first field of a five-field schedule that is out of range or malformed, in words.
fn explain_fields(expr: &str) -> Option<String> {
    expr.split_whitespace()
        .zip(FIELDS)
        .find_map(|(text, (name, lo, hi, names))| {
            text.split(',')
                .find_map(|part| explain_part(part, name, lo, hi, names))
                .map(|why| format!("{name} `{text}`: {why}"))
        })
}

/// `*`, `*/n`, `a`, `a-b`, `a-b/n` (with names where the field has them).
fn explain_part(part: &str, name: &str, lo: u32, hi: u32, names: &[&str]) -> Option<String> {
    let (range, step) = match part.split_once('/') {
        Some((r, s)) => (r, Some(s)),
        None => (part, None),
    };
    if let Some(step) = step {
        match step.parse::<u32>() {
            Ok(n) if n >= 1 && n <= hi.max(1) => {}
            _ => {
                return Some(format!(
                    "step `/{step}` must be a whole number from 1 to {hi}"
                ));
            }
        }
    }
    // `?`, and the extensions `L`, `W` and `#` the parser knows: its own check decides.
    if range == "*" || range.contains(['?', 'L', 'l', 'W', 'w', '#']) {
        return None;
    }
    let value = |v: &str| -> Result<u32, String> {
        if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(v)) {
            return Ok(i as u32 + lo);
        }
        match v.parse::<u32>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(n),
            Ok(n) => Err(format!("{n} is out of range: a {name} is {lo} to {hi}")),
            Err(_) if v.is_empty() => Err("a value is missing".to_string()),
            Err(_) => Err(format!("`{v}` is not a {name}")),
        }
    };
    let (a, b) = match range.split_once('-') {
        Some((a, b)) => (value(a), Some(value(b))),
        None => (value(range), None),
    };
    match (a, b) {
        (Err(e), _) | (_, Some(Err(e))) => Some(e),
        (Ok(a), Some(Ok(b))) if a > b => Some(format!("range {a}-{b} runs backwards")),
        _ => None,
    }
}

/// Checks the schedule parses and fires within the year after `from`; `from` is fixed
/// by the caller so that validation gives the same answer every day.
pub(super) fn check_schedule(expr: &str, from: DateTime<Utc>) -> Result<(), String> {
    let cron = parse_schedule(expr)?;
    let horizon = from + chrono::Duration::days(366);
    match cron.find_next_occurrence(&from, false) {
        Ok(next) if next <= horizon => Ok(()),
        _ => Err(format!("schedule `{expr}` never fires within a year")),
    }
}

/// The fixed start for [`check_schedule`]: a non-leap year, so `29 2` is refused as it
/// would fire only once in four years.
pub(super) fn schedule_reference_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_is_normalised_to_lowercase_scheme_and_host() {
        assert_eq!(
            normalize_domain("HTTPS://Acme.Example/").unwrap(),
            "https://acme.example"
        );
    }

    #[test]
    fn a_domain_keeps_a_non_default_port() {
        assert_eq!(
            normalize_domain("http://acme.example:8080").unwrap(),
            "http://acme.example:8080"
        );
    }

    #[test]
    fn a_domain_with_a_query_is_refused() {
        assert!(normalize_domain("https://acme.example/?a=1").is_err());
    }

    #[test]
    fn a_url_on_the_domain_is_accepted_whatever_the_case_of_its_host() {
        let url =
            check_url_on_domain("https://ACME.example/shoes", "https://acme.example").unwrap();
        assert_eq!(url, "https://acme.example/shoes");
    }

    #[test]
    fn a_url_on_a_subdomain_is_not_on_the_domain() {
        assert!(check_url_on_domain("https://www.acme.example/", "https://acme.example").is_err());
    }

    #[test]
    fn a_url_on_another_port_is_not_on_the_domain() {
        assert!(check_url_on_domain("https://acme.example:8443/", "https://acme.example").is_err());
    }

    #[test]
    fn a_url_with_a_fragment_is_refused() {
        assert!(check_url_on_domain("https://acme.example/#top", "https://acme.example").is_err());
    }

    #[test]
    fn a_text_with_one_anchor_anywhere_is_accepted() {
        assert_eq!(check_text("#a#shoes#/a#"), Ok(()));
        assert_eq!(check_text("buy #a#shoes#/a# now"), Ok(()));
    }

    #[test]
    fn a_text_longer_than_the_limit_is_refused() {
        let text = format!("#a#x#/a#{}", "y".repeat(MAX_TEXT_CHARS));
        assert!(check_text(&text).unwrap_err().contains("longer than"));
    }

    #[test]
    fn names_allow_digits_first_and_inner_dashes() {
        assert_eq!(check_name("2024-shoes"), Ok(()));
    }

    #[test]
    fn names_refuse_spaces() {
        assert!(check_name("acme shoes").is_err());
    }

    #[test]
    fn day_of_month_and_day_of_week_combine_with_or_as_in_standard_cron() {
        // 2025-03-01 is a Saturday: "the 1st or a Monday" first fires on the 1st itself.
        let cron = parse_schedule("0 9 1 * 1").unwrap();
        let next = cron
            .find_next_occurrence(&schedule_reference_time(), false)
            .unwrap();
        assert_eq!(next.to_rfc3339(), "2025-03-01T09:00:00+00:00");
    }

    #[test]
    fn cron_problems_are_said_in_the_files_terms_not_the_librarys() {
        let said = |e: &str| parse_schedule(e).unwrap_err();
        assert_eq!(
            said("61 9 * * *"),
            "schedule `61 9 * * *`: minute `61`: 61 is out of range: a minute is 0 to 59"
        );
        assert_eq!(
            said("0 9 * 13 *"),
            "schedule `0 9 * 13 *`: month `13`: 13 is out of range: a month is 1 to 12"
        );
        assert_eq!(
            said("0 9 * * mon-xyz"),
            "schedule `0 9 * * mon-xyz`: day of week `mon-xyz`: `xyz` is not a day of week"
        );
        assert_eq!(
            said("*/0 9 * * *"),
            "schedule `*/0 9 * * *`: minute `*/0`: step `/0` must be a whole number from 1 to 59"
        );
        assert_eq!(
            said("0 17-9 * * *"),
            "schedule `0 17-9 * * *`: hour `17-9`: range 17-9 runs backwards"
        );
        for fine in [
            "0 9 * * 1-5",
            "*/15 8-18 * * mon-fri",
            "0 0 1,15 jan,jul *",
            "30 6 * * 0,7",
        ] {
            assert!(parse_schedule(fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn a_schedule_with_seconds_is_refused() {
        assert!(parse_schedule("0 0 9 * * *").is_err());
    }

    #[test]
    fn a_yearly_schedule_fires_within_a_year() {
        assert_eq!(
            check_schedule("0 0 1 1 *", schedule_reference_time()),
            Ok(())
        );
    }
}
