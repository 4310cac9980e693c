//! Settling intents whose outcome is unknown — never by sending a changing call blindly.
//!
//! | kind | policy |
//! |---|---|
//! | purchase | read the project's link list (`sync.rs`): listed → bought; absent from a read that proves absence, after the settle grace → not bought, money released; otherwise it stays uncertain and `status` says why. Either way its page is never bought again automatically |
//! | project, texts, filter | free creations: sent again as a new attempt (a duplicate costs nothing); after `max_attempts` the campaign waits for an operator |
//! | start / stop autobuyer | the autobuyer counts as running (its budget stays counted) with its state unknown, until a stop is confirmed and settled; the plan sends the switch the file wants |
//! | create autobuyer | cannot be checked (no list call): the campaign stops spending and waits for `linkrunner resolve` |

use crate::market::Market;
use crate::store::{Effect, HaltScope, IntentKind, IntentRow, Outcome};

use super::Engine;
use super::error::EngineError;
use crate::decide::policy::policy;
use crate::decide::recorded::Recorded;

impl<M: Market> Engine<M> {
    /// Settles every uncertain intent that needs no link list (all but purchases). Returns
    /// how many wait for an operator; a campaign halt lives only while one does.
    pub(crate) async fn settle_without_list(
        &self,
        campaign: &str,
        r: &Recorded,
    ) -> Result<u32, EngineError> {
        let mut waiting = 0;
        for i in r
            .uncertain
            .iter()
            .filter(|i| i.kind != IntentKind::Purchase)
        {
            waiting += u32::from(self.settle_one(campaign, i).await?);
        }
        // A campaign halt exists only while something waits for an operator (set again above
        // each pass); once the operator resolved it — by `linkrunner resolve` or any other way
        // — the halt must not outlive its cause.
        let scope = HaltScope::campaign(campaign);
        let halted = r.halts.iter().any(|h| h.scope == scope);
        if halted && waiting == 0 {
            self.store.clear_halt(&scope).await?;
            tracing::info!(
                campaign,
                "nothing waits for an operator any more; spending resumes"
            );
        }
        Ok(waiting)
    }

    /// True when the intent now waits for an operator.
    async fn settle_one(&self, campaign: &str, i: &IntentRow) -> Result<bool, EngineError> {
        let now = self.clock.now();
        match i.kind {
            IntentKind::CreateAutobuyer => {
                self.wait_for_operator(campaign, i, &autobuyer_reason(i))
                    .await?;
                Ok(true)
            }
            IntentKind::StartAutobuyer | IntentKind::StopAutobuyer => {
                let name = request_name(i).to_string();
                let unknown = Outcome::Indeterminate {
                    error: format!("outcome unknown; {}", policy(i.kind)),
                    effect: Effect::AutobuyerSwitchUnknown { name },
                };
                self.store
                    .intents()
                    .complete_intent(i.attempt(), unknown, None, now)
                    .await?;
                Ok(false)
            }
            _ if i.attempts >= self.settings.max_attempts => {
                let reason = format!(
                    "{} (intent #{}) stayed uncertain after {} attempts: resolve it with `linkrunner resolve {}`",
                    i.kind.as_str(),
                    i.id,
                    i.attempts,
                    i.id
                );
                self.wait_for_operator(campaign, i, &reason).await?;
                Ok(true)
            }
            IntentKind::Purchase => Ok(false),
            _ => {
                let error = format!("uncertain; {}", policy(i.kind));
                self.store
                    .intents()
                    .complete_intent(i.attempt(), Outcome::Failed { error }, None, now)
                    .await?;
                Ok(false)
            }
        }
    }

    async fn wait_for_operator(
        &self,
        campaign: &str,
        i: &IntentRow,
        reason: &str,
    ) -> Result<(), EngineError> {
        let scope = HaltScope::campaign(campaign);
        self.store
            .set_halt(&scope, reason, self.clock.now())
            .await?;
        tracing::error!(
            campaign,
            intent = i.id.0,
            kind = i.kind.as_str(),
            "uncertain intent waits for an operator; spending stopped until it is resolved"
        );
        Ok(())
    }
}

fn request_name(i: &IntentRow) -> &str {
    i.request
        .get("name")
        .and_then(|v| v.as_str())
        .unwrap_or("?")
}

fn autobuyer_reason(i: &IntentRow) -> String {
    format!(
        "creating autobuyer {} may have succeeded (intent #{}): check the marketplace, then run \
         `linkrunner resolve {} --created AUTOBUYER_ID --reason ...` or `--not-created`",
        request_name(i),
        i.id,
        i.id
    )
}
