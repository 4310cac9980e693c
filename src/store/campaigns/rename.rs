//! Renames (issue 32): a campaign file that says `renamed_from: OLD` takes over everything
//! the journal holds under OLD, in one transaction, so a crash leaves either the old name or
//! the new one owning all of it, never a mix. `decide::rename` says when; `effects::pass`
//! takes OLD's lease first and passes its token here. Tested by `tests/it`
//! `store::rename::*` on PostgreSQL and SQLite.

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::{col, db, read_row, stored};
use linkrunner_domain::clock::to_millis;
use linkrunner_domain::records::{DomainOwner, LeaseToken};

/// Every table whose `campaign` column names its owner (`campaigns.name` itself aside), and
/// the halts scoped to it. Children point at `campaigns (name)`, so the new row is inserted
/// first, these are moved, and the old row is deleted last.
const MOVES: [&str; 20] = [
    "UPDATE budgets SET campaign = $2 WHERE campaign = $1",
    "UPDATE budget_days SET campaign = $2 WHERE campaign = $1",
    "UPDATE intents SET campaign = $2 WHERE campaign = $1",
    "UPDATE ledger SET campaign = $2 WHERE campaign = $1",
    "UPDATE projects SET campaign = $2 WHERE campaign = $1",
    "UPDATE urls SET campaign = $2 WHERE campaign = $1",
    "UPDATE texts SET campaign = $2 WHERE campaign = $1",
    "UPDATE filters SET campaign = $2 WHERE campaign = $1",
    "UPDATE autobuyers SET campaign = $2 WHERE campaign = $1",
    "UPDATE held_links SET campaign = $2 WHERE campaign = $1",
    "UPDATE foreign_links SET campaign = $2 WHERE campaign = $1",
    "UPDATE pages_held_twice SET campaign = $2 WHERE campaign = $1",
    "UPDATE searches SET campaign = $2 WHERE campaign = $1",
    "UPDATE rounds SET campaign = $2 WHERE campaign = $1",
    "UPDATE campaign_stalls SET campaign = $2 WHERE campaign = $1",
    "UPDATE adoptions SET campaign = $2 WHERE campaign = $1",
    "UPDATE list_vouches SET campaign = $2 WHERE campaign = $1",
    "UPDATE approvals SET campaign = $2 WHERE campaign = $1",
    "UPDATE halts SET scope = $2 WHERE scope = $1",
    "UPDATE operator_halts SET scope = $2 WHERE scope = $1",
];

impl Campaigns<'_> {
    /// Which of `names` the journal records (a row in `campaigns`).
    pub async fn recorded_among(self, names: &[&str]) -> Result<Vec<String>, StoreError> {
        let mut found = Vec::new();
        for name in names {
            let row = run!(
                fetch_optional, &self.pool, "recorded_among",
                "SELECT name FROM campaigns WHERE name = $1";
                *name
            );
            if let Some(r) = self.done(row)? {
                found.push(col(&r, "name")?);
            }
        }
        Ok(found)
    }

    /// Hands everything `old` owns to `new` in one transaction: its row (with its file and
    /// when it was created, its project's domain), budget and days, intents (the keys that
    /// name the campaign renamed; a purchase's names the URL id and page, so a page bought
    /// under `old` is refused by the unique key under `new` as it is), ledger, project, URLs,
    /// texts, filters, autobuyers, held and foreign links, searches, rounds, stall, adoption,
    /// list vouch, approval, its own halts; its lease is released with its fence grown
    /// (whatever a holder of the old token still sends is refused), the new name's lease row
    /// starts above it; its removal row and notices are dropped (it was not removed, and the
    /// notices' conditions are judged again under the new name).
    ///
    /// `rekey` gives a non-purchase intent's natural key under the new name
    /// (`decide::rename::renamed_key`: the journal does not decide what a key means).
    ///
    /// `lease` must be `old`'s current lease: checked in the transaction, else
    /// [`StoreError::Fenced`] and nothing changes. Returns `false`, changing nothing, when the
    /// journal does not hold `old` or holds `new` already (a rename is honoured once).
    pub async fn rename_campaign(
        self,
        old: &str,
        new: &str,
        lease: &LeaseToken,
        now: DateTime<Utc>,
        rekey: &(dyn Fn(&str) -> String + Sync),
    ) -> Result<bool, StoreError> {
        const OP: &str = "rename_campaign";
        let result = async {
            let mut tx = self.write_tx(OP).await?;
            // The lease first: on PostgreSQL this locks OLD's lease row until commit, so no
            // other process takes the old name's lease while its record moves.
            let fence = hold_lease(&mut tx, old, lease, now, FenceMove::Bump).await?;
            let names: Vec<String> = run!(
                fetch_all, &mut *tx, OP,
                "SELECT name FROM campaigns WHERE name = $1 OR name = $2";
                old, new
            )?
            .iter()
            .map(|r| col(r, "name"))
            .collect::<Result<_, _>>()?;
            if !names.iter().any(|n| n == old) || names.iter().any(|n| n == new) {
                tx.commit().await.map_err(db(OP))?;
                return Ok(false);
            }
            run!(
                execute, &mut *tx, OP,
                "INSERT INTO campaigns (name, created_at, updated_at, file, domain, renamed_from, account) \
                 SELECT $2, created_at, $3, file, domain, $1, account FROM campaigns WHERE name = $1";
                old, new, to_millis(now)
            )?;
            rekey_intents(&mut tx, old, rekey).await?;
            for sql in MOVES {
                run!(execute, &mut *tx, OP, sql; old, new)?;
            }
            run!(
                execute, &mut *tx, OP,
                "INSERT INTO leases (campaign, holder, fence, expires_at) VALUES ($1, '', $2, $3) \
                 ON CONFLICT (campaign) DO NOTHING";
                new, fence + 1, to_millis(now)
            )?;
            for sql in [
                "DELETE FROM campaign_removals WHERE campaign = $1",
                "DELETE FROM notices WHERE campaign = $1",
                "DELETE FROM campaigns WHERE name = $1",
            ] {
                run!(execute, &mut *tx, OP, sql; old)?;
            }
            // The SIGKILL suite's point: everything moved, nothing committed (`engine_kill`).
            crate::store::faultpoint::reach("before_commit", "rename").await;
            tx.commit().await.map_err(db(OP))?;
            Ok(true)
        }
        .await;
        self.write_done(result).await
    }
}

