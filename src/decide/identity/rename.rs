//! Renames are edits (issue 32): a campaign file that says `renamed_from: OLD` takes over
//! everything the journal holds under OLD at its next pass, once. These are the rules: when
//! the hand-over happens, which key of an intent names the campaign and how it reads after
//! the rename, and what `plan` says about it. The journal's transaction is
//! `store::Campaigns::rename_campaign`; the pass that runs it is `effects::pass`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::campaign::Campaign;
use crate::campaign::fence::site_key;
use crate::decide::recorded::Recorded;
use linkrunner_domain::records::DomainOwner;

/// What a file's `renamed_from` asks of the pass, given which of the two names the journal
/// holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RenameStep {
    /// The journal holds OLD and not the new name: hand OLD over before anything else.
    HandOver,
    /// The new name is recorded already (the rename was done, or the new name has a history
    /// of its own), or OLD was never recorded: the key is ignored.
    Ignore,
}

/// Honoured once: only while the journal holds OLD and not yet the new name.
pub(crate) fn step(old_recorded: bool, new_recorded: bool) -> RenameStep {
    match (old_recorded, new_recorded) {
        (true, false) => RenameStep::HandOver,
        _ => RenameStep::Ignore,
    }
}

/// Why a rename from `old`, recorded in account `was`, to `new`, whose file names `now`, is
/// refused: a campaign's project, ids and money are its account's (issue 34), so a rename
/// stays within one account. `None`: one account.
pub(crate) fn cross_account(old: &str, new: &str, was: &str, now: &str) -> Option<String> {
    (was != now).then(|| {
        format!(
            "`renamed_from: {old}`, but campaign {old} spends in account `{was}` and this file names `{now}`: \
             a rename cannot move a campaign to another account (its project and ids are `{was}`'s); \
             put `account: {was}` in {new}'s file, or remove `renamed_from` to start anew in `{now}`"
        )
    })
}

/// A rename `plan` shows, and the pass reports once done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Renamed {
    from: String,
    to: String,
    /// The project that carries over (`None`: OLD never had one).
    pub(crate) project_id: Option<i64>,
    /// Links the project holds that carry over (ours and others' still held).
    pub(crate) links: usize,
}

impl Renamed {
    /// What carries over from `r`, OLD's record.
    pub(crate) fn of(from: &str, to: &str, r: &Recorded) -> Renamed {
        let held = r.held.iter().filter(|h| h.released.is_none()).count();
        let foreign = r.foreign.iter().filter(|f| f.released.is_none()).count();
        Renamed {
            from: from.to_string(),
            to: to.to_string(),
            project_id: r.ids.project.as_ref().map(|p| p.project_id),
            links: held + foreign,
        }
    }

    /// `rename acme → acme-shoes (project 5000 and its 40 links carry over)`.
    pub(crate) fn describe(&self) -> String {
        let what = match self.project_id {
            Some(id) => format!(
                "project {id} and its {} link{} carry over",
                self.links,
                if self.links == 1 { "" } else { "s" }
            ),
            None => "no project yet; what it recorded carries over".to_string(),
        };
        format!("rename {} → {} ({what})", self.from, self.to)
    }
}

/// Without `renamed_from`: the recorded campaign (live or removed) of `c`'s account whose
/// project is for the same site as `c`'s domain (case, default port and a leading `www.`
/// folded), when `c` itself is not recorded yet. Such a campaign is blocked, never given a
/// second project for the site: both projects would pay every month and buy the same pages
/// again. Another account's project for the site is that account's (an agency's two clients
/// may both promote one site; issue 34), and blocks nothing here.
pub(crate) fn domain_owner<'a>(c: &Campaign, owners: &'a [DomainOwner]) -> Option<&'a DomainOwner> {
    let site = site_key(&c.domain)?;
    owners.iter().find(|o| {
        o.campaign != c.name
            && o.account == c.account
            && site_key(&o.domain).as_deref() == Some(site.as_str())
    })
}

/// What `plan` and `once` say about a campaign blocked by [`domain_owner`].
pub(crate) fn claimed_by(o: &DomainOwner) -> String {
    let site = site_key(&o.domain).unwrap_or_else(|| o.domain.clone());
    let project = match o.project_id {
        Some(id) => format!(" (project {id})"),
        None => String::new(),
    };
    format!(
        "domain {site} belongs to campaign {owner}{project}: if this is a rename, add `renamed_from: {owner}`",
        owner = o.campaign
    )
}

