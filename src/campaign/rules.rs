//! Small pure checks on single values: names, domains, URLs, anchor texts, cron schedules.
//! Each returns what is wrong in words a campaign author can act on.

use chrono::{DateTime, TimeZone, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};

/// Longest anchor text accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 1000;

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
pub fn normalize_domain(text: &str) -> Result<String, String> {
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
pub fn check_url_on_domain(text: &str, domain: &str) -> Result<String, String> {
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
pub fn check_text(text: &str) -> Result<(), String> {
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
    parser
        .parse(expr)
        .map_err(|e| format!("schedule `{expr}` is not valid cron: {e}"))
}

/// Checks the schedule parses and fires within the year after `from`; `from` is fixed
/// by the caller so that validation gives the same answer every day.
pub fn check_schedule(expr: &str, from: DateTime<Utc>) -> Result<(), String> {
    let cron = parse_schedule(expr)?;
    let horizon = from + chrono::Duration::days(366);
    match cron.find_next_occurrence(&from, false) {
        Ok(next) if next <= horizon => Ok(()),
        _ => Err(format!("schedule `{expr}` never fires within a year")),
    }
}

/// The fixed start for [`check_schedule`]: a non-leap year, so `29 2` is refused as it
/// would fire only once in four years.
pub fn schedule_reference_time() -> DateTime<Utc> {
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
