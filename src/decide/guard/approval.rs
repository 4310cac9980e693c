//! Approval above a threshold (issue 33, `budget.approve_above`): the most that changes may
//! add to a campaign's monthly commitment since the last approval without a person.
//!
//! The approved amount starts as a baseline: the first time a campaign is seen with a
//! threshold, the monthly cap the journal already recorded for it (the cap in force before
//! the edit that set the threshold), or the file's `budget.monthly` for a campaign the
//! journal has never seen. Each `linkrunner resolve approve` then approves the cap the file
//! asks. The engine spends under the file's cap, never past the approved amount plus the
//! threshold ([`linkrunner_domain::records::Approval::cap_for`]; the journal records that cap, so
//! the reservation the database checks holds it). It is cumulative: the approved amount moves
//! only with an approval, so ten small raises add up against the same threshold. While the
//! file asks more, the campaign waits for an operator, with the amount and the command.

use crate::campaign::Campaign;
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{Approval, BudgetSnapshot};

/// The threshold the file sets, if it sets one (what a pass records with the caps).
pub(crate) fn threshold(c: &Campaign) -> Option<Money> {
    c.budget.approve_above
}

/// The approval a pass of `c` works under, given the journal's budget `b`: the journal's
/// approved amount, or the baseline a first pass records; `None` when the file sets no
/// threshold.
pub(crate) fn approval_for(c: &Campaign, b: &BudgetSnapshot) -> Option<Approval> {
    let above = threshold(c)?;
    let mut a = b.approval.clone().unwrap_or_else(|| Approval {
        approved: b.cap,
        above: None,
        wanted: c.budget.monthly,
        by: linkrunner_domain::records::APPROVAL_BASELINE_BY.into(),
        at: chrono::DateTime::UNIX_EPOCH,
        reason: "baseline".into(),
    });
    a.above = Some(above);
    a.wanted = c.budget.monthly;
    Some(a)
}

/// The monthly cap a pass of `c` spends under: the file's, never past the approved amount
/// plus the threshold.
pub(crate) fn monthly_cap(c: &Campaign, b: &BudgetSnapshot) -> Money {
    match approval_for(c, b) {
        Some(a) => a.cap_for(c.budget.monthly),
        None => c.budget.monthly,
    }
}

/// Whether a step that brings the commitment to `after` goes past what may be committed
/// without a person.
pub(crate) fn step_waits(a: &Approval, after: Money) -> bool {
    after > a.ceiling()
}

/// A campaign whose file asks more than may be committed without a person.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Waiting {
    /// The cap the file asks.
    wanted: Money,
    approved: Money,
    above: Money,
    /// What the commitment may reach meanwhile: `approved + above`.
    pub(crate) ceiling: Money,
    /// What `resolve approve` approves beyond the approved amount: `wanted - approved`.
    pub(crate) to_approve: Money,
}

/// Whether the campaign waits for `resolve approve`: its threshold is set and the cap its
/// file asks is past the approved amount plus the threshold.
pub(crate) fn waiting(a: &Approval) -> Option<Waiting> {
    let above = a.above?;
    if !step_waits(a, a.wanted) {
        return None;
    }
    Some(Waiting {
        wanted: a.wanted,
        approved: a.approved,
        above,
        ceiling: a.ceiling(),
        to_approve: a
            .wanted
            .checked_sub(a.approved)
            .unwrap_or(Money::ZERO)
            .max(Money::ZERO),
    })
}

/// [`waiting`] from the journal's budget alone (status, the API, the page, the gauges).
pub(crate) fn waiting_in(b: &BudgetSnapshot) -> Option<Waiting> {
    b.approval.as_ref().and_then(waiting)
}

impl Waiting {
    /// The operator's sentence: the amount, what is spent meanwhile, and the command.
    pub(crate) fn describe(&self, campaign: &str) -> String {
        format!(
            "waiting for approval of {} RUB/month: budget.monthly {} RUB is past the approved {} RUB plus \
             budget.approve_above {} RUB; the commitment stays within {} RUB until \
             `linkrunner resolve approve {campaign} --reason …`",
            self.to_approve, self.wanted, self.approved, self.above, self.ceiling
        )
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn rub(r: i64) -> Money {
        Money::from_rubles(r)
    }

    fn approval(approved: i64, above: i64, wanted: i64) -> Approval {
        Approval {
            approved: rub(approved),
            above: Some(rub(above)),
            wanted: rub(wanted),
            by: "ops".into(),
            at: chrono::DateTime::UNIX_EPOCH,
            reason: "test".into(),
        }
    }

    #[test]
    fn a_raise_past_the_threshold_waits_with_the_exact_amount() {
        let w = waiting(&approval(3000, 1000, 30_000)).unwrap();
        assert_eq!(w.to_approve, rub(27_000));
        assert_eq!(w.ceiling, rub(4000));
        let said = w.describe("acme");
        assert!(said.contains("27000"), "{said}");
        assert!(
            said.contains("linkrunner resolve approve acme --reason"),
            "{said}"
        );
        assert_eq!(approval(3000, 1000, 30_000).cap_for(rub(30_000)), rub(4000));
    }

    #[test]
    fn a_raise_within_the_threshold_does_not_wait() {
        assert_eq!(waiting(&approval(3000, 1000, 4000)), None);
        assert_eq!(approval(3000, 1000, 4000).cap_for(rub(4000)), rub(4000));
        let mut no_threshold = approval(3000, 1000, 30_000);
        no_threshold.above = None;
        assert_eq!(waiting(&no_threshold), None);
        assert_eq!(no_threshold.cap_for(rub(30_000)), rub(30_000));
    }

    #[test]
    fn two_small_raises_that_together_pass_the_threshold_wait() {
        // 3,000 approved, 1,000 without a person: +600 passes, +600 more does not.
        assert_eq!(waiting(&approval(3000, 1000, 3600)), None);
        let w = waiting(&approval(3000, 1000, 4200)).unwrap();
        assert_eq!(w.to_approve, rub(1200));
        assert!(step_waits(&approval(3000, 1000, 4200), rub(4100)));
        assert!(!step_waits(&approval(3000, 1000, 4200), rub(4000)));
    }

    proptest! {
        /// However the file's cap is raised and lowered, without an approval the cap a pass
        /// spends under never passes the approved amount plus the threshold, nor the file's;
        /// every commitment within it is a step that does not wait.
        #[test]
        fn raises_never_pass_what_is_approved_without_a_person(
            approved in 0i64..100_000, above in 1i64..10_000,
            raises in proptest::collection::vec(0i64..50_000, 1..10),
        ) {
            for wanted in raises {
                let a = approval(approved, above, wanted);
                let cap = a.cap_for(rub(wanted));
                prop_assert!(cap <= rub(approved + above));
                prop_assert!(cap <= rub(wanted));
                prop_assert!(!step_waits(&a, cap));
                prop_assert_eq!(waiting(&a).is_some(), cap < rub(wanted));
            }
        }

        /// An approval approves what the file asks: nothing waits and the file's cap holds.
        #[test]
        fn after_an_approval_nothing_waits(wanted in 0i64..100_000, above in 1i64..10_000) {
            let a = approval(wanted, above, wanted);
            prop_assert_eq!(waiting(&a), None);
            prop_assert_eq!(a.cap_for(rub(wanted)), rub(wanted));
        }
    }
}
