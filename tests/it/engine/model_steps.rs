//! The model test's steps and their generator: a sequence of steps is a pure function of the
//! seed (splitmix64), generated up front against a model of the campaign files, so a failing
//! seed's sequence can be printed whole and replayed with `LINKRUNNER_MODEL_SEED`.
//!
//! Issue 32's edits of a campaign's identity ([`identity`]) come from a second generator of
//! the same seed and are added between the others' steps, so the sequences issue 11's seeds
//! were chosen for keep their shape: a file renamed with `renamed_from` (the key kept, or
//! dropped once honoured) or without it (then fixed as `plan` says, or renamed back), a second
//! file claiming a removed campaign's domain or `project_id`, the directory emptied then
//! restored, a URL respelt with `url_id:`, and autobuyers moved to the renamed file with
//! `moved_from:`.

use std::fmt;

use linkrunner_sandbox::faults::Prng;
use linkrunner_sandbox::{InUse, ListPaging};

/// One autobuyer as the file wants it.
#[derive(Debug, Clone)]
pub struct AbModel {
    pub name: String,
    /// Index into the campaign's URLs.
    pub url: usize,
    pub budget: i64,
    pub running: bool,
    /// Adopted by `id` (the account's autobuyer started in the UI): its file entry carries
    /// the seeded autobuyer's id and limits. A changed spec keeps it (it is replaced); a
    /// rename makes a new autobuyer of linkrunner's own (the adopted one, gone, is stopped).
    pub adopted: bool,
    /// `moved_from:` on its entry: the campaign whose file declared it before the file was
    /// renamed (with `renamed_from:` naming the same campaign, the only move the product
    /// supports: an autobuyer belongs to its project). Dropped with the rename's key.
    pub moved_from: Option<&'static str>,
}

/// One campaign file as the model wants it; `present: false` is a removed file.
#[derive(Debug, Clone)]
pub struct FileModel {
    /// Its name now: one of `names`.
    pub name: &'static str,
    /// The names the file may take (a rename switches between them); the first is the file's
    /// identity in the model, whatever its name now.
    pub names: [&'static str; 2],
    /// `renamed_from:` in the file.
    pub renamed_from: Option<&'static str>,
    pub domain: &'static str,
    pub present: bool,
    pub paused: bool,
    /// `budget.monthly` in roubles.
    pub monthly: i64,
    /// Whether it has buy rounds.
    pub buys: bool,
    pub autobuyers: Vec<AbModel>,
    /// Adopts the account already in use that the sandbox seeds (`project_id`, URL and text
    /// ids, its autobuyer by `id`): links held by others from the start.
    pub adopts: bool,
    /// Next autobuyer number, so every new or renamed autobuyer gets a fresh name.
    next_ab: u32,
    /// For the generator: the journal records the campaign under its name now (it was
    /// present under it, unblocked, at a checkpoint): a rename or a claim then means what it
    /// says.
    settled: bool,
    /// For the generator: renamed without the key from this recorded name; the next identity
    /// edit of the file fixes it.
    needs_fix: Option<&'static str>,
    /// Each URL spelt otherwise than at first ([`respell`]), and the `url_id:` its file
    /// writes once it was respelt (the id the journal holds, which the runner fills in): kept,
    /// as the docs allow, when the spelling changes back.
    pub spelt: [bool; 2],
    pub url_ids: [Option<i64>; 2],
    /// For the generator: no edit of the file since the last checkpoint.
    quiet: bool,
}

const CAPS: [i64; 5] = [300, 700, 1200, 2000, 3500];
const BUDGETS: [i64; 3] = [200, 350, 600];

impl FileModel {
    /// The three campaigns every sequence starts from: one with buy rounds and an autobuyer,
    /// one with autobuyers only, and one adopting an account already in use (buy rounds, the
    /// team's hand-bought links and its running autobuyer, adopted).
    pub fn initial() -> Vec<FileModel> {
        let ab = |name: &str, url, budget, running| AbModel {
            name: name.into(),
            url,
            budget,
            running,
            adopted: false,
            moved_from: None,
        };
        // Present, running, unedited since the start: what the three files share.
        let file =
            |names: [&'static str; 2], domain, monthly, buys, autobuyers, next_ab| FileModel {
                name: names[0],
                names,
                renamed_from: None,
                domain,
                present: true,
                paused: false,
                monthly,
                buys,
                autobuyers,
                adopts: false,
                next_ab,
                settled: false,
                needs_fix: None,
                spelt: [false; 2],
                url_ids: [None; 2],
                quiet: true,
            };
        let ada = vec![ab("ada-ab1", 0, 350, true)];
        let bea = vec![ab("bea-ab1", 0, 600, true), ab("bea-ab2", 1, 350, false)];
        // The seeded `team-auto`: 500 RUB on `/trail`, as the sandbox runs it.
        let cid = vec![AbModel {
            adopted: true,
            ..ab("team-auto", 1, 500, true)
        }];
        vec![
            file(
                ["ada-tools", "ada-kit"],
                "https://ada.example",
                1200,
                true,
                ada,
                2,
            ),
            file(
                ["bea-books", "bea-shelf"],
                "https://bea.example",
                2000,
                false,
                bea,
                3,
            ),
            FileModel {
                adopts: true,
                ..file(
                    ["cid-shop", "cid-store"],
                    ADOPTED_DOMAIN,
                    2000,
                    true,
                    cid,
                    1,
                )
            },
        ]
    }

