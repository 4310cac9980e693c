//! The non-buying steps: project, promoted URLs and texts, filters, autobuyers, link sync.
//! Each changing call goes through [`Engine::journaled`].

use serde_json::json;

use crate::campaign::{Autobuyer, Campaign, Filter};
use crate::market::{AutobuyerSpec, AutobuyerUrl, FilterSpec, Market, MarketError, UrlTexts};
use crate::store::{Effect, IntentKind, NewIntent, Reservation};
use linkrunner_domain::money::Money;

use super::Engine;
use super::error::EngineError;
use super::lease::HeldLease;
use super::protocol::{Effects, OnSuccess};
use crate::decide::caps::autobuyer_budget;
use crate::decide::caps::autobuyer_fingerprint;
use crate::decide::keys;
use crate::decide::recorded::Recorded;
use crate::decide::replace;
use crate::decide::spelling;
use linkrunner_domain::records::SwitchState;

/// A free intent: no money reserved.
fn intent(campaign: &str, kind: IntentKind, key: String, request: serde_json::Value) -> NewIntent {
    NewIntent {
        campaign: campaign.to_string(),
        kind,
        natural_key: key,
        fingerprint: keys::fingerprint(&request),
        request,
        reserve: None,
    }
}

fn project_id(r: &Recorded) -> Result<i64, EngineError> {
    r.ids
        .project
        .as_ref()
        .map(|p| p.project_id)
        .ok_or_else(|| EngineError::Blocked("the project is not created yet".into()))
}

/// One start or stop of an autobuyer, as [`Engine::set_autobuyer`] journals it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AutobuyerSwitch<'a> {
    pub(crate) campaign: &'a str,
    /// The autobuyer's name in the campaign file.
    pub(crate) name: &'a str,
    /// Its id on the marketplace.
    pub(crate) id: i64,
    /// Start it (`true`) or stop it.
    pub(crate) running: bool,
    /// What a start adds to the commitment: its budget, less what it already counts (the
    /// rent of its links once a stop was settled; all of it while it counts as running).
    pub(crate) reserve: Money,
    /// Its monthly budget, recorded with the intent.
    pub(crate) budget: Money,
    /// Start/stop intents already recorded for it: part of the natural key, so each
    /// transition is an effect of its own.
    pub(crate) generation: usize,
}

impl<M: Market> Engine<M> {
    pub(crate) async fn create_project(
        &self,
        lease: &HeldLease,
        c: &Campaign,
    ) -> Result<(), EngineError> {
        let req = json!({ "domain": c.domain });
        let i = intent(
            &c.name,
            IntentKind::CreateProject,
            keys::create_project(&c.name),
            req,
        );
        let on_success = Box::new(|p: &_| vec![Effect::ProjectCreated(Clone::clone(p))]);
        let call = || self.market.create_project(&c.domain);
        self.journaled_step(lease, i, call, on_success, "create project")
            .await?;
        Ok(())
    }

    pub(crate) async fn add_texts(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        r: &Recorded,
        urls: &[UrlTexts],
    ) -> Result<(), EngineError> {
        let project = project_id(r)?;
        // `addTexts` names a URL by its text: a respelt URL goes under the marketplace's
        // spelling, else it would make a second URL (`decide::spelling`).
        let sent = spelling::to_market(r, urls);
        let mut req = json!({ "project_id": project, "urls": urls });
        if sent != urls {
            req["sent"] = json!(sent);
        }
        let key = keys::add_texts(&c.name, &keys::fingerprint(&req));
        let i = intent(&c.name, IntentKind::AddTexts, key, req);
        let file = urls.to_vec();
        let on_success = Box::new(move |created: &Vec<_>| {
            vec![Effect::TextsAdded(spelling::from_market(
                &file,
                created.clone(),
            ))]
        });
        let call = || self.market.add_texts(project, &sent);
        self.journaled_step(lease, i, call, on_success, "add texts")
            .await?;
        Ok(())
    }