/// What refuses a file that names a marketplace id the journal records under another
/// campaign (live or removed): both would spend on it under different keys.
pub(crate) fn id_claimed_by(what: &str, owner: &str) -> String {
    format!(
        "{what} is recorded for campaign {owner}: if this is a rename, add `renamed_from: {owner}`, \
         else remove it from this file; one project, URL id or autobuyer belongs to one campaign"
    )
}

/// The owners the journal records, under other campaigns (live or removed), of the ids a
/// file names; read by `effects::rename` for [`claimed_id`]. An id absent here is free, or
/// the file's own campaign holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdOwners {
    /// The campaign that holds the file's `project_id`.
    pub(crate) project: Option<String>,
    /// An autobuyer `id` → the campaign holding it and that autobuyer's name there.
    pub(crate) autobuyers: BTreeMap<i64, (String, String)>,
    /// A URL's `url_id` → the campaign holding it and the URL as recorded there.
    pub(crate) urls: BTreeMap<i64, (String, String)>,
}

impl IdOwners {
    /// Forgets what `campaign` holds: a rename hands it to the file's campaign before the
    /// claim is judged (`plan` judges it before the hand-over the pass will do).
    pub(crate) fn drop_held_by(&mut self, campaign: &str) {
        if self.project.as_deref() == Some(campaign) {
            self.project = None;
        }
        self.autobuyers.retain(|_, (owner, _)| owner != campaign);
        self.urls.retain(|_, (owner, _)| owner != campaign);
    }
}

/// Why `c` is refused for naming an id another campaign holds: the first of its
/// `project_id`, its autobuyers' `id`s and its URLs' `url_id`s found in `owners`, with the
/// owner and the way out. Filters are not named by id in a file, so none is claimed here.
pub(crate) fn claimed_id(c: &Campaign, owners: &IdOwners) -> Option<String> {
    if let (Some(pid), Some(owner)) = (c.project_id, &owners.project) {
        return Some(id_claimed_by(&format!("`project_id` {pid}"), owner));
    }
    for (name, id) in c.autobuyers.iter().filter_map(|a| Some((&a.name, a.id?))) {
        if let Some((owner, theirs)) = owners.autobuyers.get(&id) {
            let what = format!("autobuyer `{name}`'s id {id} (`{theirs}` there)");
            return Some(id_claimed_by(&what, owner));
        }
    }
    for (url, id) in c.urls.iter().filter_map(|u| Some((&u.url, u.url_id?))) {
        if let Some((owner, theirs)) = owners.urls.get(&id) {
            let what = format!("`url_id` {id} on {url} ({theirs} there)");
            return Some(id_claimed_by(&what, owner));
        }
    }
    None
}