impl Campaigns<'_> {
    /// Whether the journal records `name` (`None`: never), and the domain recorded for its
    /// project (`Some(None)`: recorded before domains were, and adopted).
    pub(crate) async fn campaign_domain(
        self,
        name: &str,
    ) -> Result<Option<Option<String>>, StoreError> {
        let query = sqlx::query("SELECT domain FROM campaigns WHERE name = $1").bind(name);
        self.read_optional("campaign_domain", query, |r| col(r, "domain"))
            .await
    }

    /// Records the domain of `name`'s project where none is recorded yet: the first one
    /// stays (the project was created or adopted for it).
    pub(crate) async fn record_domain(self, name: &str, domain: &str) -> Result<(), StoreError> {
        let change =
            sqlx::query("UPDATE campaigns SET domain = $2 WHERE name = $1 AND domain IS NULL")
                .bind(name)
                .bind(domain);
        self.write_one("record_domain", change).await.map(|_| ())
    }

    /// Every recorded campaign (live or removed) whose domain is known, with its project and
    /// its account (a domain is owned within one account: `decide::rename::domain_owner`).
    pub(crate) async fn domain_owners(self) -> Result<Vec<DomainOwner>, StoreError> {
        let query = sqlx::query(
            "SELECT c.name, c.domain, c.account, p.project_id FROM campaigns c \
             LEFT JOIN projects p ON p.campaign = c.name \
             WHERE c.domain IS NOT NULL ORDER BY c.name",
        );
        self.read_all("domain_owners", query, |r| {
            Ok(read_row!(
                r,
                DomainOwner {
                    campaign: stored(r, "name")?,
                    domain,
                    project_id,
                    account,
                }
            ))
        })
        .await
    }
}

/// The condition that a row's campaign spends in the account bound as `$3`: the marketplace's
/// ids are an account's own (issue 34: two accounts, maybe two marketplaces, may both have a
/// project 5000), so an id is owned within one account. Every row's campaign is a `campaigns`
/// row (the tables reference it), whose `account` is `default` for every row before accounts.
macro_rules! in_account {
    ($table:literal) => {
        concat!(
            "(SELECT a.account FROM campaigns a WHERE a.name = ",
            $table,
            ".campaign) = $3"
        )
    };
}

/// The campaign of another campaign's row of the project `$1`.
const PROJECT_OWNER: &str = concat!(
    "SELECT campaign FROM projects WHERE project_id = $1 AND campaign <> $2 AND ",
    in_account!("projects"),
    " AND NOT EXISTS (SELECT 1 FROM projects q WHERE q.campaign = $2 AND q.project_id = $1) \
     ORDER BY campaign LIMIT 1",
);

