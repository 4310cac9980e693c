//! The month as a picture on the status page: the commitment at the end of each UTC day of
//! the month so far against the cap, drawn on the server as inline SVG (no script, no
//! external asset: the page's Content-Security-Policy stays `default-src 'none'`).
//!
//! - [`month_chart`]: one bar per day, the cap a dashed horizontal line, the axes labelled in
//!   rubles and days; the summary (every campaign) and one campaign's page draw it. It
//!   carries a `<title>` and `<desc>` for screen readers, and a text alternative beside it
//!   with the figures (where the month began, where it is, the biggest move of a day) and
//!   the day-by-day table.
//! - [`sparkline`]: the same line small, one per row of the campaign table, with its figures
//!   in its `<title>`.
//!
//! Pure functions of a [`DaySeries`] (`views::days`); pixel positions are floating point,
//! the figures shown are the journal's kopecks. A leaf of `http/`: the page's helpers
//! (`super::page`) draw it, so it takes their text already escaped and imports none of them.

use std::fmt::Write as _;

use crate::views::days::DaySeries;
use linkrunner_domain::money::Money;

/// The chart's size in CSS pixels (it scales down on a narrow screen).
const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 190.0;
/// Room for the rubles on the left, the days below.
const LEFT: f64 = 64.0;
const RIGHT: f64 = 8.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 22.0;
/// Gridlines (and labels) above zero on the money axis.
const TICKS: i64 = 4;

/// A sparkline's size (the stylesheet's `svg.spark`).
const SPARK_WIDTH: f64 = 93.0;
const SPARK_HEIGHT: f64 = 18.0;

/// The month's chart of `s`: `id` names its elements (unique on the page, `[a-z-]`),
/// `what_html` says whose commitment it is ("every campaign", a campaign's name), already
/// escaped for HTML.
pub(crate) fn month_chart(s: &DaySeries, id: &str, what_html: &str) -> String {
    let mut o = String::with_capacity(4096);
    let top = axis_top(s);
    let pw = WIDTH - LEFT - RIGHT;
    let ph = HEIGHT - TOP - BOTTOM;
    let y = |m: Money| TOP + ph - ph * share(m, top);
    let slot = pw / f64::from(s.days);
    let today = s.closes.len();
    let now = s.closes.last().copied().unwrap_or(s.start);
    let _ = write!(
        o,
        "<figure class=\"month\"><svg class=\"chart\" id=\"{id}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" \
         width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         data-days=\"{}\" data-today=\"{today}\" data-cap=\"{}\" data-committed=\"{now}\">\
         <title id=\"{id}-title\">Monthly commitment of {} per day of {}, against the cap</title>\
         <desc id=\"{id}-desc\">{}</desc>",
        s.days,
        s.cap,
        what_html,
        s.month,
        figures(s)
    );
    for i in 0..=TICKS {
        let m = Money::from_kopecks(top.kopecks() / TICKS * i);
        let gy = y(m);
        let _ = write!(
            o,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{gy:.1}\" y2=\"{gy:.1}\"/>\
             <text class=\"ylabel\" x=\"{}\" y=\"{:.1}\">{m}</text>",
            WIDTH - RIGHT,
            LEFT - 4.0,
            gy + 4.0
        );
    }
    for (i, close) in s.closes.iter().enumerate() {
        let day = i + 1;
        let value = (*close).max(Money::ZERO);
        let (bx, by) = (LEFT + slot * i as f64, y(value));
        let over = if s.cap.kopecks() > 0 && value > s.cap {
            " over"
        } else {
            ""
        };
        let _ = write!(
            o,
            "<rect class=\"day{over}\" data-day=\"{day}\" data-value=\"{close}\" x=\"{:.1}\" y=\"{by:.1}\" \
             width=\"{:.1}\" height=\"{:.1}\"><title>{} day {day}: {close} RUB</title></rect>",
            bx + 1.0,
            (slot - 2.0).max(1.0),
            (TOP + ph - by).max(0.0),
            s.month
        );
    }
    for day in day_labels(s.days) {
        let _ = write!(
            o,
            "<text class=\"xlabel\" x=\"{:.1}\" y=\"{}\">{day}</text>",
            LEFT + slot * (f64::from(day) - 0.5),
            HEIGHT - 6.0
        );
    }
    if s.cap.kopecks() > 0 {
        let cy = y(s.cap);
        let _ = write!(
            o,
            "<line class=\"cap\" id=\"{id}-cap\" data-value=\"{}\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{cy:.1}\" y2=\"{cy:.1}\"/>\
             <text class=\"caplabel\" x=\"{}\" y=\"{:.1}\">cap {} RUB</text>",
            s.cap,
            WIDTH - RIGHT,
            WIDTH - RIGHT - 4.0,
            cy - 4.0,
            s.cap
        );
    }
    o.push_str("</svg>");
    let _ = write!(
        o,
        "<figcaption id=\"{id}-text\">{}</figcaption>",
        figures(s)
    );
    day_table(&mut o, s);
    o.push_str("</figure>");
    o
}