    /// The file as the checks see it: `present` when a pass should give it what it wants.
    pub fn wanting(&self, present: bool) -> FileModel {
        FileModel {
            present,
            ..self.clone()
        }
    }

    /// The file's identity in the model (its first name), whatever it is called now.
    pub fn id(&self) -> &'static str {
        self.names[0]
    }

    /// The file a second team writes for the same site while this one is removed: the same
    /// URLs and autobuyers, its domain spelt with `www.` (or, for the adopting file, the same
    /// `project_id`). Refused by validation beside this file, blocked by the pass without it.
    pub fn claimant(&self) -> FileModel {
        let name = *CLAIMANTS
            .iter()
            .find(|c| c[4..7] == self.name[..3])
            .expect("a claimant name");
        let domain = match self.adopts {
            true => self.domain,
            false => *WWW
                .iter()
                .find(|w| w.ends_with(&self.domain["https://".len()..]))
                .expect("a www. spelling"),
        };
        FileModel {
            name,
            names: [name, name],
            renamed_from: None,
            domain,
            present: true,
            // Its own URLs and autobuyers: the owner's ids and moves are not its to name.
            spelt: [false; 2],
            url_ids: [None; 2],
            autobuyers: self
                .autobuyers
                .iter()
                .map(|a| AbModel {
                    moved_from: None,
                    ..a.clone()
                })
                .collect(),
            ..self.clone()
        }
    }

    /// URL `i` as the file spells it now.
    pub fn url(&self, i: usize) -> String {
        let url = match self.adopts {
            true => format!("{}/{}", self.domain, ["running-shoes", "trail"][i]),
            false => format!("{}/page-{i}", self.domain),
        };
        match self.spelt[i] {
            true => respell(&url),
            false => url,
        }
    }

    /// The least `budget.monthly` validation accepts: the running autobuyers' budgets plus
    /// one worst-case round (`per_run` 2 × `max_link_price` 150), paused or not.
    pub fn least_cap(&self) -> i64 {
        let running: i64 = self
            .autobuyers
            .iter()
            .filter(|a| a.running)
            .map(|a| a.budget)
            .sum();
        running + if self.buys { 300 } else { 0 }
    }

    pub fn wants_running(&self, ab: &AbModel) -> bool {
        ab.running && !self.paused
    }

    fn fresh_name(&mut self) -> String {
        let n = self.next_ab;
        self.next_ab += 1;
        format!("{}-ab{n}", &self.name[..3])
    }

