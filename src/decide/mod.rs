//! `decide/`: the pure decisions. Given what a campaign file wants, what the journal recorded
//! ([`recorded::Recorded`]) and the time, what should happen next — no I/O, no journal, no
//! marketplace client; property-tested. `plan`, `once`, `run` and the API all decide here.
//!
//! Besides the nouns (`linkrunner_domain`: money, time, the marketplace's and the journal's nouns)
//! it imports the file model and nothing else of linkrunner (docs/architecture.md;
//! `scripts/check-architecture` holds the line below).
//!
//! May import: crate::campaign.
//!
//! | module | decides |
//! |---|---|
//! | [`plan`] | the diff: what the next pass creates, buys, starts, stops, and the money |
//! | [`choose`] | which donors a buy round takes, within the limits |
//! | [`stall`] | whether a round that could buy and did not is stalled, and why |
//! | [`policy`] | how each kind of uncertain intent is settled, in words |
//! | [`adoption`] | an adopted project: what a file adopts (the `AdoptProject` step) and the one home of "never re-pointed", what it holds, where buying waits for a complete list |
//! | [`anomaly`] | the anomaly brake: what schedules and autobuyers' budgets explain per hour and day, and whether what was committed or appeared runs past a multiple of it |
//! | [`contested`] | where anyone else may buy on a URL (a running autobuyer, an adopted project): the re-read right before a purchase and what it leaves of the picks |
//! | [`caps`] | a campaign's caps, an autobuyer's budget and spec fingerprint |
//! | `guard/` | the guards beside the caps: `approval` (what may be committed without a person), `refused` (what a 401/403 stops), `removal` (whether files gone at once are removed or held) |
//! | [`division`] | replicas that divide the accounts: which account leases a daemon takes, keeps and gives back (its fair share) |
//! | [`capacity`] | what `--rate-limit` carries: the reconciliation's cycle, the rounds due per slot |
//! | [`keys`] | natural keys of intents (a purchase's by the marketplace's URL id and page) |
//! | [`lag`] | the link list's lag behind purchases, learned from our own, and the `plan` line where buy rounds and a running autobuyer share a URL |
//! | [`listing`] | what one read of the project's link list shows and proves (absence only when shown complete) |
//! | [`pass`] | what a pass does first (the pre-plan: the adoption; the link list before planning, and whether that settles something) and which of the plan's actions it runs |
//! | [`quiet`] | whether a reconciliation of a converged campaign only looks (its file, journal stamp and link list as the last full pass saw them, nothing due) |
//! | [`round`] | a buy round's rules: donors that may share a purchase call, the search's price cap, the next poll's wait, what a retry may still buy |
//! | [`spread`] | the even spread of a month's money: how much buy rounds may still commit today |
//! | [`rename`] (in `identity/`) | a file's `renamed_from`: when OLD's record is handed to the new name (once), its intents' keys after it (a purchase's stays), the `plan` line |
//! | [`respell`] (in `identity/`) | a URL respelt with its recorded `url_id`: which rows take the new spelling, what refuses a `url_id` |
//! | [`spelling`] (in `identity/`) | a respelt URL named to the marketplace by the spelling it knows (`addTexts`), recorded and shown by the file's |
//! | [`moves`] (in `identity/`) | an autobuyer's `moved_from`: honoured with the rename of its source (same project), else refused naming both; the `plan` line |
//! | [`replace`] | a changed autobuyer spec applied by replacement: the new limits, the generation, the `-`/`+` sides |
//! | [`recorded`] | [`recorded::Recorded`]: the journal's account of one campaign, the decisions' input |

pub(crate) mod adoption;
pub mod anomaly;
pub(crate) mod capacity;
pub(crate) mod caps;
pub mod choose;
pub(crate) mod contested;
pub(crate) mod division;
mod guard;
mod identity;
pub mod keys;
pub(crate) mod lag;
pub(crate) mod listing;
pub(crate) mod pass;
pub mod plan;
pub(crate) mod policy;
pub(crate) mod quiet;
pub mod recorded;
pub(crate) mod replace;
pub mod round;
pub(crate) mod spread;
pub(crate) mod stall;

// The guards keep their paths (`decide::approval`, …): the room is a folder, not a new name.
pub(crate) use guard::refused;
pub(crate) use guard::{approval, removal};
pub use identity::{moves, rename, respell, spelling};
