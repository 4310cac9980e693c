//! The journal's front doors: [`Store`] hands out one handle per concern, so a caller
//! names what it touches (`store.intents().begin_intents(…)`, `store.leases().renew_lease(…)`).
//! A handle borrows the store (its pool, backend and metrics) and costs nothing to make.

use std::ops::Deref;

use super::Store;

/// Each handle: a `Copy` newtype over `&Store` that derefs to it, and the [`Store`] method
/// that makes it; `$what` documents both.
macro_rules! handles {
    ($($handle:ident, $method:ident, $what:literal;)*) => {
        $(
            #[doc = concat!("A handle on the journal's part for: ", $what)]
            #[derive(Clone, Copy)]
            pub struct $handle<'a>(&'a Store);

            impl Deref for $handle<'_> {
                type Target = Store;
                fn deref(&self) -> &Store {
                    self.0
                }
            }
        )*

        impl Store {
            $(
                #[doc = $what]
                pub fn $method(&self) -> $handle<'_> {
                    $handle(self)
                }
            )*
        }
    };
}

handles! {
    Campaigns, campaigns, "Campaigns and their caps, budgets and ledger, remote ids, stalls.";
    Intents, intents, "Intents: begun with their reservation, completed, settled, resolved; purchases' settlement marks.";
    Links, links, "The links a project holds: ours (held) and others' (foreign), as the link list shows them.";
    Leases, leases, "Campaign leases: acquired, renewed, released, fenced.";
    Rounds, rounds, "Buy rounds (one per campaign and slot) and their searches.";
    Reports, reports, "What the views read: causes and history, the month's sums, batch reads for many campaigns.";
}
