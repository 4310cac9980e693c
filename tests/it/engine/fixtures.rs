//! Campaign files modelled on `campaigns/*.yaml`, small enough that a few passes reach a cap.

use crate::support::campaigns;

/// Buy rounds on two pages, a filter and one running autobuyer.
/// Caps: 3000 RUB/month, 150 RUB per link, 4 links a day, 6 in total; 3 links per round.
pub const ACME: &str = r##"# yaml-language-server: $schema=../schema/campaign.schema.json
name: acme-shoes
domain: https://acme.example
paused: false
urls:
  - url: https://acme.example/running-shoes
    texts:
      - "Best #a#running shoes#/a# in town"
      - "#a#acme running shoes#/a#"
  - url: https://acme.example/trail
    texts:
      - "Shoes for the #a#trail#/a#, tested in the mountains"
budget:
  monthly: 3000
  max_link_price: 150
  daily_links: 4
  total_links: 6
buy:
  schedule: "0 9 * * *"
  link_type_id: 1
  per_run: 3
  order: cheapest
  search:
    price_rent_from: 10
    price_rent_to: 150
    cgeoip_country_iso_code: RU
filters:
  - name: acme-cheap
    price_article_from: 0
    price_article_to: 500
    price_rent_from: 10
    price_rent_to: 80
autobuyers:
  - name: acme-auto
    filter: acme-cheap
    auto_approve: false
    state: running
    urls:
      - url: https://acme.example/running-shoes
        monthly_budget: 1000
        total_links_limit: 20
        daily_links_limit: 1
"##;

/// Autobuyers only: one running, one stopped; no buy rounds.
pub const BOLT: &str = r##"# yaml-language-server: $schema=../schema/campaign.schema.json
name: bolt-bikes
domain: https://bolt-bikes.example
urls:
  - url: https://bolt-bikes.example/
    texts:
      - "#a#Bolt Bikes#/a#"
      - "City bikes from #a#bolt-bikes.example#/a#"
  - url: https://bolt-bikes.example/e-bikes?sort=price
    texts:
      - "Compare #a#electric bikes#/a# by price"
budget:
  monthly: "7500.50"
  max_link_price: 200
  daily_links: 3
  total_links: 100
filters:
  - name: bikes-mid
    price_rent_from: 20
    price_rent_to: 200
  - name: bikes-summer
    price_rent_to: 120
autobuyers:
  - name: bikes-all-year
    filter: bikes-mid
    auto_approve: true
    state: running
    urls:
      - { url: "https://bolt-bikes.example/", monthly_budget: 2500, total_links_limit: 40, daily_links_limit: 2 }
      - { url: "https://bolt-bikes.example/e-bikes?sort=price", monthly_budget: 2000.50, total_links_limit: 30, daily_links_limit: 1 }
  - name: bikes-summer
    filter: bikes-summer
    state: stopped
    urls:
      - { url: "https://bolt-bikes.example/", monthly_budget: 3000, total_links_limit: 30, daily_links_limit: 2 }
"##;

/// Buy rounds only, tight money: 400 RUB/month at most 120 RUB a link, 2 links per round.
pub const DUNE: &str = r##"# yaml-language-server: $schema=../schema/campaign.schema.json
name: dune-maps
domain: https://dune-maps.example
urls:
  - url: https://dune-maps.example/atlas
    texts:
      - "The #a#desert atlas#/a# for travellers"
      - "#a#dune maps#/a#"
budget:
  monthly: 400
  max_link_price: 120
  daily_links: 5
  total_links: 10
buy:
  schedule: "30 6 * * 1-5"
  link_type_id: 2
  per_run: 2
  order: random
  search:
    price_rent_to: 120
"##;

/// `name` on `https://NAME.example` with one promoted URL (`/a`) and one text: the head of
/// the files a test writes for several campaigns, their budget and buy rounds its own.
pub fn one_page(name: &str) -> String {
    let domain = format!("https://{name}.example");
    let text = format!("Buy #a#{name}#/a# here");
    campaigns::head(name, &domain, &format!("{domain}/a"), &[&text])
}

/// ivy-garden's name, domain and promoted URL with two texts: the head of its files, their
/// budget and buy rounds the test's own.
pub const IVY_HEAD: &str = r##"name: ivy-garden
domain: https://ivy.example
urls:
  - url: https://ivy.example/seeds
    texts:
      - "#a#ivy seeds#/a#"
      - "Buy #a#garden seeds#/a# here"
"##;

/// [`ACME`]'s link limits and buy rounds (`daily_links` to `per_run`), for a file that adopts
/// acme-shoes' account and buys as it does.
pub fn acme_link_limits_and_rounds() -> &'static str {
    let from = ACME
        .find("  daily_links:")
        .expect("ACME limits its links a day");
    let to = ACME.find("  order:").expect("ACME orders its rounds");
    &ACME[from..to]
}
