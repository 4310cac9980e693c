//! `POST /api/v1/halt` and `POST /api/v1/resume`: the stop button over HTTP (issue 33), what
//! `linkrunner halt` and `linkrunner resume` do. Mounted only when `--http-token-file` is set
//! ([`super::router_with`]): without a token the endpoint stays read-only and these paths are
//! 404. The body is JSON (`{"by": "NAME", "reason": "WHY"}`, both required and not blank), so
//! a form on another site cannot post it without a CORS preflight this server never grants.
//! `"account": "ID"` halts or resumes one marketplace account alone (issue 34).

use axum::Json;
use axum::extract::State;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::AppState;
use crate::store::HaltScope;

/// Who presses the button and why; both recorded in the journal's history of halts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Press {
    by: String,
    reason: String,
    /// Resume only: lift this campaign's halt (the anomaly brake's) instead of the account's.
    #[serde(default)]
    campaign: Option<String>,
    /// Halt or resume this marketplace account alone; without it, every account.
    #[serde(default)]
    account: Option<String>,
}

/// What a press names: its `by`, `reason` and the scope it halts or resumes.
struct Pressed {
    by: String,
    reason: String,
    scope: HaltScope,
}

/// `POST /api/v1/halt`: all spending stops on every process of this journal (of one account
/// with `"account"`).
pub(crate) async fn halt(
    State(s): State<AppState>,
    body: Result<Json<Press>, JsonRejection>,
) -> Result<Response, Response> {
    let Pressed { by, reason, scope } = pressed(body).map_err(refused)?;
    if matches!(scope, HaltScope::Campaign(_)) {
        return Err(refused(
            "`halt` stops every account or one (`account`): `campaign` is for resume",
        ));
    }
    let set = s
        .store
        .operator_halt_scope(&scope, &by, &reason, s.clock.now());
    match set.await {
        Ok(()) => {
            tracing::warn!(by = %by, reason = %reason, scope = %scope.key(), "spending halted over HTTP");
            let answer = serde_json::json!({ "halted": true, "by": by, "reason": reason });
            Ok(Json(answer).into_response())
        }
        Err(e) => Err(super::unavailable(&s, e)),
    }
}

/// `POST /api/v1/resume`: lifts the operator's halt of every account, with `"account"` that
/// account's, or with `"campaign"` the anomaly brake's halt of that campaign;
/// `resumed: false` when none was in force.
pub(crate) async fn resume(
    State(s): State<AppState>,
    body: Result<Json<Press>, JsonRejection>,
) -> Result<Response, Response> {
    let Pressed { by, reason, scope } = pressed(body).map_err(refused)?;
    let now = s.clock.now();
    let resumed = match &scope {
        HaltScope::Global => s
            .store
            .operator_resume_accounts(&by, &reason, now)
            .await
            .map(|lifted| !lifted.is_empty()),
        _ => {
            s.store
                .operator_resume_scope(&scope, &by, &reason, now)
                .await
        }
    };
    match resumed {
        Ok(lifted) => {
            if lifted {
                tracing::warn!(by = %by, reason = %reason, scope = %scope.key(), "halt lifted over HTTP");
            }
            let answer = serde_json::json!({ "resumed": lifted, "by": by, "reason": reason });
            Ok(Json(answer).into_response())
        }
        Err(e) => Err(super::unavailable(&s, e)),
    }
}

/// The body's `by`, `reason` and scope (`campaign`, `account`, else every account), trimmed;
/// what is wrong otherwise.
fn pressed(body: Result<Json<Press>, JsonRejection>) -> Result<Pressed, &'static str> {
    let Ok(Json(p)) = body else {
        return Err("the body must be JSON: {\"by\": \"NAME\", \"reason\": \"WHY\"}");
    };
    let (by, reason) = (p.by.trim().to_string(), p.reason.trim().to_string());
    if by.is_empty() || reason.is_empty() {
        return Err("`by` and `reason` must not be blank");
    }
    let scope = match (p.campaign, p.account) {
        (Some(_), Some(_)) => return Err("`campaign` and `account`: one of them at a time"),
        (Some(c), None) => HaltScope::campaign(c.trim()),
        (None, Some(a)) if linkrunner_domain::account::valid_id(a.trim()) => {
            HaltScope::account(a.trim())
        }
        (None, Some(_)) => {
            return Err("`account` is not an account id: lowercase letters, digits and `-`");
        }
        (None, None) => HaltScope::Global,
    };
    Ok(Pressed { by, reason, scope })
}

/// 400 with what is wrong with the body.
fn refused(why: &str) -> Response {
    let body = serde_json::json!({ "error": why });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(campaign: Option<&str>, account: Option<&str>) -> Result<HaltScope, &'static str> {
        let p = Press {
            by: "alice".into(),
            reason: "audit".into(),
            campaign: campaign.map(Into::into),
            account: account.map(Into::into),
        };
        pressed(Ok(Json(p))).map(|p| p.scope)
    }

    #[test]
    fn a_press_names_every_account_one_account_or_one_campaign() {
        assert_eq!(press(None, None), Ok(HaltScope::Global));
        assert_eq!(press(None, Some(" acme ")), Ok(HaltScope::account("acme")));
        assert_eq!(press(Some("shoes"), None), Ok(HaltScope::campaign("shoes")));
        assert!(press(Some("shoes"), Some("acme")).is_err());
        assert!(press(None, Some("@acme")).is_err(), "not an account id");
    }
}