    /// The file's YAML: two URLs, one filter, the autobuyers, buy rounds if any; an adopting
    /// file names the seeded account's ids (`seeded`).
    pub fn yaml(&self, seeded: &InUse) -> String {
        let mut y = format!(
            "name: {}\ndomain: {}\npaused: {}\n",
            self.name, self.domain, self.paused
        );
        if let Some(old) = self.renamed_from {
            y += &format!("renamed_from: {old}\n");
        }
        if self.adopts {
            y += &format!("project_id: {}\n", seeded.project_id);
        }
        y += "urls:\n";
        for i in 0..2 {
            y += &match self.adopts {
                // The seeded `/running-shoes` and `/trail`, with their ids.
                true => adopted_url(&seeded.urls[i + 1], self.spelt[i]),
                false => format!(
                    "  - url: {}\n{}    texts:\n      - \"#a#{} {i}#/a#\"\n",
                    self.url(i),
                    self.url_ids[i].map_or(String::new(), |id| format!("    url_id: {id}\n")),
                    self.name
                ),
            };
        }
        y += &format!(
            "budget:\n  monthly: {}\n  max_link_price: 150\n  daily_links: 30\n  total_links: 60\n",
            self.monthly
        );
        if self.adopts {
            y += "  unknown_link_rent: 150\n";
        }
        if self.buys {
            y += "buy:\n  schedule: \"0 9 * * *\"\n  link_type_id: 1\n  per_run: 2\n  search:\n    price_rent_to: 150\n";
        }
        y += "filters:\n  - name: cheap\n    price_rent_to: 150\n";
        if !self.autobuyers.is_empty() {
            y += "autobuyers:\n";
        }
        for ab in &self.autobuyers {
            // The adopted one's limits are the seeded autobuyer's.
            let (id, limits) = match ab.adopted {
                true => (format!("    id: {}\n", seeded.autobuyer_id), (20, 20)),
                false => (String::new(), (6, 3)),
            };
            let moved = ab
                .moved_from
                .map_or(String::new(), |from| format!("    moved_from: {from}\n"));
            y += &format!(
                "  - name: {}\n{id}{moved}    filter: cheap\n    state: {}\n    urls:\n      - {{ url: \"{}\", monthly_budget: {}, total_links_limit: {}, daily_links_limit: {} }}\n",
                ab.name,
                if ab.running { "running" } else { "stopped" },
                self.url(ab.url),
                ab.budget,
                limits.0,
                limits.1
            );
        }
        y
    }
}

/// The domain of the account in use the sandbox seeds for the adopting file.
pub const ADOPTED_DOMAIN: &str = "https://cid.example";

/// The second files that claim a removed campaign's site, by the owner's first three letters.
pub const CLAIMANTS: [&str; 3] = ["dup-ada", "dup-bea", "dup-cid"];
const WWW: [&str; 2] = ["https://www.ada.example", "https://www.bea.example"];

/// Another spelling of the same page, as a person fixing a URL writes it: the last path
/// segment capitalised (`/page-0` → `/Page-0`). The fence folds case, so the per-URL
/// invariant sees both spellings as one URL and a respelling that bought again fails it.
pub fn respell(url: &str) -> String {
    let at = url.rfind('/').expect("a path") + 1;
    let (head, tail) = url.split_at(at);
    let mut chars = tail.chars();
    let first = chars.next().expect("a segment").to_ascii_uppercase();
    format!("{head}{first}{}", chars.as_str())
}

/// A seeded URL with its ids, respelt (`spelt`) under the same `url_id`.
fn adopted_url(u: &linkrunner_sandbox::InUseUrl, spelt: bool) -> String {
    let url = match spelt {
        true => respell(&u.url),
        false => u.url.clone(),
    };
    let mut y = format!("  - url: {url}\n    url_id: {}\n    texts:\n", u.url_id);
    for (text, id) in &u.texts {
        y += &format!("      - {{ text: \"{text}\", text_id: {id} }}\n");
    }
    y
}

