//! `history` and `explain` after a run with uncertain purchases and an operator's resolve:
//! every movement of the commitment names its intent and why it was made (the round, the
//! file version, the git commit), and a resolved link's story shows the operator's word.

use std::collections::BTreeSet;

use linkrunner::effects::{EngineSettings, UnpagedList};
use linkrunner::store::{CauseKind, IntentKind, IntentState, Resolution};
use linkrunner::views::story::{self, Subject};
use linkrunner_sandbox::{Behaviour, Faults, ListPaging, Op};

use super::fixtures::ACME;
use super::support::{TestDb, World, pass_with, sandbox_config};
use crate::support::app::fast_settings;
use crate::support::db::Backend;

const COMMIT: &str = "c0ffee0123456789abcdef0123456789abcdef01";

/// The campaign directory as a git work tree on branch `main` at [`COMMIT`].
fn make_git_work_tree(w: &World) {
    let git = w.dir.path().join(".git");
    std::fs::create_dir_all(git.join("refs/heads")).unwrap();
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(git.join("refs/heads/main"), format!("{COMMIT}\n")).unwrap();
}

pub async fn history_and_explain_name_the_round_the_file_version_and_the_operators_resolve(
    db: TestDb,
) {
    let mut cfg = sandbox_config();
    // A one-link first page that does not say it is one: absence from it proves nothing, so
    // the purchases it does not show stay uncertain until an operator speaks.
    cfg.behaviour = Behaviour {
        list_page_size: Some(1),
        list_paging: ListPaging::None,
        ..Behaviour::default()
    };
    cfg.faults = Faults {
        drop_after_commit_rate: 1.0,
        drop_ops: Some(BTreeSet::from([Op::BuyLinks])),
        ..Faults::default()
    };
    let w = World::new(db, cfg).await;
    make_git_work_tree(&w);
    // Without its autobuyer: on a URL an autobuyer covers, a list that may be cut stops
    // buying altogether (issue 24), and this test needs purchases cut after commit.
    let acme = ACME.split("autobuyers:").next().unwrap();
    w.write_campaign("acme-shoes", acme);
    let digest = w.campaigns()[0].fingerprint.clone();
    let engine = w
        .engine_with(EngineSettings {
            unpaged_list: UnpagedList::Partial,
            ..fast_settings()
        })
        .await;
    pass_with(&engine, &w.campaigns(), true).await;
    let uncertain: Vec<_> = w
        .recorded("acme-shoes")
        .await
        .uncertain
        .into_iter()
        .filter(|i| i.kind == IntentKind::Purchase)
        .collect();
    assert!(
        !uncertain.is_empty(),
        "cut answers left purchases uncertain"
    );
    let resolved = &uncertain[0];
    let page = resolved.request["page_id"].as_i64().unwrap();
    let link = w
        .ledger()
        .purchases
        .iter()
        .find(|p| p.page_id == page)
        .expect("the marketplace executed the purchase")
        .link_id;
    let why = "seen in the marketplace's web UI";
    w.store()
        .intents()
        .resolve_intent(
            resolved.id,
            Resolution::Created { remote_id: link },
            why,
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    w.sandbox.set_faults(Faults::default()).unwrap();
    pass_with(&engine, &w.campaigns(), false).await;

    let lines = story::history(w.store(), Some("acme-shoes"), None)
        .await
        .unwrap();
    let committed = w.budget("acme-shoes").await;
    let sum = lines.iter().map(|l| l.delta.kopecks()).sum::<i64>();
    assert_eq!(
        sum,
        committed.committed.kopecks(),
        "history sums to the commitment"
    );
    let reserves: Vec<_> = lines
        .iter()
        .filter(|l| l.reason == "reserve" && l.kind == Some(IntentKind::Purchase))
        .collect();
    assert!(!reserves.is_empty(), "{lines:#?}");
    for l in &reserves {
        let c = l.cause.as_ref().expect("every reservation has its cause");
        assert_eq!(c.kind, CauseKind::Round, "{l:?}");
        assert_eq!(c.file_digest.as_deref(), Some(digest.as_str()));
        assert_eq!(c.git_commit.as_deref(), Some(COMMIT));
    }
    let csv = story::render_history_csv(&lines);
    assert_eq!(csv.lines().count(), lines.len() + 1, "{csv}");
    assert!(csv.contains(COMMIT), "{csv}");

    let s = story::explain(w.store(), Subject::Either(link))
        .await
        .unwrap()
        .expect("the link's story");
    assert_eq!(s.intent_id, resolved.id);
    assert_eq!(s.link_id, Some(link));
    assert_eq!(s.state, IntentState::Succeeded);
    let kinds: Vec<_> = s.causes.iter().map(|c| c.cause.kind).collect();
    assert_eq!(kinds, [CauseKind::Round, CauseKind::Resolve], "{s:#?}");
    let text = story::render_story(&s);
    assert!(
        text.contains(&format!("operator's resolve: {why}")),
        "{text}"
    );
    assert!(
        text.contains("within budget.max_link_price 150 RUB"),
        "{text}"
    );
    assert!(text.contains(&COMMIT[..12]), "{text}");
    assert!(text.contains("reserve"), "{text}");
}

/// Issue 34: an account's own `unpaged_link_list` (the accounts file) decides for its
/// campaigns over `--unpaged-link-list`. A campaign buys its links, then the list answers a
/// one-link first page without paging fields. With the flag's `complete` the reconciliation
/// sees links the journal holds missing and records the list as cut at one link; with the
/// account's own `partial` over it, absence from such a page proves nothing, so nothing is
/// taken from it and no cut is recorded.
pub async fn an_accounts_own_unpaged_link_list_decides_for_its_campaigns(db: TestDb) {
    let backend = if db.url.starts_with("sqlite") {
        Backend::Sqlite
    } else {
        Backend::Postgres
    };
    let own = list_cut_after_purchases(db, true).await;
    let flag = list_cut_after_purchases(TestDb::new(backend).await, false).await;
    assert_eq!(flag, Some(1), "the flag's `complete`: the list is seen cut");
    assert_eq!(
        own, None,
        "the account's own `partial` decides: nothing is inferred"
    );
}

/// The cut `acme-shoes`'s journal records after a round that buys and a reconciliation over a
/// one-link list without paging fields, its account's own setting `partial` or not (the flag:
/// `complete`).
async fn list_cut_after_purchases(db: TestDb, account_partial: bool) -> Option<u32> {
    let w = World::new(db, sandbox_config()).await;
    let acme = ACME.split("autobuyers:").next().unwrap();
    w.write_campaign("acme-shoes", acme);
    let mut settings = fast_settings();
    settings.unpaged_list = UnpagedList::Complete;
    if account_partial {
        settings
            .unpaged_list_of
            .insert("default".into(), UnpagedList::Partial);
    }
    let engine = w.engine_with(settings).await;
    pass_with(&engine, &w.campaigns(), true).await;
    let held = w.recorded("acme-shoes").await.held.len();
    assert!(held >= 2, "the round bought links to miss: {held}");
    w.sandbox
        .set_behaviour(Behaviour {
            list_page_size: Some(1),
            list_paging: ListPaging::None,
            ..Behaviour::default()
        })
        .unwrap();
    pass_with(&engine, &w.campaigns(), false).await;
    w.recorded("acme-shoes").await.ids.list_cut_at
}
