//! The campaigns the suite runs: small, with every kind of changing call in one pass
//! (project, texts, filter, an autobuyer to start and one to stop, purchases), and a monthly
//! cap that leaves no room for a duplicate.

use linkrunner::money::Money;

/// What a campaign file asks for, as the assertions need it.
#[derive(Debug, Clone)]
pub struct Spec {
    pub name: String,
    pub domain: String,
    pub monthly_cap: Money,
    pub total_links: u32,
    /// (name, wanted running, monthly budget)
    pub autobuyers: Vec<(String, bool, Money)>,
}

impl Spec {
    /// `name` on its own domain; `total_links` links bought 2 at a time, at most 150 RUB each.
    /// The cap is exactly the running autobuyer's budget plus every link at the highest price:
    /// all links always fit, and nothing else does.
    pub fn new(name: &str, total_links: u32) -> Spec {
        Spec {
            name: name.to_string(),
            domain: format!("https://{name}.example"),
            monthly_cap: Money::from_rubles(500 + 150 * i64::from(total_links)),
            total_links,
            autobuyers: vec![
                ("auto-on".into(), true, Money::from_rubles(500)),
                ("auto-off".into(), false, Money::from_rubles(300)),
            ],
        }
    }

    pub fn file(&self) -> (String, String) {
        (format!("{}.yaml", self.name), self.yaml())
    }

    fn yaml(&self) -> String {
        let (name, domain, total) = (&self.name, &self.domain, self.total_links);
        let cap = self.monthly_cap;
        let autobuyers: String = self
            .autobuyers
            .iter()
            .map(|(ab, running, budget)| {
                let state = if *running { "running" } else { "stopped" };
                format!(
                    "  - name: {ab}\n    filter: cheap\n    auto_approve: false\n    state: {state}\n    urls:\n      - {{ url: {domain}/shoes, monthly_budget: {budget}, total_links_limit: 5, daily_links_limit: 1 }}\n"
                )
            })
            .collect();
        format!(
            "name: {name}\ndomain: {domain}\nurls:\n  - url: {domain}/shoes\n    texts:\n      - \"Best #a#running shoes#/a# in town\"\n      - \"#a#{name} shoes#/a#\"\n\
             budget:\n  monthly: {cap}\n  max_link_price: 150\n  daily_links: {total}\n  total_links: {total}\n\
             buy:\n  schedule: \"0 9 * * *\"\n  link_type_id: 1\n  per_run: 2\n  search: {{ price_rent_from: 10, price_rent_to: 150 }}\n\
             filters:\n  - {{ name: cheap, price_rent_from: 10, price_rent_to: 80 }}\n\
             autobuyers:\n{autobuyers}"
        )
    }
}

/// A seeded URL adopted by its id, with its first text by id: one entry of a file's `urls`.
pub fn adopted_url(u: &linkrunner_sandbox::InUseUrl) -> String {
    let (text, text_id) = &u.texts[0];
    format!(
        "  - url: {}\n    url_id: {}\n    texts:\n      - {{ text: \"{text}\", text_id: {text_id} }}\n",
        u.url, u.url_id
    )
}

/// The seeded team's filter, and its autobuyer adopted by id, running on `url` with
/// `budget` RUB a month and 20 links in all: a file's `filters` and `autobuyers`.
pub fn adopted_team_autobuyer(s: &linkrunner_sandbox::InUse, url: &str, budget: i64) -> String {
    format!(
        "filters:\n  - {{ name: team-cheap, price_rent_to: 150 }}\n\
         autobuyers:\n  - name: team-auto\n    id: {}\n    filter: team-cheap\n    state: running\n    urls:\n      - {{ url: \"{url}\", monthly_budget: {budget}, total_links_limit: 20, daily_links_limit: 20 }}\n",
        s.autobuyer_id
    )
}
