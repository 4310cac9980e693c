//! The monthly commitment of a project, computed from the ledger by the rule of
//! docs/operating.md#money: every link the project holds counts exactly once, whoever bought it.
//!
//! - a **running** autobuyer counts its `monthlyBudget` (summed over its URLs); the rent of
//!   the links it bought is inside that budget (the sandbox never lets it buy past it);
//! - a **stopped** autobuyer counts nothing itself; the links it bought count at their rent;
//! - links bought by purchase calls (buy rounds) count at their rent;
//! - removed or rejected links count nothing.
//!
//! Model-based tests compare this with the journal's commitment and the campaign's cap.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::ledger::{AutobuyerState, Ledger};
use super::listing::LinkStatus;
use crate::money::Money;

/// The commitment and its parts, for a failing test's message.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Commitment {
    /// `monthlyBudget`s of the running autobuyers.
    running_budgets: Money,
    /// Rent of active links bought by autobuyers that are stopped now.
    stopped_autobuyer_links: Money,
    /// Rent of active links bought by purchase calls.
    bought_links: Money,
}

impl Commitment {
    pub(crate) fn total(&self) -> Money {
        [self.stopped_autobuyer_links, self.bought_links]
            .into_iter()
            .fold(self.running_budgets, |sum, m| {
                sum.checked_add(m).unwrap_or(Money::MAX)
            })
    }
}

fn add(sum: &mut Money, m: Money) {
    *sum = sum.checked_add(m).unwrap_or(Money::MAX);
}

impl Ledger {
    /// The project's monthly commitment by the rule above.
    pub fn commitment(&self, project_id: i64) -> Money {
        self.commitment_parts(project_id).total()
    }

    pub fn commitment_parts(&self, project_id: i64) -> Commitment {
        let mut c = Commitment::default();
        let running: HashMap<i64, bool> = self
            .autobuyers
            .iter()
            .filter(|a| a.project_id == project_id)
            .map(|a| (a.id, a.state == AutobuyerState::Running))
            .collect();
        for a in self
            .autobuyers
            .iter()
            .filter(|a| running.get(&a.id) == Some(&true))
        {
            a.urls
                .iter()
                .for_each(|u| add(&mut c.running_budgets, u.monthly_budget));
        }
        let active = self
            .purchases
            .iter()
            .filter(|p| p.project_id == project_id && p.status == LinkStatus::Active);
        for p in active {
            match p.autobuyer_id {
                None => add(&mut c.bought_links, p.price),
                Some(id) if running.get(&id) == Some(&true) => {}
                Some(_) => add(&mut c.stopped_autobuyer_links, p.price),
            }
        }
        c
    }
}

#[cfg(test)]
#[path = "commitment_tests.rs"]
mod tests;
