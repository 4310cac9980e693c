//! `linkrunner-domain`: the nouns every part of linkrunner speaks, and nothing else. It imports
//! no other linkrunner crate or module, so the marketplace client, the journal, the engine,
//! metrics and the sandbox can all depend on it without depending on each other.
//!
//! | module | what |
//! |---|---|
//! | [`account`] | marketplace accounts: the default account, valid ids |
//! | [`money`] | [`money::Money`]: kopecks, parsed and printed as rubles, never a float |
//! | [`clock`] | [`clock::Clock`]: injected time, the wall clock and a manual clock for tests |
//! | [`credentials`] | how the marketplace credentials are obtained (fixed, files, login) |
//! | [`market`] | the marketplace's nouns as linkrunner uses them: ids, search jobs, donors, link records, autobuyer specs |
//! | [`intents`] | what a changing call is: its kind, state, key, reservation, outcome and effects (the journal records them) |
//! | [`records`] | what the journal keeps beside intents: caps, remote ids, budget, held and foreign links, searches, rounds, stalls, leases |
//! | [`halts`] | spending halts and their scope |
//! | [`shown`] | text from outside made safe to show: control characters, escape sequences and BIDI overrides escaped |
//! | [`op`] | the marketplace's operation names (a closed set: errors, logs, the `operation` label) |
//! | [`outage`] | a fault that lasts: since its first failure, its last error (the marketplace's reach, the journal's writes) |

pub mod account;
pub mod clock;
pub mod credentials;
pub mod halts;
pub mod intents;
pub mod market;
pub mod money;
pub mod op;
pub mod outage;
pub mod records;
pub mod shown;