/// An edit of one campaign file.
#[derive(Debug, Clone)]
pub enum Edit {
    Add(AbModel),
    Remove(String),
    Rename {
        from: String,
        to: String,
    },
    Flip(String),
    /// The autobuyer's spec changes (its monthly budget): applied by replacement. Picked from
    /// three budgets, so a spec also changes back to an earlier one.
    Respec {
        name: String,
        budget: i64,
    },
    Pause(bool),
    Cap(i64),
    RemoveFile,
    RestoreFile,
    /// The file is renamed (`to`, its other name): with `renamed_from:` naming its name
    /// until now, or without (then the new name is blocked while the old one is recorded).
    /// `moved`: with the key, its autobuyers' entries say `moved_from:` the old name (the
    /// autobuyers moved from the old file to the new one).
    RenameFile {
        to: &'static str,
        key: bool,
        moved: bool,
    },
    /// `renamed_from:` added (the way out `plan` names for a rename without it).
    AddKey(&'static str),
    /// `renamed_from:` dropped, once a checkpoint saw it honoured.
    DropKey,
    /// URL `url` respelt ([`respell`], or back) with `url_id:` naming the id the journal
    /// holds for it: the same URL, its links and purchases carried over.
    Respell {
        url: usize,
    },
}

/// What the marketplace does from now on.
#[derive(Debug, Clone)]
pub enum Market {
    /// No faults.
    Calm,
    /// Changes executed, then the answer cut short.
    CutAfterCommit(f64),
    /// 5xx before anything is executed.
    ServerErrors(f64),
    /// A server-wide rate limit answered with 429 and `Retry-After: 1`.
    RateLimit(u32),
    /// Changes executed, answered `isError: true` with the ids.
    ErrorWithIds(f64),
    /// The link list: page size (none: whole) and how paging is said.
    List(Option<usize>, ListPaging),
    /// Bought links show in the list this late.
    Lag(u64),
    /// Every running autobuyer buys up to this many links now.
    AutobuyNow(usize),
    /// The team buys a link by hand in the adopted project: on its main page (0), which no
    /// file names, on `/running-shoes` (1) or on `/trail` (2), where the adopted autobuyer
    /// buys (and autobuyers the files add may buy on either): the list cannot tell such a
    /// link from the autobuyer's own.
    HandBuy(usize),
    /// The n-th active link (modulo their number) leaves: removed, still listed or not.
    LinkLeaves { nth: usize, listed: bool },
}

#[derive(Debug, Clone)]
pub enum Step {
    Edit {
        file: usize,
        edit: Edit,
    },
    /// A pass like `once` (with or without a buy round).
    Pass {
        buy: bool,
    },
    /// A pass crashed once the sandbox got this many more requests: its future is dropped
    /// (nothing after that point runs) and a new process (engine, holder) takes over once the
    /// crashed holder's lease expired.
    Crash {
        buy: bool,
        after_requests: u64,
    },
    Market(Market),
    /// The clock moves on.
    Wait {
        ms: i64,
    },
    /// A calm marketplace with a complete list, then passes (and an operator) until every
    /// campaign has nothing left to do; then the journal is compared with the ledger.
    Checkpoint,
    /// A second file claiming file `owner`'s site ([`FileModel::claimant`]) is written
    /// (`on`) or removed; written only while `owner`'s file is removed.
    Claim {
        owner: usize,
        on: bool,
    },
    /// Every campaign file is removed at once (an empty checkout, a failed mount).
    EmptyDir,
    /// These files, removed by [`Step::EmptyDir`], return.
    RestoreDir(Vec<usize>),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Edit { file, edit } => write!(f, "edit file #{file}: {edit:?}"),
            Step::Pass { buy } => write!(f, "pass (buy round: {buy})"),
            Step::Crash {
                buy,
                after_requests,
            } => write!(
                f,
                "crash a pass (buy round: {buy}) after {after_requests} request(s)"
            ),
            Step::Market(m) => write!(f, "marketplace: {m:?}"),
            Step::Wait { ms } => write!(f, "wait {ms} ms"),
            Step::Checkpoint => write!(f, "checkpoint: calm, converge, journal = ledger"),
            Step::Claim { owner, on: true } => {
                write!(f, "a second file claims the site of file #{owner}")
            }
            Step::Claim { owner, on: false } => {
                write!(
                    f,
                    "the second file claiming file #{owner}'s site is removed"
                )
            }
            Step::EmptyDir => write!(f, "every campaign file removed at once"),
            Step::RestoreDir(files) => write!(f, "files {files:?} restored"),
        }
    }
}

