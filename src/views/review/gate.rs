//! `plan --fail-above AMOUNT` (issue 33): fails a pull request whose change raises the most
//! the campaign files let linkrunner commit by more than AMOUNT. That most is the sum of the
//! files' caps (`budget.monthly`: every commitment, links, reservations and running
//! autobuyers, stays under its campaign's cap), at the base revision and in the working
//! tree; a file that does not load at the base counts as added, a removed one as gone.
//! Pure: the command turns [`FailAbove::fails`] into exit code 5.

use super::diff::{CampaignDiff, money_delta, rubles};
use linkrunner_domain::money::Money;

/// The caps before and after the change, and the most they may rise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FailAbove {
    limit: Money,
    /// The sum of the caps of the campaigns that change, at the base and in the working tree
    /// (the others cancel out).
    base: Money,
    head: Money,
}

impl FailAbove {
    /// The verdict for `limit` over the changed campaigns `diffs`.
    pub(crate) fn of(diffs: &[CampaignDiff], limit: Money) -> FailAbove {
        let sum = |side: fn(&CampaignDiff) -> Option<Money>| {
            diffs
                .iter()
                .filter_map(side)
                .fold(Money::ZERO, |a, m| a.checked_add(m).unwrap_or(Money::MAX))
        };
        FailAbove {
            limit,
            base: sum(|d| d.money.cap.0),
            head: sum(|d| d.money.cap.1),
        }
    }

    /// How much the caps rise (negative when they fall).
    pub(crate) fn rise(&self) -> Money {
        Money::from_kopecks(self.head.kopecks().saturating_sub(self.base.kopecks()))
    }

    /// Whether the rise is past the limit.
    pub(crate) fn fails(&self) -> bool {
        self.rise() > self.limit
    }

    /// One sentence for the text plan.
    pub(crate) fn sentence(&self, base: &str) -> String {
        let change = money_delta(Some(self.base), Some(self.head), "RUB/month")
            .unwrap_or_else(|| "no change".into());
        let verdict = if self.fails() {
            "FAILS (exit 5)"
        } else {
            "passes"
        };
        format!(
            "--fail-above {} RUB/month {verdict}: the caps of the campaigns that change against {base} go {} → {} RUB/month ({change})",
            rubles(self.limit),
            rubles(self.base),
            rubles(self.head)
        )
    }

    /// The pull-request comment's line, right under its headline.
    pub(crate) fn markdown(&self) -> String {
        let change = money_delta(Some(self.base), Some(self.head), "RUB/month")
            .unwrap_or_else(|| "no change".into());
        if self.fails() {
            format!(
                "> **❌ Fails `--fail-above {}`:** the campaigns' caps rise by more than {} RUB/month \
                 ({} → {} RUB/month, {change}). The job exits 5; a person must accept this rise.",
                rubles(self.limit),
                rubles(self.limit),
                rubles(self.base),
                rubles(self.head)
            )
        } else {
            format!(
                "> ✅ Within `--fail-above {}`: the campaigns' caps go {} → {} RUB/month ({change}).",
                rubles(self.limit),
                rubles(self.base),
                rubles(self.head)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::diff::{FileChange, MoneyChange};
    use super::*;

    fn diff(old: Option<i64>, new: Option<i64>) -> CampaignDiff {
        CampaignDiff {
            campaign: "c".into(),
            change: FileChange::Edited,
            fields: Vec::new(),
            money: MoneyChange {
                cap: (old.map(Money::from_rubles), new.map(Money::from_rubles)),
                worst: (None, None),
            },
        }
    }

    #[test]
    fn a_rise_past_the_limit_fails_and_one_within_it_passes() {
        let raised = [diff(Some(3000), Some(30_000)), diff(None, Some(500))];
        let v = FailAbove::of(&raised, Money::from_rubles(1000));
        assert_eq!(v.rise(), Money::from_rubles(27_500));
        assert!(v.fails());
        assert!(
            v.markdown().contains("❌ Fails `--fail-above 1,000`"),
            "{}",
            v.markdown()
        );
        assert!(v.sentence("main").contains("FAILS (exit 5)"));
        let small = FailAbove::of(&[diff(Some(3000), Some(4000))], Money::from_rubles(1000));
        assert!(!small.fails(), "a rise of exactly the limit passes");
        let removed = FailAbove::of(&[diff(Some(3000), None)], Money::ZERO);
        assert!(!removed.fails());
        assert!(removed.rise().is_negative());
    }
}
