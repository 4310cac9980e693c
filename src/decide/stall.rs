//! Honest outcomes. A campaign is `converged` only when what its file asks happened, or could
//! not happen within its own caps (a round the caps leave no room for is not even planned).
//! A buy round that ran with room under the caps and bought less than it could, for a reason
//! an operator must act on, is **stalled** with a closed [`StallReason`] and a detail that
//! says what to do. Judged here from what the round saw (pure, unit-tested below); recorded
//! by the pass in `campaign_stalls`, shown by `once` (exit 3), `status`, `/api/v1` and
//! `linkrunner_campaign_stalled{campaign,reason}`.
//!
//! Precedence when several apply: a balance refusal, another refusal, unreadable prices,
//! searches that never finished, then [`NOTHING_BOUGHT_ROUNDS`] rounds in a row that bought
//! nothing (each of which, alone, found nothing to buy within the caps and converged).

use linkrunner_domain::records::StallReason;

/// Buy rounds in a row that ran with room under the caps and bought nothing before the
/// campaign is `stalled` with `nothing_bought`.
pub(crate) const NOTHING_BOUGHT_ROUNDS: u32 = 3;

/// Why a round stalled, in an operator's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stall {
    pub(crate) reason: StallReason,
    pub(crate) detail: String,
}

/// The judgment of one buy round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judgment {
    pub(crate) stall: Option<Stall>,
    /// Rounds in a row, this one included, that bought nothing (0 once one buys).
    pub(crate) rounds_without_purchase: u32,
}

/// Judges round `r`; `prior` is the count of rounds in a row before it that bought nothing.
pub(crate) fn judge(r: &RoundResult, prior: u32) -> Judgment {
    let got = r.bought + r.uncertain;
    let rounds = if got == 0 { prior.saturating_add(1) } else { 0 };
    let stall = refusal(r)
        .or_else(|| unreadable_prices(r))
        .or_else(|| searches_not_ready(r))
        .or_else(|| nothing_bought(r, rounds));
    Judgment {
        stall,
        rounds_without_purchase: rounds,
    }
}

fn refusal(r: &RoundResult) -> Option<Stall> {
    let msg = r.refusal.as_deref().unwrap_or("no message");
    if r.balance_refused > 0 {
        return Some(Stall {
            reason: StallReason::InsufficientBalance,
            detail: format!(
                "insufficient balance: the marketplace refused {} purchase(s) («{msg}»); top up the \
                 marketplace account — the next round buys again",
                r.balance_refused
            ),
        });
    }
    (r.refused > 0).then(|| Stall {
        reason: StallReason::PurchaseRejected,
        detail: format!(
            "the marketplace refused {} purchase(s): «{msg}»; nothing was bought by them (the \
             journal and `linkrunner probe` show the answers)",
            r.refused
        ),
    })
}

/// Donors skipped for their price while the round picked fewer links than it may buy:
/// with a readable price they could have been bought.
fn unreadable_prices(r: &RoundResult) -> Option<Stall> {
    if r.unpriced == 0 || r.picked >= r.wanted {
        return None;
    }
    let fix = "name the price field with `--field-map price=…` (`linkrunner probe --project ID` \
               shows which field holds it)";
    let detail = if r.priced == 0 {
        format!(
            "no donor had a readable price ({} skipped): {fix}",
            r.unpriced
        )
    } else {
        format!(
            "{} of {} donor(s) had no readable price and the round picked {} of {}: {fix}",
            r.unpriced,
            r.unpriced + r.priced,
            r.picked,
            r.wanted
        )
    };
    Some(Stall {
        reason: StallReason::NoReadablePrice,
        detail,
    })
}

fn searches_not_ready(r: &RoundResult) -> Option<Stall> {
    (r.searches_expired > 0 && r.searches_ready == 0).then(|| Stall {
        reason: StallReason::SearchNotReady,
        detail: format!(
            "no donor search finished within --search-deadline ({} given up: {}); raise \
             --search-deadline, or run `linkrunner probe --project ID` to see how the \
             marketplace answers a pending search",
            r.searches_expired,
            r.expiry.as_deref().unwrap_or("still pending")
        ),
    })
}

fn nothing_bought(r: &RoundResult, rounds: u32) -> Option<Stall> {
    (rounds >= NOTHING_BOUGHT_ROUNDS).then(|| Stall {
        reason: StallReason::NothingBought,
        detail: format!(
            "{rounds} buy rounds in a row bought nothing with room under the caps (last round: \
             {} priced donor(s) found, none at or under max_link_price that the project does \
             not already hold); widen `buy.search` or raise `budget.max_link_price`",
            r.priced
        ),
    })
}