/// The sequence for `seed`: `len` steps, a checkpoint every 12 and at the end.
pub fn generate(seed: u64, len: usize) -> Vec<Step> {
    let mut rng = Prng::new(seed);
    // Its own stream: the identity edits leave the other steps as they were drawn.
    let mut idr = Prng::new(seed ^ 0x1de7_3200);
    let mut files = FileModel::initial();
    let mut around = Around::default();
    let mut steps = Vec::with_capacity(len + 2);
    for i in 1..=len {
        let step = match rng.range(0, 99) {
            0..=34 => Step::Pass {
                buy: rng.range(0, 2) > 0,
            },
            35..=59 => {
                let mut edits = edit(&mut rng, &mut files, &mut around);
                let last = edits.pop().expect("an edit");
                steps.extend(edits);
                last
            }
            60..=79 => Step::Market(market(&mut rng)),
            80..=89 => Step::Crash {
                buy: rng.range(0, 1) > 0,
                after_requests: rng.range(0, 12) as u64,
            },
            _ => Step::Wait {
                ms: rng.range(1, 4) * 700,
            },
        };
        steps.push(step);
        if idr.range(0, 99) < IDENTITY_SHARE {
            steps.extend(identity(&mut idr, &mut files, &mut around));
        }
        if i % 12 == 0 {
            steps.push(Step::Checkpoint);
            settle(&mut files);
        }
    }
    steps.push(Step::Checkpoint);
    steps
}

/// In how many of 100 steps an identity edit follows.
const IDENTITY_SHARE: i64 = 20;

/// What the generator knows besides the files: the claimants written (by owner), and the
/// files an emptied directory took away.
#[derive(Debug, Default)]
struct Around {
    claims: std::collections::BTreeSet<usize>,
    emptied: Option<Vec<usize>>,
}

/// A checkpoint converges every file: one present and not blocked is recorded under its name.
fn settle(files: &mut [FileModel]) {
    for m in files.iter_mut() {
        m.quiet = true;
        m.settled |= m.present && m.needs_fix.is_none();
    }
}

/// An edit of a campaign's identity (issue 32), applied to the model as it is generated; none
/// when the one drawn does not apply. A rename or a claim waits until a checkpoint saw the
/// campaign recorded under its name now, so each means what it says: a rename without the key
/// is blocked (and is fixed by the next identity edit of its file: the key added, as `plan`
/// says, or the old name back), a claimant is refused (its owner's file stays removed while it
/// is there).
fn identity(rng: &mut Prng, files: &mut [FileModel], around: &mut Around) -> Vec<Step> {
    if let Some(was) = around.emptied.take() {
        // While the directory is empty, a second team's file may claim a site first.
        let first = was
            .iter()
            .copied()
            .find(|&i| files[i].settled && !files[i].present);
        if let Some(owner) = first.filter(|_| around.claims.is_empty() && rng.range(0, 1) == 0) {
            around.claims.insert(owner);
            around.emptied = Some(was);
            return vec![Step::Claim { owner, on: true }];
        }
        let mut out: Vec<Step> = std::mem::take(&mut around.claims)
            .into_iter()
            .map(|owner| Step::Claim { owner, on: false })
            .collect();
        let back: Vec<usize> = was.into_iter().filter(|&i| !files[i].present).collect();
        back.iter().for_each(|&i| files[i].present = true);
        if !back.is_empty() {
            out.push(Step::RestoreDir(back));
        }
        return out;
    }
    let file = rng.range(0, files.len() as i64 - 1) as usize;
    let m = &mut files[file];
    let other = *m.names.iter().find(|n| **n != m.name).expect("two names");
    let edit = match (m.needs_fix, rng.range(0, 5)) {
        (Some(old), n) if n < 2 => Edit::AddKey(old),
        (Some(old), _) => Edit::RenameFile {
            to: old,
            key: false,
            moved: false,
        },
        // A move is drawn only for a file left alone since the checkpoint, so the pass that
        // hands it over has nothing else to do with its autobuyers (the invariant is strict).
        (None, 0 | 1) if m.present && m.settled && m.quiet && !m.autobuyers.is_empty() => {
            let edit = Edit::RenameFile {
                to: other,
                key: true,
                moved: true,
            };
            apply(m, &edit);
            return vec![Step::Edit { file, edit }, Step::Pass { buy: false }];
        }
        (None, n @ (0 | 1)) if m.present && m.settled => Edit::RenameFile {
            to: other,
            key: n == 0,
            moved: false,
        },
        (None, 2) if m.present && m.settled && m.renamed_from.is_some() => Edit::DropKey,
        (None, 3) if around.claims.remove(&file) => {
            return vec![Step::Claim {
                owner: file,
                on: false,
            }];
        }
        // A removed campaign's site is what a second team's file claims.
        (None, _) if !m.present && m.settled && !around.claims.contains(&file) => {
            around.claims.insert(file);
            return vec![Step::Claim {
                owner: file,
                on: true,
            }];
        }
        (None, 4) if around.claims.is_empty() => {
            let was: Vec<usize> = (0..files.len()).filter(|&i| files[i].present).collect();
            was.iter().for_each(|&i| files[i].present = false);
            around.emptied = Some(was);
            return vec![Step::EmptyDir];
        }
        (None, 5) if m.present && m.settled => Edit::Respell {
            url: rng.range(0, 1) as usize,
        },
        _ => return Vec::new(),
    };
    apply(m, &edit);
    vec![Step::Edit { file, edit }]
}