/// The figures of the month in words: the text alternative of the chart. Only the month and
/// amounts: nothing in it needs escaping.
pub(crate) fn figures(s: &DaySeries) -> String {
    let day = s.closes.len();
    let now = s.closes.last().copied().unwrap_or(s.start);
    let mut t = format!(
        "{}: the month began at {} RUB; at the end of day {day} of {} the commitment is {now} RUB",
        s.month, s.start, s.days
    );
    if s.cap.kopecks() > 0 {
        let _ = write!(t, " ({}% of the {} RUB cap)", percent(now, s.cap), s.cap);
    } else {
        t.push_str(" (no cap)");
    }
    match s.biggest_move() {
        Some((d, m)) if m.is_negative() => {
            let _ = write!(
                t,
                "; the biggest move of a day: −{} RUB on day {d}",
                Money::from_kopecks(-m.kopecks())
            );
        }
        Some((d, m)) => {
            let _ = write!(t, "; the biggest move of a day: +{m} RUB on day {d}");
        }
        None => t.push_str("; nothing moved this month"),
    }
    t.push('.');
    t
}

/// The closes as a table, folded away: the figures behind every bar.
fn day_table(o: &mut String, s: &DaySeries) {
    o.push_str(
        "<details><summary>Day by day</summary><table class=\"days\"><thead><tr><th>Day</th>\
         <th>Commitment at the day's end, RUB</th><th>Change, RUB</th></tr></thead><tbody>",
    );
    let mut before = s.start;
    for (day, close) in (1..).zip(&s.closes) {
        let change = Money::from_kopecks(close.kopecks() - before.kopecks());
        before = *close;
        let _ = write!(
            o,
            "<tr><td class=\"n\">{}-{day:02}</td><td class=\"n\">{close}</td><td class=\"n\">{change}</td></tr>",
            s.month
        );
    }
    o.push_str("</tbody></table></details>");
}

/// A small line of the month for a table row: a point at the end of each day (a flat stretch
/// by its ends only, so a row stays a few hundred bytes), no axes, the cap a dashed line, the
/// figures in its `<title>` (its accessible name). Its size is the stylesheet's.
pub(crate) fn sparkline(s: &DaySeries) -> String {
    let top = axis_top(s);
    let h = SPARK_HEIGHT - 2.0;
    let y = |m: Money| 1.0 + h - h * share(m.max(Money::ZERO), top);
    let slot = SPARK_WIDTH / f64::from(s.days);
    let now = s.closes.last().copied().unwrap_or(s.start);
    let line: Vec<Money> = std::iter::once(s.start)
        .chain(s.closes.iter().copied())
        .collect();
    let mut points = String::new();
    for (i, m) in line.iter().enumerate() {
        let flat = i > 0 && i + 1 < line.len() && line[i - 1] == *m && line[i + 1] == *m;
        if !flat {
            let sep = if points.is_empty() { "" } else { " " };
            let _ = write!(points, "{sep}{:.0},{:.0}", slot * i as f64, y(*m));
        }
    }
    let mut o = format!(
        "<svg class=\"spark\" role=\"img\"><title>{}: from {} to {now} RUB</title>",
        s.month, s.start
    );
    if s.cap.kopecks() > 0 {
        let cy = y(s.cap);
        let _ = write!(
            o,
            "<line class=\"cap\" x1=\"0\" x2=\"{SPARK_WIDTH}\" y1=\"{cy:.0}\" y2=\"{cy:.0}\"/>"
        );
    }
    let _ = write!(o, "<polyline points=\"{points}\"/></svg>");
    o
}

/// The money at the top of the axis: a round number of rubles at or above the cap and the
/// highest close, so the cap line and every bar fit.
fn axis_top(s: &DaySeries) -> Money {
    let high = s.cap.max(s.peak()).kopecks().max(100);
    let step = nice_step((high + TICKS - 1) / TICKS);
    Money::from_kopecks(step.saturating_mul(TICKS))
}

/// The smallest of 1, 2, 2.5, 5 × 10ⁿ rubles at or above `kopecks` (at least 1 ruble).
fn nice_step(kopecks: i64) -> i64 {
    let mut power: i64 = 100;
    loop {
        for mult in [10, 20, 25, 50] {
            let step = power.saturating_mul(mult) / 10;
            if step >= kopecks {
                return step;
            }
        }
        if power > i64::MAX / 100 {
            return kopecks;
        }
        power *= 10;
    }
}

/// `used` in whole percent of `cap` (positive), rounded down, as the page's bars have it.
fn percent(used: Money, cap: Money) -> i128 {
    i128::from(used.kopecks().max(0)) * 100 / i128::from(cap.kopecks().max(1))
}

/// `m` as a share of `top`, 0 to 1.
fn share(m: Money, top: Money) -> f64 {
    if top.kopecks() <= 0 {
        return 0.0;
    }
    (m.kopecks().max(0) as f64 / top.kopecks() as f64).min(1.0)
}