/// The campaign and name of another campaign's row of the autobuyer `$1`.
const AUTOBUYER_OWNER: &str = concat!(
    "SELECT campaign, name FROM autobuyers \
     WHERE (autobuyer_id = $1 OR adopted_id = $1) AND campaign <> $2 AND ",
    in_account!("autobuyers"),
    " AND NOT EXISTS (SELECT 1 FROM autobuyers q WHERE q.campaign = $2 \
     AND (q.autobuyer_id = $1 OR q.adopted_id = $1)) \
     ORDER BY campaign LIMIT 1",
);

/// The campaign and URL of another campaign's row of the URL id `$1`.
const URL_OWNER: &str = concat!(
    "SELECT campaign, url FROM urls WHERE url_id = $1 AND campaign <> $2 AND ",
    in_account!("urls"),
    " AND NOT EXISTS (SELECT 1 FROM urls q WHERE q.campaign = $2 AND q.url_id = $1) \
     ORDER BY campaign, url LIMIT 1",
);

impl Campaigns<'_> {
    /// The row of another campaign that `sql` (one of the owner queries: the id `$1`, the
    /// campaign asking `$2`, its account `$3`) reads first, through `read`.
    async fn owner_row<T>(
        self,
        op: &'static str,
        sql: &'static str,
        (id, campaign, account): (i64, &str, &str),
        read: impl Fn(&AnyRow) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let query = sqlx::query(sql).bind(id).bind(campaign).bind(account);
        self.read_optional(op, query, read).await
    }

    /// Another campaign (live or removed) of `account` than `campaign` that the journal
    /// records with the project `project_id`, when `campaign` does not hold it itself.
    pub(crate) async fn project_owner(
        self,
        project_id: i64,
        campaign: &str,
        account: &str,
    ) -> Result<Option<String>, StoreError> {
        self.owner_row(
            "project_owner",
            PROJECT_OWNER,
            (project_id, campaign, account),
            |r| col(r, "campaign"),
        )
        .await
    }

    /// Another campaign of `account` than `campaign` that records the autobuyer `id`
    /// (created or adopted by it), when `campaign` does not hold it itself: the campaign and
    /// its autobuyer's name.
    pub(crate) async fn autobuyer_owner(
        self,
        id: i64,
        campaign: &str,
        account: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        self.owner_row(
            "autobuyer_owner",
            AUTOBUYER_OWNER,
            (id, campaign, account),
            |r| Ok((col(r, "campaign")?, col(r, "name")?)),
        )
        .await
    }

    /// Another campaign of `account` than `campaign` that records the URL id `url_id`
    /// (created or adopted by it), when `campaign` does not hold it itself: the campaign and
    /// the URL as recorded there. A removed campaign keeps its rows, and a rename hands them
    /// over, so the owner is the one the journal holds today.
    pub(crate) async fn url_owner(
        self,
        url_id: i64,
        campaign: &str,
        account: &str,
    ) -> Result<Option<(String, String)>, StoreError> {
        self.owner_row("url_owner", URL_OWNER, (url_id, campaign, account), |r| {
            Ok((col(r, "campaign")?, col(r, "url")?))
        })
        .await
    }
}

/// Gives every intent of `campaign` but its purchases the natural key `rekey` makes of its
/// own, in `tx`: such a key names the campaign, and it is the journal's guard against doing a
/// thing twice, so it follows the name. A purchase's key names the marketplace's URL id and
/// page (`decide::keys::purchase`): it needs no rekey, and is not read (its `url` field is
/// not a campaign, even when a campaign is named `url`).
async fn rekey_intents(
    tx: &mut crate::store::Tx,
    campaign: &str,
    rekey: impl Fn(&str) -> String,
) -> Result<(), StoreError> {
    const OP: &str = "rekey_intents";
    let keys: Vec<(i64, String)> = run!(
        fetch_all, &mut **tx, OP,
        "SELECT id, natural_key FROM intents WHERE campaign = $1 AND kind <> 'purchase'";
        campaign
    )?
    .iter()
    .map(|r| Ok((col(r, "id")?, col(r, "natural_key")?)))
    .collect::<Result<_, StoreError>>()?;
    for (id, key) in keys {
        let renamed = rekey(&key);
        if renamed != key {
            run!(
                execute, &mut **tx, OP,
                "UPDATE intents SET natural_key = $1 WHERE id = $2";
                &renamed, id
            )?;
        }
    }
    Ok(())
}

/// How [`hold_lease`] treats the lease's fence.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FenceMove {
    /// Moves it on (a rename: whatever the old name's holder does next is fenced out).
    Bump,
    /// Leaves it (the row is only locked).
    Keep,
}