/// A sequence aimed at settlement, the rule the broad sequences reach too rarely: purchases
/// cut after commit while the list shows a first page only (no paging fields), buy rounds and
/// reads after the settle grace, with the files left alone. A page whose purchase was cut
/// must never be bought again, whatever the reads showed; a checkpoint ends it.
pub fn generate_settlement(seed: u64, len: usize) -> Vec<Step> {
    let mut rng = Prng::new(seed ^ 0x5e77_1e00);
    let size = *pick(&mut rng, &[Some(1), Some(2)]);
    let mut steps = vec![
        Step::Market(Market::List(size, ListPaging::None)),
        Step::Market(Market::CutAfterCommit(0.5)),
    ];
    for _ in 0..len {
        steps.push(match rng.range(0, 9) {
            0..=4 => Step::Pass { buy: true },
            5 | 6 => Step::Pass { buy: false },
            7 => Step::Wait { ms: 1400 },
            _ => Step::Market(Market::CutAfterCommit(rng.range(3, 7) as f64 / 10.0)),
        });
    }
    steps.push(Step::Checkpoint);
    steps
}

fn pick<'a, T>(rng: &mut Prng, xs: &'a [T]) -> &'a T {
    &xs[rng.range(0, xs.len() as i64 - 1) as usize]
}

/// An edit of a random file, applied to the model as it is generated. Files stay valid (a
/// file validation refuses is not the subject here): a cap is never set under what the
/// running autobuyers need, and an edit that needs more is preceded by raising the cap to
/// exactly that — the tightest cap a valid file can have.
fn edit(rng: &mut Prng, files: &mut [FileModel], around: &mut Around) -> Vec<Step> {
    let file = rng.range(0, files.len() as i64 - 1) as usize;
    let m = &mut files[file];
    let mut out = Vec::new();
    // A removed file returns once the second file claiming its site is gone (both present
    // is the validation error `load` refuses).
    if !m.present && around.claims.remove(&file) {
        out.push(Step::Claim {
            owner: file,
            on: false,
        });
    }
    let edit = if !m.present {
        Edit::RestoreFile
    } else {
        let ab = if m.autobuyers.is_empty() {
            String::new()
        } else {
            pick(rng, &m.autobuyers).name.clone()
        };
        match rng.range(0, 9) {
            0 if m.autobuyers.len() < 3 => Edit::Add(AbModel {
                name: m.fresh_name(),
                // In the adopted project too on either URL: hand purchases go to both.
                url: rng.range(0, 1) as usize,
                budget: *pick(rng, &BUDGETS),
                running: rng.range(0, 2) > 0,
                adopted: false,
                moved_from: None,
            }),
            1 if !ab.is_empty() => Edit::Remove(ab),
            2 if !ab.is_empty() => Edit::Rename {
                from: ab,
                to: m.fresh_name(),
            },
            3 | 4 if !ab.is_empty() => Edit::Flip(ab),
            5 => Edit::Pause(!m.paused),
            6 | 7 => Edit::Cap(*pick(rng, &CAPS)),
            8 => Edit::RemoveFile,
            9 if !ab.is_empty() => Edit::Respec {
                name: ab,
                budget: *pick(rng, &BUDGETS),
            },
            _ => Edit::Cap(*pick(rng, &CAPS)),
        }
    };
    let edit = match edit {
        Edit::Cap(c) => Edit::Cap(c.max(m.least_cap())),
        e => e,
    };
    let mut wanted = m.clone();
    apply(&mut wanted, &edit);
    if wanted.least_cap() > m.monthly {
        let raise = Edit::Cap(wanted.least_cap());
        apply(m, &raise);
        out.push(Step::Edit { file, edit: raise });
    }
    apply(m, &edit);
    out.push(Step::Edit { file, edit });
    out
}