    pub(crate) async fn create_filter(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        f: &Filter,
    ) -> Result<(), EngineError> {
        let spec = filter_spec(f);
        let req = json!({ "filter": spec });
        let i = intent(
            &c.name,
            IntentKind::CreateFilter,
            keys::create_filter(&c.name, &f.name),
            req,
        );
        let name = f.name.clone();
        let on_success = Box::new(move |id: &i64| vec![Effect::FilterCreated { name, id: *id }]);
        let call = || self.market.create_filter(&spec);
        self.journaled_step(lease, i, call, on_success, "create filter")
            .await?;
        Ok(())
    }

    /// Creates an autobuyer, reserving its monthly budget first, then brings it to its desired
    /// state. An uncertain creation is never retried: see `settle`.
    pub(crate) async fn create_autobuyer(
        &self,
        lease: &HeldLease,
        c: &Campaign,
        r: &Recorded,
        ab: &Autobuyer,
    ) -> Result<(), EngineError> {
        let project = project_id(r)?;
        // A name the journal already knows is a replacement: what is left of the file's limits.
        let sent = match r.ids.autobuyers.contains_key(&ab.name) {
            true => replace::replacement_spec(ab, r).0,
            false => ab.clone(),
        };
        let spec = autobuyer_spec(&sent, r)?;
        let budget = autobuyer_budget(&sent);
        // The file's spec, so that the next plan sees it applied.
        let fp = autobuyer_fingerprint(c, ab);
        let running = ab.state == crate::campaign::AutobuyerState::Running && !c.paused;
        let i = self.creation_intent(c, r, ab, (project, &spec, &fp), budget, running);
        let (name, fp2) = (ab.name.clone(), fp.clone());
        let on_success = Box::new(move |id: &i64| {
            vec![Effect::AutobuyerCreated {
                name,
                id: *id,
                running: true,
                spec_fingerprint: fp2,
                monthly_budget: budget,
            }]
        });
        let call = || self.market.create_autobuyer(project, &spec);
        // A new autobuyer may start running at once (the API does not say), so its budget must
        // fit the headroom even when it is wanted stopped; it is released once the stop is confirmed.
        let what = "create autobuyer (its budget must fit the headroom while it is created)";
        let done = self.journaled_step(lease, i, call, on_success, what);
        let Some(id) = done.await? else {
            return Ok(());
        };
        let switch = AutobuyerSwitch {
            campaign: &c.name,
            name: &ab.name,
            id,
            running,
            reserve: Money::ZERO,
            budget,
            generation: 0,
        };
        self.set_autobuyer(lease, switch).await
    }

    /// The creation's intent: its key carries the replacement generation (a spec changed
    /// back is created again), and it reserves the autobuyer's whole monthly budget.
    fn creation_intent(
        &self,
        c: &Campaign,
        r: &Recorded,
        ab: &Autobuyer,
        (project, spec, fp): (i64, &crate::market::AutobuyerSpec, &str),
        budget: Money,
        running: bool,
    ) -> NewIntent {
        let generation = replace::creation_generation(r, &ab.name);
        let req = json!({ "project_id": project, "name": ab.name, "spec": spec, "spec_fingerprint": fp,
                          "monthly_budget": budget, "desired_running": running, "generation": generation });
        let mut i = intent(
            &c.name,
            IntentKind::CreateAutobuyer,
            keys::create_autobuyer(&c.name, &ab.name, fp, generation),
            req,
        );
        i.reserve = Some(Reservation {
            amount: budget,
            links: 0,
            day: self.clock.now().date_naive(),
        });
        i
    }

