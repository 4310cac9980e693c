//! The marketplace's memory: projects, promoted URLs and texts, plus the request counters.
//! Searches live in `search.rs`, purchases in `buy.rs`, filters and autobuyers in
//! `autobuy.rs`; all are `impl World` blocks over this one struct behind one mutex.
//!
//! Every operation validates everything first and changes state only when all of the
//! request is acceptable, so a rejected call leaves no trace but its counter.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::clock::SharedClock;

use super::config::SandboxConfig;
pub(crate) use super::entities::Params;
use super::entities::{Autobuyer, Donor, Filter, Offer, Placement, Search};
use super::faults::Prng;
use super::ops::Op;
use super::validate;
use crate::money::Money;

/// A request the marketplace refuses (`isError: true`, or 422 in the `http` error style).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rejection(pub(crate) String);

impl Rejection {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Rejection(message.into())
    }
}

pub(crate) type Outcome<T> = Result<T, Rejection>;

#[derive(Debug, Clone)]
pub(crate) struct Project {
    pub(crate) id: i64,
    pub(crate) domain: String,
    host: String,
}

#[derive(Debug, Clone)]
pub(crate) struct PromotedUrl {
    pub(crate) id: i64,
    pub(crate) project_id: i64,
    pub url: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Text {
    pub(crate) id: i64,
    pub(crate) url_id: i64,
    pub(crate) text: String,
}

/// Settings that shape behaviour but never change after start.
#[derive(Debug, Clone)]
pub(crate) struct Rules {
    pub(crate) donors_per_search: usize,
    pub(crate) ready_after_polls: u32,
    pub(crate) ready_after: Duration,
    pub(crate) vary_technical_values: bool,
    pub(crate) autobuyers_start_running: bool,
    max_entities: usize,
}

pub(crate) struct World {
    pub(crate) rules: Rules,
    /// Switchable at run time (`__sandbox/behaviour`), unlike `rules`.
    pub(crate) behaviour: super::behaviour::Behaviour,
    next_id: i64,
    pub(crate) projects: BTreeMap<i64, Project>,
    pub(crate) urls: BTreeMap<i64, PromotedUrl>,
    pub(crate) texts: BTreeMap<i64, Text>,
    /// `(projectId, url)` → urlId and `(urlId, text)` → textId, so re-adding is O(1).
    url_index: HashMap<(i64, String), i64>,
    text_index: HashMap<(i64, String), i64>,
    pub(crate) inventory: Vec<Donor>,
    pub(crate) searches: HashMap<String, Search>,
    pub(crate) search_seq: u64,
    /// Every offer a finished search made, by `(urlId, pageId)`.
    pub(crate) offers: HashMap<(i64, i64), Vec<Offer>>,
    pub(crate) placements: Vec<Placement>,
    /// `(projectId, pageId, urlId)` → active links on that page for that URL.
    pub(crate) held: HashMap<(i64, i64, i64), u32>,
    pub(crate) duplicate_purchases: u64,
    pub(crate) spend: Money,
    pub(crate) balance: Money,
    pub(crate) filters: BTreeMap<i64, Filter>,
    pub(crate) autobuyers: BTreeMap<i64, Autobuyer>,
    pub(crate) requests: BTreeMap<(Op, &'static str), u64>,
    pub(crate) searches_started: u64,
    pub(crate) polls_served: u64,
    pub(crate) rate_limited: u64,
    pub(crate) rng: Prng,
    clock: SharedClock,
}

impl World {
    pub(crate) fn new(cfg: &SandboxConfig) -> Self {
        let mut rng = Prng::new(cfg.seed);
        let inventory = super::entities::inventory(&mut rng, cfg);
        World {
            rules: Rules {
                donors_per_search: cfg.donors_per_search,
                ready_after_polls: cfg.search_ready_after_polls,
                ready_after: cfg.search_ready_after,
                vary_technical_values: cfg.vary_technical_values,
                autobuyers_start_running: cfg.autobuyers_start_running,
                max_entities: cfg.max_entities,
            },
            behaviour: cfg.behaviour.clone(),
            next_id: 1000,
            projects: BTreeMap::new(),
            urls: BTreeMap::new(),
            texts: BTreeMap::new(),
            url_index: HashMap::new(),
            text_index: HashMap::new(),
            inventory,
            searches: HashMap::new(),
            search_seq: 0,
            offers: HashMap::new(),
            placements: Vec::new(),
            held: HashMap::new(),
            duplicate_purchases: 0,
            spend: Money::ZERO,
            balance: cfg.initial_balance,
            filters: BTreeMap::new(),
            autobuyers: BTreeMap::new(),
            requests: BTreeMap::new(),
            searches_started: 0,
            polls_served: 0,
            rate_limited: 0,
            rng,
            clock: cfg.clock.clone(),
        }
    }