/// Checks in `tx` that `lease` is `campaign`'s current, unexpired lease and locks its row
/// until commit (PostgreSQL: no other process takes the campaign meanwhile); the fence after
/// it. [`StoreError::Fenced`] when the lease is not current.
pub(super) async fn hold_lease(
    tx: &mut crate::store::Tx,
    campaign: &str,
    lease: &LeaseToken,
    now: DateTime<Utc>,
    fence: FenceMove,
) -> Result<i64, StoreError> {
    const OP: &str = "hold_lease";
    let fenced = || StoreError::Fenced {
        campaign: campaign.to_string(),
    };
    if lease.campaign != campaign {
        return Err(fenced());
    }
    let sql = match fence {
        FenceMove::Bump => {
            "UPDATE leases SET fence = fence + 1, expires_at = $4 \
             WHERE campaign = $1 AND holder = $2 AND fence = $3 AND expires_at > $4 \
             RETURNING fence"
        }
        FenceMove::Keep => {
            "UPDATE leases SET expires_at = expires_at \
             WHERE campaign = $1 AND holder = $2 AND fence = $3 AND expires_at > $4 \
             RETURNING fence"
        }
    };
    let row = run!(
        fetch_optional, &mut **tx, OP,
        sql;
        campaign, &lease.holder, lease.fence, to_millis(now)
    )?
    .ok_or_else(fenced)?;
    col(&row, "fence")
}

#[cfg(test)]
mod tests {
    use crate::store::{AdoptedAutobuyer, Store};
    use linkrunner_domain::money::Money;
    use linkrunner_domain::records::CampaignCaps;

    /// A journal where `shop-a` of account `client-a` adopted project 5000 with URL id 11 and
    /// autobuyer 900, and `shop-b` of `client-b` and `shop-a2` of `client-a` hold nothing.
    async fn journal() -> Store {
        let store = Store::connect("sqlite::memory:").await.expect("connect");
        store.migrate().await.expect("migrate");
        let now = chrono::Utc::now();
        let campaigns = store.campaigns();
        for (name, account) in [
            ("shop-a", "client-a"),
            ("shop-a2", "client-a"),
            ("shop-b", "client-b"),
        ] {
            let caps = CampaignCaps {
                name: name.into(),
                account: account.into(),
                monthly_cap: Money::from_rubles(1000),
                daily_links: 1,
                total_links: 1,
            };
            campaigns.upsert_campaign(&caps, now).await.expect("caps");
        }
        campaigns.adopt_project("shop-a", 5000, now).await.unwrap();
        let urls = [("https://acme.example/a".to_string(), 11)];
        campaigns.adopt_ids("shop-a", &urls, &[]).await.unwrap();
        let auto = AdoptedAutobuyer {
            name: "auto",
            id: 900,
            spec_fingerprint: "fp",
            monthly_budget: Money::from_rubles(100),
            covers: vec![11],
        };
        campaigns
            .adopt_autobuyer("shop-a", &auto, now)
            .await
            .unwrap();
        campaigns
            .record_domain("shop-a", "https://acme.example")
            .await
            .unwrap();
        store
    }

    #[tokio::test]
    async fn ids_are_owned_within_one_account_only() {
        let store = journal().await;
        let c = store.campaigns();
        // Another account may hold the same ids: its marketplace's ids are its own.
        assert_eq!(
            c.project_owner(5000, "shop-b", "client-b").await.unwrap(),
            None
        );
        assert_eq!(c.url_owner(11, "shop-b", "client-b").await.unwrap(), None);
        assert_eq!(
            c.autobuyer_owner(900, "shop-b", "client-b").await.unwrap(),
            None
        );
        // In one account each is owned once, as before accounts.
        let a = "client-a";
        assert_eq!(
            c.project_owner(5000, "shop-a2", a)
                .await
                .unwrap()
                .as_deref(),
            Some("shop-a")
        );
        assert_eq!(
            c.url_owner(11, "shop-a2", a).await.unwrap(),
            Some(("shop-a".into(), "https://acme.example/a".into()))
        );
        assert_eq!(
            c.autobuyer_owner(900, "shop-a2", a).await.unwrap(),
            Some(("shop-a".into(), "auto".into()))
        );
        let domains = c.domain_owners().await.unwrap();
        assert_eq!(domains.len(), 1);
        assert_eq!(
            (domains[0].campaign.as_str(), domains[0].account.as_str()),
            ("shop-a", "client-a")
        );
    }
}