    /// Starts or stops an autobuyer. Starting a stopped one reserves what its budget adds
    /// first; a confirmed stop keeps its budget counted until the stop is settled (`sync.rs`).
    pub(crate) async fn set_autobuyer(
        &self,
        lease: &HeldLease,
        switch: AutobuyerSwitch<'_>,
    ) -> Result<(), EngineError> {
        let AutobuyerSwitch {
            campaign,
            name,
            id,
            running,
            reserve,
            budget,
            generation,
        } = switch;
        let kind = if running {
            IntentKind::StartAutobuyer
        } else {
            IntentKind::StopAutobuyer
        };
        let req = json!({ "autobuyer_id": id, "name": name, "running": running, "monthly_budget": budget });
        let mut i = intent(
            campaign,
            kind,
            keys::set_autobuyer(campaign, id, running, generation),
            req,
        );
        if running && reserve > Money::ZERO {
            i.reserve = Some(Reservation {
                amount: reserve,
                links: 0,
                day: self.clock.now().date_naive(),
            });
        }
        let n = name.to_string();
        let on_success =
            Box::new(move |_: &()| vec![Effect::AutobuyerRunning { name: n, running }]);
        let ids = [id];
        let call = || async move {
            if running {
                self.market.start_autobuyers(&ids).await
            } else {
                self.market.stop_autobuyers(&ids).await
            }
        };
        let what = if running {
            "start autobuyer"
        } else {
            "stop autobuyer"
        };
        self.journaled_step(lease, i, call, on_success, what)
            .await?;
        Ok(())
    }

    /// [`Engine::journaled`] of one intent whose unreadable answer stays uncertain, as the step
    /// `what` ([`into_done`](super::protocol::Journaled::into_done)): the shape of every step
    /// here. `None`: nothing to do now (already done, or its answer unreadable).
    async fn journaled_step<T, F>(
        &self,
        lease: &HeldLease,
        i: NewIntent,
        call: impl Fn() -> F,
        on_success: OnSuccess<T>,
        what: &str,
    ) -> Result<Option<T>, EngineError>
    where
        T: serde::Serialize,
        F: Future<Output = Result<T, MarketError>>,
    {
        let effects = Effects {
            on_success,
            on_unreadable: None,
        };
        self.journaled(lease, vec![i], call, effects)
            .await?
            .into_done(what)
    }

    /// Classifies a failed read: credentials rejected halts spending, the rest is a market error.
    pub(crate) fn read_error(&self, e: crate::market::MarketError) -> EngineError {
        if e.is_auth() {
            EngineError::Auth(e)
        } else {
            EngineError::Market(e)
        }
    }
}

/// A changed spec is applied by replacement ([`Engine::create_autobuyer`] of the same name)
/// only once the old autobuyer's stop is confirmed and settled (its budget left the
/// commitment, the rent of its links stays): an uncertain or unsettled stop blocks it, so
/// two autobuyers never run for one name.
pub(crate) fn old_autobuyer_settled(r: &Recorded, ab: &Autobuyer) -> Result<(), EngineError> {
    if let Some(old) = r.ids.autobuyers.get(&ab.name)
        && (old.running || old.switch_state != SwitchState::Stopped)
    {
        return Err(EngineError::Blocked(format!(
            "autobuyer {}: the old one (id {}) is not stopped and settled yet, so it is not replaced",
            ab.name, old.id
        )));
    }
    Ok(())
}

pub(crate) fn filter_spec(f: &Filter) -> FilterSpec {
    FilterSpec {
        name: f.name.clone(),
        price_article_from: f.price_article_from,
        price_article_to: f.price_article_to,
        price_rent_from: f.price_rent_from,
        price_rent_to: f.price_rent_to,
        extra: f.extra.clone(),
    }
}

fn autobuyer_spec(ab: &Autobuyer, r: &Recorded) -> Result<AutobuyerSpec, EngineError> {
    let filter =
        *r.ids.filters.get(&ab.filter).ok_or_else(|| {
            EngineError::Blocked(format!("filter {} is not created yet", ab.filter))
        })?;
    let urls =
        ab.urls
            .iter()
            .map(|u| {
                let url_id = *r.ids.urls.get(&u.url).ok_or_else(|| {
                    EngineError::Blocked(format!("URL {} is not added yet", u.url))
                })?;
                Ok(AutobuyerUrl {
                    url_id,
                    monthly_budget: u.monthly_budget,
                    total_links_limit: i64::from(u.total_links_limit),
                    daily_links_limit: i64::from(u.daily_links_limit),
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
    Ok(AutobuyerSpec {
        name: ab.name.clone(),
        auto_approve: ab.auto_approve,
        search_filter_id: filter,
        urls,
    })
}