/// What a round did, and what it saw — enough for [`crate::decide::stall::judge`] to say why it
/// bought less than it could.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RoundResult {
    pub(crate) bought: u32,
    pub(crate) uncertain: u32,
    /// Purchases not made: refused by the marketplace (counted below too) or not sent.
    pub(crate) failed: u32,
    pub(crate) searches_expired: u32,
    /// Why the last search given up at its deadline was (`still pending`, `not found …`).
    pub(crate) expiry: Option<String>,
    pub(crate) searches_ready: u32,
    /// Donors offered with a readable price, and donors skipped without one.
    pub(crate) priced: u32,
    pub(crate) unpriced: u32,
    /// Links the round may buy at most (per run, daily and total limits).
    pub(crate) wanted: u32,
    /// Donors chosen: within `max_link_price`, not held, within the limits.
    pub(crate) picked: u32,
    /// Purchases refused because the balance does not cover them, and for other reasons.
    pub(crate) balance_refused: u32,
    pub(crate) refused: u32,
    /// The marketplace's message of the first refusal (a balance one first).
    pub(crate) refusal: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(f: impl FnOnce(&mut RoundResult)) -> RoundResult {
        let mut r = RoundResult {
            wanted: 5,
            searches_ready: 1,
            ..RoundResult::default()
        };
        f(&mut r);
        r
    }

    fn reason(j: &Judgment) -> Option<StallReason> {
        j.stall.as_ref().map(|s| s.reason)
    }

    #[test]
    fn every_donor_unpriced_is_no_readable_price_and_names_the_field_map() {
        let j = judge(&round(|r| r.unpriced = 50), 0);
        assert_eq!(reason(&j), Some(StallReason::NoReadablePrice));
        let detail = &j.stall.as_ref().unwrap().detail;
        assert!(
            detail.starts_with("no donor had a readable price (50 skipped)"),
            "{detail}"
        );
        assert!(detail.contains("--field-map price="), "{detail}");
        assert_eq!(j.rounds_without_purchase, 1);
    }

    #[test]
    fn unpriced_donors_do_not_stall_a_round_that_filled_up() {
        let j = judge(
            &round(|r| {
                (r.unpriced, r.priced, r.picked, r.bought) = (3, 7, 5, 5);
            }),
            2,
        );
        assert_eq!(j.stall, None);
        assert_eq!(j.rounds_without_purchase, 0);
    }

    #[test]
    fn a_balance_refusal_wins_and_quotes_the_marketplace() {
        let j = judge(
            &round(|r| {
                (r.priced, r.picked, r.balance_refused, r.unpriced) = (5, 5, 5, 2);
                r.refusal = Some("insufficient balance: 120.50 RUB needed, 17.63 RUB left".into());
            }),
            0,
        );
        assert_eq!(reason(&j), Some(StallReason::InsufficientBalance));
        assert!(j.stall.unwrap().detail.contains("17.63 RUB left"));
    }

    #[test]
    fn other_refusals_are_purchase_rejected() {
        let j = judge(&round(|r| (r.priced, r.picked, r.refused) = (5, 5, 5)), 0);
        assert_eq!(reason(&j), Some(StallReason::PurchaseRejected));
    }

    #[test]
    fn searches_that_all_expired_are_search_not_ready() {
        let j = judge(
            &round(|r| {
                (r.searches_ready, r.searches_expired) = (0, 2);
                r.expiry = Some("still pending".into());
            }),
            0,
        );
        assert_eq!(reason(&j), Some(StallReason::SearchNotReady));
    }

    #[test]
    fn nothing_to_buy_within_the_caps_converges_until_it_lasts_three_rounds() {
        let empty = round(|r| r.priced = 4);
        let first = judge(&empty, 0);
        assert_eq!(
            (first.stall.clone(), first.rounds_without_purchase),
            (None, 1)
        );
        let second = judge(&empty, 1);
        assert_eq!(second.stall, None);
        let third = judge(&empty, 2);
        assert_eq!(reason(&third), Some(StallReason::NothingBought));
        assert_eq!(third.rounds_without_purchase, NOTHING_BOUGHT_ROUNDS);
    }

    #[test]
    fn an_uncertain_purchase_counts_as_bought_for_the_streak() {
        let j = judge(&round(|r| (r.priced, r.picked, r.uncertain) = (1, 1, 1)), 7);
        assert_eq!((j.stall, j.rounds_without_purchase), (None, 0));
    }
}
