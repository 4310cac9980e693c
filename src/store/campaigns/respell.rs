//! Respelt URLs (issue 32): a promoted URL whose file gives its recorded `url_id` under a new
//! spelling keeps its identity. Its `urls` row and its texts take the new spelling (the row
//! keeps the marketplace's in `market_url`, which `addTexts` sends) and the autobuyers whose
//! spec only changed by the spelling take their new fingerprint, all in one transaction under the campaign's lease: a crash leaves the old spelling or the new one,
//! never a mix. Purchases need nothing: their natural keys name the URL id, not its spelling
//! (`decide::keys::purchase`), so a page bought before is refused under the new spelling. `decide::respell` says what; tested
//! by `tests/it` `store::respell::*` on PostgreSQL and SQLite.

use chrono::{DateTime, Utc};

use super::rename::{FenceMove, hold_lease};
use crate::store::StoreError;
use crate::store::handles::Campaigns;
use linkrunner_domain::records::LeaseToken;

/// One URL to re-spell: its id, the spelling the journal holds, the file's.
#[derive(Debug, Clone, Copy)]
pub struct RespeltUrl<'a> {
    pub url_id: i64,
    pub from: &'a str,
    pub to: &'a str,
}

impl Campaigns<'_> {
    /// Re-spells `urls` of `campaign` in one transaction: each `urls` row (only while it
    /// holds `from` with `url_id` and the campaign has no row spelt `to`), its texts, and the
    /// spec fingerprints of `fingerprints` (autobuyer name, new fingerprint).
    ///
    /// `lease` must be the campaign's current lease: checked in the transaction, else
    /// [`StoreError::Fenced`] and nothing changes. Returns the URLs re-spelt (none when
    /// another pass did it first: honoured once); fingerprints change only when all of
    /// `urls` were re-spelt here.
    pub async fn respell_urls(
        self,
        campaign: &str,
        lease: &LeaseToken,
        now: DateTime<Utc>,
        urls: &[RespeltUrl<'_>],
        fingerprints: &[(String, String)],
    ) -> Result<usize, StoreError> {
        const OP: &str = "respell_urls";
        transaction!(self, OP, |tx| {
            // Locking the lease row on PostgreSQL until commit: no other holder takes the
            // campaign while its URLs are re-spelt.
            hold_lease(&mut tx, campaign, lease, now, FenceMove::Keep).await?;
            let mut done = 0;
            for u in urls {
                if respell_one(&mut tx, campaign, u).await? {
                    done += 1;
                }
            }
            if done == urls.len() {
                for (name, fp) in fingerprints {
                    run!(
                        execute, &mut *tx, OP,
                        "UPDATE autobuyers SET spec_fingerprint = $3 WHERE campaign = $1 AND name = $2";
                        campaign, name, fp
                    )?;
                }
            }
            Ok(done)
        })
    }
}

/// One URL's row and texts; `false` (nothing changed) when the row is not `from` with its
/// id, or a row spelt `to` exists already. The row keeps the marketplace's spelling in
/// `market_url` (the first one, over any number of respellings): `addTexts` names a URL by its
/// text, and the file's spelling would make the marketplace create a second URL.
async fn respell_one(
    tx: &mut crate::store::Tx,
    campaign: &str,
    u: &RespeltUrl<'_>,
) -> Result<bool, StoreError> {
    const OP: &str = "respell_urls";
    let moved = run!(
        execute, &mut **tx, OP,
        "UPDATE urls SET url = $3, market_url = COALESCE(market_url, url) WHERE campaign = $1 AND url = $2 AND url_id = $4 \
         AND NOT EXISTS (SELECT 1 FROM urls q WHERE q.campaign = $1 AND q.url = $3)";
        campaign, u.from, u.to, u.url_id
    )?;
    if moved.rows_affected() != 1 {
        return Ok(false);
    }
    run!(
        execute, &mut **tx, OP,
        "UPDATE texts SET url = $3 WHERE campaign = $1 AND url = $2 \
         AND NOT EXISTS (SELECT 1 FROM texts q WHERE q.campaign = $1 AND q.url = $3 AND q.text = texts.text)";
        campaign, u.from, u.to
    )?;
    Ok(true)
}