    /// Ids are unique across every kind of entity, so a client that mixes them up is caught.
    pub(crate) fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    pub(crate) fn count(&mut self, op: Op, outcome: &'static str) {
        *self.requests.entry((op, outcome)).or_default() += 1;
    }

    /// Refuses growth past the configured cap so a runaway client cannot exhaust memory.
    pub(crate) fn ensure_room(&self, len: usize, what: &str) -> Outcome<()> {
        if len >= self.rules.max_entities {
            return Err(Rejection::new(format!("too many {what} in the sandbox")));
        }
        Ok(())
    }

    pub(crate) fn project(&self, id: i64) -> Outcome<&Project> {
        self.projects
            .get(&id)
            .ok_or_else(|| Rejection::new(format!("project {id} does not exist")))
    }

    /// Operation 1: a project with its main page URL and a text that is the domain name.
    pub(crate) fn add_project(&mut self, domain: &str) -> Outcome<(i64, i64, i64)> {
        let url = validate::absolute_http_url(domain).map_err(Rejection)?;
        self.ensure_room(self.projects.len(), "projects")?;
        let host = validate::host_of(&url);
        let id = self.fresh_id();
        let main = format!("{}://{}/", url.scheme(), url.authority());
        self.projects.insert(
            id,
            Project {
                id,
                domain: domain.to_string(),
                host: host.clone(),
            },
        );
        let url_id = self.insert_url(id, &main);
        let text_id = self.insert_text(url_id, &host);
        Ok((id, url_id, text_id))
    }

    /// The id of `url` in the project, creating it when new.
    pub(crate) fn insert_url(&mut self, project_id: i64, url: &str) -> i64 {
        let key = (project_id, url.to_string());
        if let Some(id) = self.url_index.get(&key) {
            return *id;
        }
        let id = self.fresh_id();
        let url = url.to_string();
        self.url_index.insert(key, id);
        self.urls.insert(
            id,
            PromotedUrl {
                id,
                project_id,
                url,
            },
        );
        id
    }

    /// The id of `text` on the URL, creating it when new.
    pub(crate) fn insert_text(&mut self, url_id: i64, text: &str) -> i64 {
        let key = (url_id, text.to_string());
        if let Some(id) = self.text_index.get(&key) {
            return *id;
        }
        let id = self.fresh_id();
        let text = text.to_string();
        self.text_index.insert(key, id);
        self.texts.insert(id, Text { id, url_id, text });
        id
    }

    /// Operation 2, validated as a whole before anything is added.
    pub(crate) fn add_texts(
        &mut self,
        project_id: i64,
        items: &[(String, Vec<String>)],
    ) -> Outcome<Vec<AddedUrl>> {
        let host = self.project(project_id)?.host.clone();
        if items.is_empty() {
            return Err(Rejection::new("urlsTexts is empty"));
        }
        for (url, texts) in items {
            let parsed = validate::absolute_http_url(url).map_err(Rejection)?;
            if !validate::on_domain(&parsed, &host) {
                return Err(Rejection::new(format!(
                    "`{url}` is not on the project's domain {host}"
                )));
            }
            for t in texts {
                validate::anchor_text(t).map_err(Rejection)?;
            }
        }
        self.ensure_room(self.urls.len() + items.len(), "urls")?;
        self.ensure_room(
            self.texts.len() + items.iter().map(|i| i.1.len()).sum::<usize>(),
            "texts",
        )?;
        Ok(items
            .iter()
            .map(|(url, texts)| {
                let url_id = self.insert_url(project_id, url);
                let texts = texts
                    .iter()
                    .map(|t| (self.insert_text(url_id, t), t.clone()))
                    .collect();
                AddedUrl {
                    url_id,
                    url: url.clone(),
                    texts,
                }
            })
            .collect())
    }

    pub(crate) fn url_in_project(&self, project_id: i64, url_id: i64) -> Outcome<&PromotedUrl> {
        match self.urls.get(&url_id) {
            Some(u) if u.project_id == project_id => Ok(u),
            _ => Err(Rejection::new(format!(
                "url {url_id} does not belong to project {project_id}"
            ))),
        }
    }

    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }
}

/// What operation 2 answers for one URL: its id and `(textId, text)` pairs.
#[derive(Debug, Clone)]
pub(crate) struct AddedUrl {
    pub(crate) url_id: i64,
    pub(crate) url: String,
    pub(crate) texts: Vec<(i64, String)>,
}
