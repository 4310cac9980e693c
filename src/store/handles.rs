//! The journal's front doors: [`Store`] hands out one handle per concern, so a caller
//! names what it touches (`store.intents().begin_intents(…)`, `store.leases().renew_lease(…)`).
//! A handle borrows the store (its pool, backend and metrics) and costs nothing to make.

use std::ops::Deref;

use super::Store;

/// The journal's campaigns and their caps, budgets and ledger, remote ids, stalls.
#[derive(Clone, Copy)]
pub struct Campaigns<'a>(&'a Store);

impl Deref for Campaigns<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

/// The journal's intents: begun with their reservation, completed, settled, resolved; purchases' settlement marks.
#[derive(Clone, Copy)]
pub struct Intents<'a>(&'a Store);

impl Deref for Intents<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

/// The journal's the links a project holds: ours (held) and others' (foreign), as the link list shows them.
#[derive(Clone, Copy)]
pub struct Links<'a>(&'a Store);

impl Deref for Links<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

/// The journal's campaign leases: acquired, renewed, released, fenced.
#[derive(Clone, Copy)]
pub struct Leases<'a>(&'a Store);

impl Deref for Leases<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

/// The journal's buy rounds (one per campaign and slot) and their searches.
#[derive(Clone, Copy)]
pub struct Rounds<'a>(&'a Store);

impl Deref for Rounds<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

/// The journal's what the views read: causes and history, the month's sums, batch reads for many campaigns.
#[derive(Clone, Copy)]
pub struct Reports<'a>(&'a Store);

impl Deref for Reports<'_> {
    type Target = Store;
    fn deref(&self) -> &Store {
        self.0
    }
}

impl Store {
    /// Campaigns and their caps, budgets and ledger, remote ids, stalls.
    pub fn campaigns(&self) -> Campaigns<'_> {
        Campaigns(self)
    }

    /// Intents: begun with their reservation, completed, settled, resolved; purchases' settlement marks.
    pub fn intents(&self) -> Intents<'_> {
        Intents(self)
    }

    /// The links a project holds: ours (held) and others' (foreign), as the link list shows them.
    pub fn links(&self) -> Links<'_> {
        Links(self)
    }

    /// Campaign leases: acquired, renewed, released, fenced.
    pub fn leases(&self) -> Leases<'_> {
        Leases(self)
    }

    /// Buy rounds (one per campaign and slot) and their searches.
    pub fn rounds(&self) -> Rounds<'_> {
        Rounds(self)
    }

    /// What the views read: causes and history, the month's sums, batch reads for many campaigns.
    pub fn reports(&self) -> Reports<'_> {
        Reports(self)
    }
}
