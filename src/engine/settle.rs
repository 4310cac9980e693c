//! Settling intents whose outcome is unknown — never by sending a changing call blindly.
//!
//! | kind | policy |
//! |---|---|
//! | purchase | list the project's links: present → bought; absent from a list taken after the settle grace → not bought, money released |
//! | project, texts, filter | free creations: sent again as a new attempt (a duplicate costs nothing); after `max_attempts` the campaign waits for an operator |
//! | start / stop autobuyer | idempotent: sent again as a new attempt |
//! | create autobuyer | cannot be checked (no list call): the campaign stops spending and waits for `linkrunner resolve` |

use crate::market::{LinkRecord, Market};
use crate::store::{Effect, IntentKind, IntentRow, LeaseToken, Outcome};

use super::Engine;
use super::journal::EngineError;
use super::recorded::Recorded;

/// The policy for an uncertain intent of `kind`, in the words `plan` and `status` use.
pub fn policy(kind: IntentKind) -> &'static str {
    match kind {
        IntentKind::Purchase => "match it against the project's link list",
        IntentKind::CreateProject | IntentKind::AddTexts | IntentKind::CreateFilter => {
            "free creation: send it again (a duplicate costs nothing)"
        }
        IntentKind::StartAutobuyer | IntentKind::StopAutobuyer => "idempotent: send it again",
        IntentKind::CreateAutobuyer => {
            "cannot be checked: spending stops until an operator runs `linkrunner resolve`"
        }
    }
}

/// What settling did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Settled {
    pub bought: u32,
    pub not_bought: u32,
    pub retried: u32,
    pub waiting_for_operator: u32,
    pub still_uncertain: u32,
}

impl<M: Market> Engine<M> {
    /// Settles every uncertain intent of the campaign. Free creations and start/stop are
    /// failed here so the normal steps re-arm them as a new attempt.
    pub async fn settle(
        &self,
        lease: &LeaseToken,
        campaign: &str,
        r: &Recorded,
    ) -> Result<Settled, EngineError> {
        let mut s = Settled::default();
        let purchases: Vec<&IntentRow> = r
            .uncertain
            .iter()
            .filter(|i| i.kind == IntentKind::Purchase)
            .collect();
        if !purchases.is_empty() {
            self.settle_purchases(r, &purchases, &mut s).await?;
        }
        for i in r
            .uncertain
            .iter()
            .filter(|i| i.kind != IntentKind::Purchase)
        {
            self.settle_other(lease, campaign, i, &mut s).await?;
        }
        // A campaign halt exists only while something waits for an operator (set again above
        // each pass); once the operator resolved it — by `linkrunner resolve` or any other way
        // — the halt must not outlive its cause.
        let halted = r.halts.iter().any(|(scope, _, _)| scope == campaign);
        if halted && s.waiting_for_operator == 0 {
            self.store.clear_halt(campaign).await?;
            tracing::info!(
                campaign,
                "nothing waits for an operator any more; spending resumes"
            );
        }
        Ok(s)
    }

    async fn settle_purchases(
        &self,
        r: &Recorded,
        intents: &[&IntentRow],
        s: &mut Settled,
    ) -> Result<(), EngineError> {
        let Some(project) = r.ids.project.as_ref() else {
            return Ok(());
        };
        let links = self
            .market
            .list_links(project.project_id)
            .await
            .map_err(|e| self.read_error(e))?;
        let now = self.clock.now();
        for i in intents {
            if let Some(link) = find_link(&links, i) {
                let effect = purchased_effect(i, link.link_id);
                self.store
                    .complete_intent(
                        i.id,
                        Outcome::Succeeded(effect),
                        Some("found in the project's link list"),
                        now,
                    )
                    .await?;
                s.bought += 1;
            } else if now - i.updated_at >= self.settings.settle_grace {
                let error =
                    "not in the project's link list after the settle grace: not bought".to_string();
                self.store
                    .complete_intent(i.id, Outcome::Failed { error }, None, now)
                    .await?;
                s.not_bought += 1;
            } else {
                s.still_uncertain += 1;
            }
        }
        Ok(())
    }

    async fn settle_other(
        &self,
        _lease: &LeaseToken,
        campaign: &str,
        i: &IntentRow,
        s: &mut Settled,
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        if i.kind == IntentKind::CreateAutobuyer {
            let name = i
                .request
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("?");
            let reason = format!(
                "creating autobuyer {name} may have succeeded (intent #{}): check the marketplace, then run \
                 `linkrunner resolve {} --created AUTOBUYER_ID --reason ...` or `--not-created`",
                i.id, i.id
            );
            self.store.set_halt(campaign, &reason, now).await?;
            tracing::error!(
                campaign,
                intent = i.id.0,
                "autobuyer creation uncertain; spending stopped until an operator resolves it"
            );
            s.waiting_for_operator += 1;
            return Ok(());
        }
        if i.attempts >= self.settings.max_attempts {
            let reason = format!(
                "{} (intent #{}) stayed uncertain after {} attempts: resolve it with `linkrunner resolve {}`",
                i.kind.as_str(),
                i.id,
                i.attempts,
                i.id
            );
            self.store.set_halt(campaign, &reason, now).await?;
            s.waiting_for_operator += 1;
            return Ok(());
        }
        let error = format!("uncertain; {}", policy(i.kind));
        self.store
            .complete_intent(i.id, Outcome::Failed { error }, None, now)
            .await?;
        s.retried += 1;
        Ok(())
    }
}

/// A listed link matches a purchase intent by page and URL (and text when both carry one).
fn find_link<'a>(links: &'a [LinkRecord], i: &IntentRow) -> Option<&'a LinkRecord> {
    let page = i.request.get("page_id")?.as_i64()?;
    let url = i.request.get("url_id")?.as_i64()?;
    let text = i.request.get("text_id").and_then(|v| v.as_i64());
    links.iter().find(|l| {
        l.page_id == Some(page)
            && l.url_id.is_none_or(|u| u == url)
            && match (l.text_id, text) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            }
    })
}

/// The effect of a purchase intent, rebuilt from its recorded request.
pub fn purchased_effect(i: &IntentRow, link: Option<i64>) -> Effect {
    let get = |k: &str| {
        i.request
            .get(k)
            .and_then(|v| v.as_i64())
            .unwrap_or_default()
    };
    Effect::Purchased {
        link,
        page_id: get("page_id"),
        url_id: get("url_id"),
        text_id: get("text_id"),
        price: i.reserved,
    }
}