/// The days labelled under the chart: the 1st, every 5th, the last.
fn day_labels(days: u32) -> impl Iterator<Item = u32> {
    (1..=days).filter(move |d| *d == 1 || d % 5 == 0 && days - d >= 2 || *d == days)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::days::series;
    use crate::views::month::Month;

    fn november(deltas: &[i64], committed: i64, cap: i64) -> DaySeries {
        let kop: Vec<i64> = deltas.iter().map(|r| r * 100).collect();
        series(
            Month::parse("2026-11").unwrap(),
            &kop,
            Money::from_rubles(committed),
            Money::from_rubles(cap),
        )
    }

    #[test]
    fn the_axis_ends_at_a_round_number_of_rubles_above_the_cap_and_the_peak() {
        assert_eq!(nice_step(1), 100);
        assert_eq!(nice_step(101), 200);
        assert_eq!(nice_step(75_000), 100_000);
        assert_eq!(nice_step(230_000), 250_000);
        assert_eq!(axis_top(&november(&[0], 0, 3000)), Money::from_rubles(4000));
        assert_eq!(
            axis_top(&november(&[5000], 5000, 3000)),
            Money::from_rubles(8000)
        );
        assert_eq!(axis_top(&november(&[], 0, 0)), Money::from_rubles(4));
    }

    #[test]
    fn the_chart_draws_a_bar_per_day_so_far_the_cap_line_and_labels_in_rubles() {
        let s = november(&[150, 0, 0, 2000, 0, -300], 1850, 3000);
        let svg = month_chart(&s, "acme-month", "acme");
        assert!(svg.starts_with("<figure class=\"month\"><svg class=\"chart\" id=\"acme-month\""));
        assert_eq!(svg.matches("<rect class=\"day").count(), 6);
        assert!(svg.contains("data-day=\"4\" data-value=\"2150\""), "{svg}");
        assert!(svg.contains("data-day=\"6\" data-value=\"1850\""), "{svg}");
        assert!(
            svg.contains("<title>2026-11 day 4: 2150 RUB</title>"),
            "{svg}"
        );
        assert!(svg.contains(
            "<line class=\"cap\" id=\"acme-month-cap\" data-value=\"3000\" x1=\"64\" x2=\"632\" y1=\"49.5\" y2=\"49.5\"/>"
        ), "{svg}");
        assert!(svg.contains(">cap 3000 RUB</text>"), "{svg}");
        for label in [
            ">0</text>",
            ">1000</text>",
            ">4000</text>",
            ">1</text>",
            ">15</text>",
            ">30</text>",
        ] {
            assert!(svg.contains(label), "{label}: {svg}");
        }
        assert!(
            !svg.contains(">28</text>") && !svg.contains(">2</text>"),
            "{svg}"
        );
        assert!(svg.contains("aria-labelledby=\"acme-month-title acme-month-desc\""));
        assert!(svg.contains(
            "<figcaption id=\"acme-month-text\">2026-11: the month began at 0 RUB; at the end of day 6 of 30 \
             the commitment is 1850 RUB (61% of the 3000 RUB cap); the biggest move of a day: +2000 RUB on day 4.</figcaption>"
        ), "{svg}");
        assert!(svg.contains(
            "<td class=\"n\">2026-11-06</td><td class=\"n\">1850</td><td class=\"n\">-300</td>"
        ));
        assert!(!svg.contains("class=\"day over\""));
        assert!(!svg.contains("<script") && !svg.contains("http"));
    }

    #[test]
    fn days_over_the_cap_are_marked_and_a_release_is_told_as_a_fall() {
        let s = november(&[3500, -1200], 2300, 3000);
        let svg = month_chart(&s, "m", "every campaign");
        assert_eq!(svg.matches("class=\"day over\"").count(), 1, "{svg}");
        assert!(svg.contains("of every campaign per day"), "{svg}");
        assert!(
            figures(&s).ends_with("the biggest move of a day: +3500 RUB on day 1."),
            "{}",
            figures(&s)
        );
        let fall = november(&[0, -1200], 800, 3000);
        assert!(
            figures(&fall).contains("−1200 RUB on day 2"),
            "{}",
            figures(&fall)
        );
        let quiet = november(&[0, 0], 0, 0);
        assert!(figures(&quiet).contains("(no cap); nothing moved this month"));
        assert!(!month_chart(&quiet, "q", "q").contains("class=\"cap\""));
    }

    #[test]
    fn a_sparkline_steps_where_the_line_moves_and_stays_small() {
        let s = november(&[0, 0, 1000, 0, 0, 500], 1500, 3000);
        let svg = sparkline(&s);
        assert!(
            svg.contains("points=\"0,17 6,17 9,13 16,13 19,11\""),
            "{svg}"
        );
        assert!(
            svg.contains("<title>2026-11: from 0 to 1500 RUB</title>"),
            "{svg}"
        );
        assert!(svg.contains("<line class=\"cap\""), "{svg}");
        let busy = november(&[10; 30], 300, 3000);
        assert!(sparkline(&busy).len() < 360, "{}", sparkline(&busy).len());
    }
}
