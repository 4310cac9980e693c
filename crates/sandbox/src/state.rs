//! The marketplace's memory: projects, promoted URLs and texts, plus the request counters.
//! Searches live in `search.rs`, purchases in `buy.rs`, filters and autobuyers in
//! `autobuy.rs`; all are `impl World` blocks over this one struct behind one mutex.
//!
//! Every operation validates everything first and changes state only when all of the
//! request is acceptable, so a rejected call leaves no trace but its counter.
//!
//! Several accounts share the one world (as a real marketplace's client accounts do): each
//! has a [`Book`] (balance, spend, request counters), every thing it creates carries its
//! `owner`, ids are one global sequence, and the donor inventory is everyone's. The request
//! being served is `caller`'s, set by the pipeline before the operation runs.

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

/// An account's index: 0 is the default account, then the extra ones in configured order.
pub(crate) type AccountIx = usize;

/// One account's money and counters.
#[derive(Debug, Clone)]
pub(crate) struct Book {
    pub(crate) id: String,
    pub(crate) balance: Money,
    pub(crate) spend: Money,
    pub(crate) duplicate_purchases: u64,
    pub(crate) requests: BTreeMap<(Op, &'static str), u64>,
    pub(crate) searches_started: u64,
    pub(crate) polls_served: u64,
    pub(crate) rate_limited: u64,
}

impl Book {
    fn new(id: &str, balance: Money) -> Book {
        Book {
            id: id.to_string(),
            balance,
            spend: Money::ZERO,
            duplicate_purchases: 0,
            requests: BTreeMap::new(),
            searches_started: 0,
            polls_served: 0,
            rate_limited: 0,
        }
    }
}

/// The kinds of things an id can name, for the ownership check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thing {
    Project,
    Url,
    Text,
    Filter,
    Autobuyer,
}

impl Thing {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Thing::Project => "project",
            Thing::Url => "url",
            Thing::Text => "text",
            Thing::Filter => "search filter",
            Thing::Autobuyer => "autobuyer",
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Project {
    pub(crate) id: i64,
    pub(crate) owner: AccountIx,
    pub(crate) domain: String,
    host: String,
}

#[derive(Debug, Clone)]
pub(crate) struct PromotedUrl {
    pub(crate) id: i64,
    pub(crate) owner: AccountIx,
    pub(crate) project_id: i64,
    pub url: String,
}

#[derive(Debug, Clone)]
pub(crate) struct Text {
    pub(crate) id: i64,
    pub(crate) owner: AccountIx,
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
    pub(crate) filters: BTreeMap<i64, Filter>,
    pub(crate) autobuyers: BTreeMap<i64, Autobuyer>,
    /// Every account's book, by [`AccountIx`]; the default account's first.
    pub(crate) books: Vec<Book>,
    /// The account whose request is being served (see the module's map).
    pub(crate) caller: AccountIx,
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
            filters: BTreeMap::new(),
            autobuyers: BTreeMap::new(),
            books: std::iter::once(Book::new(
                super::config::DEFAULT_ACCOUNT,
                cfg.initial_balance,
            ))
            .chain(cfg.accounts.iter().map(|a| Book::new(&a.id, a.balance)))
            .collect(),
            caller: 0,
            rng,
            clock: cfg.clock.clone(),
        }
    }

    /// Ids are unique across every kind of entity, so a client that mixes them up is caught.
    pub(crate) fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }

    /// Counts a request of `account` by operation and outcome.
    pub(crate) fn count(&mut self, account: AccountIx, op: Op, outcome: &'static str) {
        if let Some(book) = self.books.get_mut(account) {
            *book.requests.entry((op, outcome)).or_default() += 1;
        }
    }

    /// The book of `account`; the default account's for an index that names none (never
    /// happens: indexes come from the configured accounts).
    pub(crate) fn book(&mut self, account: AccountIx) -> &mut Book {
        let ix = if account < self.books.len() {
            account
        } else {
            0
        };
        &mut self.books[ix]
    }

    /// The index of the account with this id.
    pub(crate) fn account_ix(&self, id: &str) -> Option<AccountIx> {
        self.books.iter().position(|b| b.id == id)
    }

    /// The account that owns the thing `id` names, if it exists.
    pub(crate) fn owner_of(&self, thing: Thing, id: i64) -> Option<AccountIx> {
        match thing {
            Thing::Project => self.projects.get(&id).map(|p| p.owner),
            Thing::Url => self.urls.get(&id).map(|u| u.owner),
            Thing::Text => self.texts.get(&id).map(|t| t.owner),
            Thing::Filter => self.filters.get(&id).map(|f| f.owner),
            Thing::Autobuyer => self.autobuyers.get(&id).map(|a| a.owner),
        }
    }

    /// Whether search job `job` exists and is another account's than the caller's.
    pub(crate) fn is_others_search(&self, job: &str) -> bool {
        self.books.len() > 1
            && self
                .searches
                .get(job)
                .is_some_and(|s| s.owner != self.caller)
    }

    /// Whether the thing `id` names exists and belongs to another account than the caller's.
    /// With one account nothing is anyone else's, so the single-account path looks nothing up.
    pub(crate) fn is_others(&self, thing: Thing, id: i64) -> bool {
        self.books.len() > 1 && self.owner_of(thing, id).is_some_and(|o| o != self.caller)
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
                owner: self.caller,
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
        let owner = self.projects.get(&project_id).map_or(0, |p| p.owner);
        self.url_index.insert(key, id);
        self.urls.insert(
            id,
            PromotedUrl {
                id,
                owner,
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
        let owner = self.urls.get(&url_id).map_or(0, |u| u.owner);
        self.text_index.insert(key, id);
        self.texts.insert(
            id,
            Text {
                id,
                owner,
                url_id,
                text,
            },
        );
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
