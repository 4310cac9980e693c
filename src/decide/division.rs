//! Replicas that divide the accounts (issue 34, item 2): each account is worked by one daemon
//! at a time (its account lease), so each account's rate limit holds across every process,
//! and adding processes adds throughput across accounts. Every daemon asks, every few
//! seconds, what to take and what to give back; this is the answer, from what the journal
//! shows: the leases, and how many daemons are alive (their heartbeats).
//!
//! The rule: a daemon's fair share is `ceil(accounts / live daemons)`. Below it, it takes
//! free accounts (no lease, or one expired); above it, it gives back the extra ones (the
//! newcomer takes them at its next look). Which ones is decided by a hash of the account and
//! the holder (rendezvous hashing): each daemon prefers its own, so shares settle without
//! daemons trading the same accounts back and forth. A single daemon takes every account; a
//! replica of a deployment of one account stands by and takes it over when its holder dies.

use std::collections::BTreeSet;
use std::hash::{Hash, Hasher};

use chrono::{DateTime, Utc};

pub(crate) use linkrunner_domain::records::AccountLease;

/// What a daemon does with the accounts at this look.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Division {
    /// Accounts to take (free or expired) or keep (ours: renewed).
    pub(crate) hold: Vec<String>,
    /// Accounts this daemon holds and gives back (above its share).
    pub(crate) release: Vec<String>,
}

/// What `me` holds and takes among `accounts`, given the leases and the live daemons (at
/// least one: `me`).
pub(crate) fn divide(
    accounts: &[String],
    leases: &[AccountLease],
    live: usize,
    me: &str,
    now: DateTime<Utc>,
) -> Division {
    let share = accounts.len().div_ceil(live.max(1));
    let held_by = |a: &str| {
        leases
            .iter()
            .find(|l| l.account == a && l.expires_at > now)
            .map(|l| l.holder.as_str())
    };
    let mut mine: Vec<&String> = accounts.iter().filter(|a| held_by(a) == Some(me)).collect();
    let mut free: Vec<&String> = accounts.iter().filter(|a| held_by(a).is_none()).collect();
    // Most preferred first: kept longest, taken first.
    let by_preference = |v: &mut Vec<&String>| v.sort_by_key(|a| std::cmp::Reverse(score(a, me)));
    by_preference(&mut mine);
    by_preference(&mut free);
    let release: Vec<String> = mine.iter().skip(share).map(|a| a.to_string()).collect();
    mine.truncate(share);
    let room = share - mine.len();
    let hold = mine
        .into_iter()
        .chain(free.into_iter().take(room))
        .map(|a| a.to_string())
        .collect();
    Division { hold, release }
}

/// Rendezvous score of `account` for `holder`: stable within a build, spread evenly.
fn score(account: &str, holder: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (account, holder).hash(&mut h);
    h.finish()
}

/// The accounts a daemon works after its look: those it holds, or `None` (every account)
/// when it does not divide (one pass of `once`, the tests' engines).
pub(crate) type Worked = Option<BTreeSet<String>>;

#[cfg(test)]
mod tests {
    use super::*;

    fn accounts(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("a{i}")).collect()
    }

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn lease(account: &str, holder: &str, until: i64) -> AccountLease {
        AccountLease {
            account: account.into(),
            holder: holder.into(),
            expires_at: at(until),
        }
    }

    /// Runs the daemons' looks in turn, each taking what it was told, until nothing changes.
    fn settle(n: usize, holders: &[&str]) -> Vec<AccountLease> {
        let all = accounts(n);
        let mut leases: Vec<AccountLease> = Vec::new();
        for _ in 0..10 {
            let before = leases.clone();
            for h in holders {
                let d = divide(&all, &leases, holders.len(), h, at(0));
                leases.retain(|l| !(l.holder == *h && d.release.contains(&l.account)));
                for a in d.hold {
                    leases.retain(|l| l.account != a);
                    leases.push(lease(&a, h, 60));
                }
            }
            if leases.len() == before.len() && leases.iter().all(|l| before.contains(l)) {
                break;
            }
        }
        leases
    }

    #[test]
    fn one_daemon_takes_every_account() {
        let d = divide(&accounts(10), &[], 1, "p1", at(0));
        assert_eq!(d.hold.len(), 10);
        assert!(d.release.is_empty());
    }

    #[test]
    fn daemons_settle_on_fair_shares_and_every_account_is_held_once() {
        for (n, holders) in [
            (10, vec!["p1", "p2"]),
            (10, vec!["p1", "p2", "p3", "p4"]),
            (3, vec!["p1", "p2"]),
        ] {
            let leases = settle(n, &holders);
            assert_eq!(leases.len(), n, "{leases:?}");
            let share = n.div_ceil(holders.len());
            for h in &holders {
                let held = leases.iter().filter(|l| l.holder == *h).count();
                assert!(
                    held <= share && held + holders.len() > share,
                    "{h}: {held} of {n}"
                );
            }
        }
    }

    #[test]
    fn a_daemon_above_its_share_gives_back_the_extra_and_never_takes_a_held_one() {
        let all = accounts(4);
        let leases: Vec<AccountLease> = all.iter().map(|a| lease(a, "p1", 60)).collect();
        let d = divide(&all, &leases, 2, "p1", at(0));
        assert_eq!((d.hold.len(), d.release.len()), (2, 2));
        let newcomer = divide(&all, &leases, 2, "p2", at(0));
        assert!(
            newcomer.hold.is_empty(),
            "held accounts are not taken: {newcomer:?}"
        );
    }

    #[test]
    fn an_expired_lease_is_taken_over() {
        let all = accounts(2);
        let leases = vec![lease("a0", "dead", -1), lease("a1", "p1", 60)];
        let d = divide(&all, &leases, 1, "p1", at(0));
        assert_eq!(d.hold.len(), 2, "{d:?}");
        assert!(d.hold.contains(&"a0".to_string()));
    }

    #[test]
    fn a_standby_replica_of_one_account_takes_nothing_while_the_holder_lives() {
        let all = accounts(1);
        let leases = vec![lease("a0", "p1", 60)];
        assert_eq!(divide(&all, &leases, 2, "p2", at(0)), Division::default());
        assert_eq!(
            divide(&all, &leases, 2, "p1", at(0)).hold,
            vec!["a0".to_string()]
        );
    }
}