/// What an edit does to the model of the file.
pub fn apply(m: &mut FileModel, e: &Edit) {
    m.quiet = false;
    match e {
        Edit::Add(ab) => m.autobuyers.push(ab.clone()),
        Edit::Remove(n) => m.autobuyers.retain(|a| &a.name != n),
        Edit::Rename { from, to } => m
            .autobuyers
            .iter_mut()
            .filter(|a| &a.name == from)
            .for_each(|a| {
                a.name = to.clone();
                a.adopted = false;
                // A new autobuyer: nothing recorded anywhere to move.
                a.moved_from = None;
            }),
        Edit::Flip(n) => m
            .autobuyers
            .iter_mut()
            .filter(|a| &a.name == n)
            .for_each(|a| a.running = !a.running),
        Edit::Respec { name, budget } => m
            .autobuyers
            .iter_mut()
            .filter(|a| &a.name == name)
            .for_each(|a| a.budget = *budget),
        Edit::Pause(p) => m.paused = *p,
        Edit::Cap(c) => m.monthly = *c,
        Edit::RemoveFile => m.present = false,
        Edit::RestoreFile => m.present = true,
        Edit::RenameFile { to, key, moved } => {
            let from = std::mem::replace(&mut m.name, to);
            m.renamed_from = key.then_some(from);
            let moved_from = (*key && *moved).then_some(from);
            m.autobuyers
                .iter_mut()
                .for_each(|a| a.moved_from = moved_from);
            m.needs_fix = match key {
                true => None,
                // Renamed back to the name the journal records: nothing left to fix.
                false if m.needs_fix == Some(*to) => None,
                false => Some(from),
            };
            m.settled = false;
        }
        Edit::AddKey(old) => {
            m.renamed_from = Some(old);
            m.needs_fix = None;
        }
        Edit::DropKey => {
            m.renamed_from = None;
            m.autobuyers.iter_mut().for_each(|a| a.moved_from = None);
        }
        Edit::Respell { url } => m.spelt[*url] = !m.spelt[*url],
    }
}

fn market(rng: &mut Prng) -> Market {
    let rate = |rng: &mut Prng| rng.range(1, 4) as f64 / 10.0;
    match rng.range(0, 15) {
        0 => Market::Calm,
        1..=3 => Market::CutAfterCommit(rate(rng)),
        4 => Market::ServerErrors(rate(rng)),
        5 => Market::RateLimit(rng.range(10, 20) as u32),
        6 => Market::ErrorWithIds(rate(rng)),
        7..=9 => {
            let paging = *pick(
                rng,
                &[
                    ListPaging::None,
                    ListPaging::PageTotal,
                    ListPaging::OffsetHasMore,
                ],
            );
            let size = *pick(rng, &[None, Some(1), Some(2), Some(3)]);
            Market::List(size, paging)
        }
        10 => Market::Lag(*pick(rng, &[0, 400, 1200])),
        11 | 12 => Market::AutobuyNow(rng.range(1, 2) as usize),
        13 | 14 => Market::HandBuy(rng.range(0, 2) as usize),
        _ => Market::LinkLeaves {
            nth: rng.range(0, 50) as usize,
            listed: rng.range(0, 1) > 0,
        },
    }
}