/// An intent's natural key after its campaign is renamed from `old` to `new`: every key but a
/// purchase's is `VERB:CAMPAIGN` or `VERB:CAMPAIGN:…` (`decide::keys`), and names cannot hold
/// `:`, so the campaign is the second field. A key that does not name `old` there is left as
/// it is, and so is every purchase key: it names the marketplace's URL id and page
/// (`purchase:url:…`), whatever the campaign is called, so a rename needs nothing of it.
pub fn renamed_key(key: &str, old: &str, new: &str) -> String {
    if key.starts_with("purchase:") {
        return key.to_string();
    }
    let Some((verb, rest)) = key.split_once(':') else {
        return key.to_string();
    };
    let (campaign, tail) = match rest.split_once(':') {
        Some((c, t)) => (c, Some(t)),
        None => (rest, None),
    };
    if campaign != old {
        return key.to_string();
    }
    match tail {
        Some(t) => format!("{verb}:{new}:{t}"),
        None => format!("{verb}:{new}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::keys;

    #[test]
    fn a_rename_is_handed_over_only_while_the_new_name_is_unrecorded() {
        assert_eq!(step(true, false), RenameStep::HandOver);
        assert_eq!(step(true, true), RenameStep::Ignore, "honoured once");
        assert_eq!(step(false, true), RenameStep::Ignore);
        assert_eq!(step(false, false), RenameStep::Ignore, "OLD never recorded");
    }

    #[test]
    fn every_kind_of_key_but_a_purchase_names_the_new_campaign_after_a_rename() {
        let pairs = [
            (
                keys::create_project("acme"),
                keys::create_project("acme-shoes"),
            ),
            (
                keys::add_texts("acme", "fp"),
                keys::add_texts("acme-shoes", "fp"),
            ),
            (
                keys::create_filter("acme", "cheap"),
                keys::create_filter("acme-shoes", "cheap"),
            ),
            (
                keys::create_autobuyer("acme", "auto", "fp", 2),
                keys::create_autobuyer("acme-shoes", "auto", "fp", 2),
            ),
            (
                keys::set_autobuyer("acme", 9, true, 3),
                keys::set_autobuyer("acme-shoes", 9, true, 3),
            ),
        ];
        for (before, after) in pairs {
            assert_eq!(renamed_key(&before, "acme", "acme-shoes"), after);
        }
    }

    #[test]
    fn a_key_of_another_campaign_is_left_alone_even_when_one_name_starts_the_other() {
        let k = keys::create_project("acme-old");
        assert_eq!(renamed_key(&k, "acme", "shoes"), k);
        let k = keys::create_filter("acme-old", "f");
        assert_eq!(renamed_key(&k, "acme", "shoes"), k);
    }

    #[test]
    fn a_purchase_key_is_the_same_after_any_rename_even_of_a_campaign_named_url() {
        let k = keys::purchase("default", 11, 7);
        assert_eq!(renamed_key(&k, "acme", "acme-shoes"), k);
        assert_eq!(
            renamed_key(&k, "url", "shoes"),
            k,
            "`url` is the key's field, not a campaign"
        );
    }

    fn owner(campaign: &str, domain: &str) -> DomainOwner {
        DomainOwner {
            campaign: campaign.into(),
            domain: domain.into(),
            project_id: Some(5000),
            account: "default".into(),
        }
    }

    fn campaign(name: &str, domain: &str) -> Campaign {
        let yaml = format!(
            "name: {name}\ndomain: {domain}\nurls:\n  - url: {domain}/a\n    texts: [\"#a#a#/a#\"]\nbudget: {{monthly: 100, max_link_price: 10, daily_links: 1, total_links: 1}}\n"
        );
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    #[test]
    fn a_new_campaign_for_a_recorded_site_is_claimed_whatever_its_spelling() {
        let owners = [owner("acme", "https://acme.example")];
        for domain in [
            "https://acme.example",
            "https://www.acme.example",
            "http://ACME.example:80",
        ] {
            let o = domain_owner(&campaign("acme-shoes", domain), &owners);
            assert_eq!(o.map(|o| o.campaign.as_str()), Some("acme"), "{domain}");
        }
        assert!(domain_owner(&campaign("acme-shoes", "https://bolt.example"), &owners).is_none());
        assert!(
            domain_owner(&campaign("acme", "https://acme.example"), &owners).is_none(),
            "its own record"
        );
        assert_eq!(
            claimed_by(&owners[0]),
            "domain acme.example belongs to campaign acme (project 5000): if this is a rename, add `renamed_from: acme`"
        );
    }

    #[test]
    fn a_rename_stays_in_its_account() {
        assert_eq!(cross_account("acme", "shoes", "default", "default"), None);
        let why = cross_account("acme", "shoes", "client-a", "client-b").unwrap();
        assert!(
            why.contains(
                "campaign acme spends in account `client-a` and this file names `client-b`"
            ),
            "{why}"
        );
        assert!(why.contains("put `account: client-a`"), "{why}");
    }

    #[test]
    fn a_site_recorded_in_another_account_is_that_accounts_and_claims_nothing_here() {
        let mut theirs = owner("client-a-shop", "https://acme.example");
        theirs.account = "client-a".into();
        let owners = [theirs];
        let mut c = campaign("client-b-shop", "https://acme.example");
        assert!(
            domain_owner(&c, &owners).is_none(),
            "another account's project for the site"
        );
        c.account = "client-a".into();
        assert_eq!(
            domain_owner(&c, &owners).map(|o| o.campaign.as_str()),
            Some("client-a-shop"),
            "in one account the site is still owned once"
        );
    }

    #[test]
    fn an_id_claimed_elsewhere_names_the_owner_and_the_way_out() {
        assert_eq!(
            id_claimed_by("`project_id` 5000", "acme"),
            "`project_id` 5000 is recorded for campaign acme: if this is a rename, add `renamed_from: acme`, \
             else remove it from this file; one project, URL id or autobuyer belongs to one campaign"
        );
    }

    /// `bolt` with `url_id: 11` on its first URL and `url_id: 12` on its second, adopting
    /// project 7000 and an autobuyer by id 900.
    fn naming_ids() -> Campaign {
        let yaml = "name: bolt\ndomain: https://bolt.example\nproject_id: 7000\nurls:\n\
            \x20 - url: https://bolt.example/a\n    url_id: 11\n    texts: [\"#a#a#/a#\"]\n\
            \x20 - url: https://bolt.example/b\n    url_id: 12\n    texts: [\"#a#b#/a#\"]\n\
            budget: {monthly: 1000, max_link_price: 10, daily_links: 1, total_links: 1, unknown_link_rent: 10}\n\
            filters: [{name: f}]\n\
            autobuyers:\n  - name: auto\n    id: 900\n    filter: f\n    state: stopped\n\
            \x20   urls: [{url: https://bolt.example/a, monthly_budget: 100, total_links_limit: 1, daily_links_limit: 1}]\n";
        crate::campaign::load_bytes(std::path::Path::new("c.yaml"), yaml.as_bytes()).unwrap()
    }

    #[test]
    fn a_url_id_another_campaign_holds_refuses_the_file_naming_the_owner_and_both_urls() {
        let c = naming_ids();
        let mut owners = IdOwners::default();
        assert_eq!(claimed_id(&c, &owners), None, "no id held elsewhere");
        owners
            .urls
            .insert(12, ("acme".into(), "https://acme.example/x".into()));
        assert_eq!(
            claimed_id(&c, &owners).as_deref(),
            Some(
                "`url_id` 12 on https://bolt.example/b (https://acme.example/x there) is recorded for campaign acme: \
                 if this is a rename, add `renamed_from: acme`, else remove it from this file; \
                 one project, URL id or autobuyer belongs to one campaign"
            )
        );
        owners.urls.clear();
        owners
            .urls
            .insert(13, ("acme".into(), "https://acme.example/x".into()));
        assert_eq!(
            claimed_id(&c, &owners),
            None,
            "an id the file does not name"
        );
    }

    #[test]
    fn the_project_is_said_first_then_the_autobuyers_then_the_urls() {
        let c = naming_ids();
        let mut owners = IdOwners::default();
        owners
            .urls
            .insert(11, ("u-owner".into(), "https://u.example/".into()));
        owners
            .autobuyers
            .insert(900, ("ab-owner".into(), "theirs".into()));
        let said = claimed_id(&c, &owners).unwrap();
        assert!(
            said.starts_with(
                "autobuyer `auto`'s id 900 (`theirs` there) is recorded for campaign ab-owner"
            ),
            "{said}"
        );
        owners.project = Some("p-owner".into());
        let said = claimed_id(&c, &owners).unwrap();
        assert!(
            said.starts_with("`project_id` 7000 is recorded for campaign p-owner"),
            "{said}"
        );
    }

    #[test]
    fn what_a_renamed_campaign_held_is_no_claim_once_handed_over() {
        let c = naming_ids();
        let mut owners = IdOwners {
            project: Some("old".into()),
            ..IdOwners::default()
        };
        owners
            .urls
            .insert(11, ("old".into(), "https://old.example/a".into()));
        owners
            .urls
            .insert(12, ("third".into(), "https://third.example/b".into()));
        owners.autobuyers.insert(900, ("old".into(), "auto".into()));
        owners.drop_held_by("old");
        let said = claimed_id(&c, &owners).unwrap();
        assert!(
            said.starts_with("`url_id` 12 on https://bolt.example/b (https://third.example/b there) is recorded for campaign third"),
            "another campaign's id still refuses it: {said}"
        );
        owners.drop_held_by("third");
        assert_eq!(claimed_id(&c, &owners), None);
    }

    #[test]
    fn the_plan_line_names_the_project_and_its_links() {
        let r = Renamed {
            from: "acme".into(),
            to: "acme-shoes".into(),
            project_id: Some(5000),
            links: 40,
        };
        assert_eq!(
            r.describe(),
            "rename acme → acme-shoes (project 5000 and its 40 links carry over)"
        );
    }
}
