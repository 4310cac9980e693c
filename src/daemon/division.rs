//! Replicas that divide the accounts (issue 34, item 2). Every few seconds this daemon says it
//! is alive, reads the account leases and the live daemons, and takes, keeps or gives back
//! accounts as `decide::division` says; the engine then works only the accounts held here
//! (another account's campaigns are skipped: neither reconciled, bought for nor removed).
//! So each account's calls come from one process at a time and its `rate_limit` holds across
//! replicas, while more replicas carry more accounts. A replica of a deployment of one account
//! stands by and takes the account over when its holder stops (at once: it gives its accounts
//! back) or dies (when the lease expires: `--lease-ttl`).
//!
//! An account above this daemon's share is given back in two steps: nothing new of it is
//! started here at once, and its lease is released at the first look that finds none of its
//! passes still under way (a round polling a search may take a while), so the daemon that
//! takes it over never calls the account beside this one.
//!
//! When the journal cannot be read or written, the accounts stay worked only until the
//! leases last renewed here expire: past that, another daemon may have taken them.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::decide::division::divide;
use crate::effects::Engine;
use crate::market::Market;
use crate::store::StoreError;

/// What this daemon holds, and until when that is known to be true.
#[derive(Debug, Default)]
pub(super) struct Held {
    accounts: BTreeSet<String>,
    until: Option<DateTime<Utc>>,
}

/// How often a daemon looks: a quarter of the lease's time, at least every second, at most
/// every 5 seconds (a newcomer gets its share within two looks, once the accounts it takes
/// have no pass under way at their old holder). A look is a few small journal statements.
pub(super) fn look_every<M: Market>(engine: &Engine<M>) -> Duration {
    let ttl = engine.settings().lease_ttl.to_std().unwrap_or_default();
    (ttl / 4).clamp(Duration::from_secs(1), Duration::from_secs(5))
}

/// One look: heartbeat, leases, the division, the writes; the engine's worked accounts
/// follow. An error leaves the accounts worked until the last renewal's expiry.
pub(super) async fn look<M: Market>(engine: &Engine<M>, held: &mut Held) {
    let now = engine.clock().now();
    match divide_once(engine, now).await {
        Ok(accounts) => {
            for gained in accounts.difference(&held.accounts) {
                tracing::info!(account = %gained, "this daemon works the account now (its account lease)");
                // Another process may have called it up to a moment ago: its last second
                // counts at the marketplace, so none of ours go into that second.
                if let Some((_, market)) = engine.markets().find(|(id, _)| id == gained) {
                    market.account_taken();
                }
            }
            for lost in held.accounts.difference(&accounts) {
                tracing::info!(account = %lost, "another daemon works the account now (its account lease)");
            }
            held.accounts = accounts;
            held.until = Some(now + engine.settings().lease_ttl);
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not renew the account leases; the accounts stay worked until their leases expire");
            if held.until.is_some_and(|u| now >= u) {
                held.accounts.clear();
            }
        }
    }
    engine
        .metrics()
        .load
        .accounts_worked
        .set(i64::try_from(held.accounts.len()).unwrap_or(i64::MAX));
    engine.set_worked(Some(held.accounts.clone()));
}

async fn divide_once<M: Market>(
    engine: &Engine<M>,
    now: DateTime<Utc>,
) -> Result<BTreeSet<String>, StoreError> {
    let (me, ttl) = (engine.holder(), engine.settings().lease_ttl);
    let leases = engine.store().leases();
    leases.heartbeat(me, now).await?;
    take_over_the_gone(engine, now).await?;
    let live = leases.live_daemons(now - ttl).await?;
    let all = engine.store().leases().account_leases().await?;
    let accounts: Vec<String> = engine.markets().map(|(id, _)| id.to_string()).collect();
    let d = divide(&accounts, &all, live.max(1), me, now);
    for a in &d.release {
        // Given back only once no pass of it is under way here: until then this daemon keeps
        // the lease (and works nothing new of it), so two daemons never call one account.
        match engine.in_flight(a) {
            0 => engine.store().leases().release_account(a, me).await?,
            _ => {
                engine
                    .store()
                    .leases()
                    .hold_account(a, me, ttl, now)
                    .await?;
            }
        }
    }
    let mut held = BTreeSet::new();
    for a in d.hold {
        if engine
            .store()
            .leases()
            .hold_account_as(&a, engine.identity(), ttl, now)
            .await?
        {
            held.insert(a);
        }
    }
    Ok(held)
}

/// A holder of this host whose process is gone (killed, crashed, restarted) leaves for it: its
/// accounts are free and its heartbeat gone at once, not when its leases expire — so a daemon
/// restarted after a crash works its accounts within a look, as campaign leases are taken over.
async fn take_over_the_gone<M: Market>(
    engine: &Engine<M>,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let me = engine.identity();
    for other in engine.store().leases().account_holders(now).await? {
        if other.holder != me.holder
            && crate::effects::holder::judge(me, &other) == crate::effects::holder::Holder::Gone
        {
            tracing::info!(holder = %other.holder, "the daemon that held these accounts is gone from this host; its accounts are free");
            engine.store().leases().leave(&other.holder).await?;
        }
    }
    Ok(())
}

/// A daemon that stops gives its accounts back at once.
pub(super) async fn leave<M: Market>(engine: &Engine<M>) {
    if let Err(e) = engine.store().leases().leave(engine.holder()).await {
        tracing::warn!(error = %e, "could not give the account leases back; they expire by themselves");
    }
}
