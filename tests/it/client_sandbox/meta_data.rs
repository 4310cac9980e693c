//! `metaData` goes back byte for byte: the sandbox's tokens hold characters that must be
//! percent-encoded in a path (`/ + = ? # % &`, a space, non-ASCII, quotes and braces), and
//! the sandbox refuses a poll whose `metaData` differs from what the search answered.

use linkrunner::market::{Market, MarketError, SearchJob};
use linkrunner_sandbox::Op;

use super::support::{poll_until_ready, sandbox_config, search_started};
use crate::support::ledger;

const HOSTILE: [char; 12] = ['/', '+', '=', '?', '#', '%', '&', ' ', 'é', '"', '{', ':'];

#[tokio::test]
async fn meta_data_with_hostile_characters_goes_back_byte_for_byte() {
    let (sandbox, client, job) = search_started(sandbox_config()).await;
    let missing: Vec<char> = HOSTILE
        .into_iter()
        .filter(|c| !job.meta_data.contains(*c))
        .collect();
    assert!(missing.is_empty(), "{missing:?} not in {}", job.meta_data);

    let (donors, _) = poll_until_ready(&client, &job).await;

    assert!(!donors.is_empty());
    let ledger = sandbox.ledger();
    assert_eq!(ledger.requests_of(Op::SearchResult, "ok"), 3);
    assert_eq!(ledger::requests(&ledger, Op::SearchResult), 3);
}

#[tokio::test]
async fn a_poll_with_meta_data_changed_by_one_byte_is_refused() {
    let (sandbox, client, job) = search_started(sandbox_config()).await;
    let changed = SearchJob {
        meta_data: job.meta_data.replacen('+', " ", 1),
        ..job
    };

    let err = client.search_result(&changed).await.unwrap_err();

    assert!(
        matches!(
            err,
            MarketError::Rejected {
                status: Some(400),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        sandbox.ledger().requests_of(Op::SearchResult, "malformed"),
        1
    );
}
