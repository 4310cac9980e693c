//! The link list's lag behind purchases (issue 32, item 3), learned from linkrunner's own
//! purchases — pure; `plan` shows it.
//!
//! The list shows a link some time after its purchase. In that window a page an autobuyer
//! just took is not yet shown as held, so a buy round on the same URL may buy it again (the
//! re-read right before a purchase, `decide::contested`, cannot see it either). The journal
//! keeps, for each link a purchase of ours bought, how long after the purchase a read of the
//! list first showed it (`HeldLink::listed_after_ms`; the reads measure it, so it is an upper
//! bound). [`learned_lag`] takes the largest of the campaign's last [`LAG_SAMPLE`]; where buy
//! rounds and a running autobuyer share a URL, [`lag_warning`] says how long the window is and
//! how to close it (`buy.skip_autobuyer_urls`). Tested below and through `plan` against a
//! lagging sandbox list by `tests/it/engine` `contested::plan_shows_the_list_lag_learned_from_our_purchases_where_rounds_and_an_autobuyer_share_a_url`.

use crate::campaign::Campaign;

use super::contested::{LeftToAutobuyer, covered_by_autobuyers};
use super::recorded::Recorded;

/// How many of the campaign's latest measured purchases the lag is learned from: recent
/// enough to follow the marketplace, enough that one quick read does not hide a slow list.
pub(crate) const LAG_SAMPLE: usize = 20;

/// The lag learned: the largest of the last [`LAG_SAMPLE`] measurements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ListLag {
    pub(crate) millis: i64,
    /// How many measurements it was learned from (1 to [`LAG_SAMPLE`]).
    pub(crate) measured: usize,
}

/// The largest time between a purchase and the first read that showed its link, over the
/// campaign's last [`LAG_SAMPLE`] purchases the list has shown; `None` before any.
pub(crate) fn learned_lag(r: &Recorded) -> Option<ListLag> {
    let mut measured: Vec<_> = r
        .held
        .iter()
        .filter_map(|h| Some((h.bought_at, h.listed_after_ms?)))
        .collect();
    measured.sort_by_key(|(bought, _)| std::cmp::Reverse(*bought));
    measured.truncate(LAG_SAMPLE);
    let millis = measured.iter().map(|(_, ms)| (*ms).max(0)).max()?;
    Some(ListLag {
        millis,
        measured: measured.len(),
    })
}

/// Buy rounds and a running autobuyer share URLs: how long the list lags, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LagWarning {
    pub(crate) lag: Option<ListLag>,
    pub(crate) shared: Vec<LeftToAutobuyer>,
}

/// The warning for a campaign whose buy rounds buy on a URL a running autobuyer covers; `None`
/// without buy rounds, with `buy.skip_autobuyer_urls: true` (those URLs are left to the
/// autobuyer) or where no autobuyer covers a URL of the file.
pub(crate) fn lag_warning(c: &Campaign, r: &Recorded) -> Option<LagWarning> {
    let buy = c.buy.as_ref()?;
    if buy.skip_autobuyer_urls {
        return None;
    }
    let shared = covered_by_autobuyers(c, r);
    (!shared.is_empty()).then(|| LagWarning {
        lag: learned_lag(r),
        shared,
    })
}

impl LagWarning {
    /// The `plan` line.
    pub(crate) fn describe(&self) -> String {
        const SHOWN: usize = 5;
        let mut urls: Vec<String> = self
            .shared
            .iter()
            .take(SHOWN)
            .map(|s| format!("{} (autobuyer {})", s.url, s.autobuyer))
            .collect();
        if self.shared.len() > SHOWN {
            urls.push(format!("{} more URL(s)", self.shared.len() - SHOWN));
        }
        let head = match self.lag {
            Some(l) => format!(
                "the link list lags up to {} s behind purchases (the largest of the last {} measured): a page an autobuyer takes in that window",
                tenths_up(l.millis),
                l.measured
            ),
            None => "the link list's lag behind purchases is not measured yet (the list has shown no purchase of this campaign): a page an autobuyer takes before the list shows it".into(),
        };
        format!(
            "{head} can be bought again for {}; set buy.skip_autobuyer_urls: true to leave such URLs to the autobuyer",
            urls.join(", ")
        )
    }
}

/// Milliseconds as seconds with one decimal, rounded up (a lag is never shown shorter).
fn tenths_up(ms: i64) -> String {
    let tenths = (ms.max(0) + 99) / 100;
    format!("{}.{}", tenths / 10, tenths % 10)
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, Utc};

    use super::*;
    use crate::decide::contested::tests::{held, recorded, with_autobuyer};

    const TRAIL: &str = "https://acme.example/trail";

    /// A link bought `ago_s` seconds ago that the list first showed `after_ms` later.
    fn measured(r: &mut Recorded, link: i64, ago_s: i64, after_ms: Option<i64>) {
        let mut h = held(link, link, 11);
        h.bought_at = Utc::now() - Duration::seconds(ago_s);
        h.listed_after_ms = after_ms;
        r.held.push(h);
    }

    #[test]
    fn the_lag_is_the_largest_of_the_latest_measurements() {
        let mut r = recorded();
        assert_eq!(learned_lag(&r), None, "nothing measured yet");
        measured(&mut r, 1, 5000, Some(9_000));
        for i in 0..LAG_SAMPLE as i64 {
            measured(&mut r, 10 + i, 100 - i, Some(1_000 + i * 50));
        }
        measured(&mut r, 99, 1, None);

        let lag = learned_lag(&r).expect("learned");

        assert_eq!(
            lag,
            ListLag {
                millis: 1_000 + (LAG_SAMPLE as i64 - 1) * 50,
                measured: LAG_SAMPLE
            },
            "the old 9 s is past the sample, the unshown link measures nothing"
        );
    }

    #[test]
    fn rounds_beside_a_running_autobuyer_are_warned_with_the_lag_and_the_way_out() {
        let mut r = recorded();
        measured(&mut r, 1, 60, Some(2_010));
        measured(&mut r, 2, 30, Some(700));

        let w = lag_warning(&with_autobuyer(false, "running"), &r).expect("a shared URL");

        assert_eq!(
            w.describe(),
            format!(
                "the link list lags up to 2.1 s behind purchases (the largest of the last 2 measured): a page an autobuyer takes in that window can be bought again for {TRAIL} (autobuyer auto); set buy.skip_autobuyer_urls: true to leave such URLs to the autobuyer"
            )
        );
    }

    #[test]
    fn an_unmeasured_lag_is_said_so() {
        let w = lag_warning(&with_autobuyer(false, "running"), &recorded()).unwrap();

        assert!(
            w.describe()
                .starts_with("the link list's lag behind purchases is not measured yet"),
            "{}",
            w.describe()
        );
    }

    #[test]
    fn no_warning_where_the_urls_are_left_to_the_autobuyer_or_none_runs() {
        let r = recorded();
        assert_eq!(lag_warning(&with_autobuyer(true, "running"), &r), None);
        assert_eq!(lag_warning(&with_autobuyer(false, "stopped"), &r), None);
    }

    #[test]
    fn a_lag_is_never_shown_shorter() {
        assert_eq!(tenths_up(2_001), "2.1");
        assert_eq!(tenths_up(2_000), "2.0");
        assert_eq!(tenths_up(0), "0.0");
        assert_eq!(tenths_up(-5), "0.0");
    }
}
