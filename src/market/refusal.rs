//! What a refusal says, in the few words the engine acts on. The spec shows no error codes,
//! so a refused purchase is read by its message: "insufficient balance" (and its usual
//! variants, Russian included) means no purchase can succeed until the account is topped up —
//! an operator must act, and the campaign's outcome says so (`insufficient_balance`).

use serde_json::Value;

use super::decode;
use super::error::MarketError;

/// Words that say the account's balance does not cover a purchase (lowercase).
const BALANCE_WORDS: [&str; 9] = [
    "insufficient balance",
    "insufficient funds",
    "not enough money",
    "not enough funds",
    "not enough balance",
    "low balance",
    "balance is too low",
    "недостаточно средств",
    "недостаточно денег",
];

/// Longest refusal message kept for an outcome's detail.
const MESSAGE_CAP: usize = 200;

impl MarketError {
    /// The marketplace's own message of a refusal (`message`/`error`/… of its JSON body, else
    /// the body), redacted as the body already is and cut to 200 characters.
    pub(crate) fn refusal_message(&self) -> Option<String> {
        let MarketError::Rejected { body, .. } = self else {
            return None;
        };
        let message = match serde_json::from_str::<Value>(body) {
            Ok(Value::Object(o)) => decode::message_of(&o).unwrap_or_else(|| body.clone()),
            _ => body.clone(),
        };
        Some(message.chars().take(MESSAGE_CAP).collect())
    }

    /// A refusal saying the balance does not cover the purchase.
    pub(crate) fn is_insufficient_balance(&self) -> bool {
        self.refusal_message().is_some_and(|m| {
            let m = m.to_lowercase();
            BALANCE_WORDS.iter().any(|w| m.contains(w))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(body: &str) -> MarketError {
        MarketError::Rejected {
            op: crate::market::op::BUY,
            status: Some(422),
            body: body.into(),
        }
    }

    #[test]
    fn a_balance_refusal_is_recognised_in_either_error_style() {
        let flat = rejected("insufficient balance: 120.50 RUB needed, 17.63 RUB left");
        let http =
            rejected(r#"{"error":"Insufficient balance: 120.50 RUB needed, 17.63 RUB left"}"#);
        let ru = rejected(r#"{"isError":true,"message":"Недостаточно средств на балансе"}"#);
        assert!(flat.is_insufficient_balance());
        assert!(http.is_insufficient_balance());
        assert!(ru.is_insufficient_balance());
        assert_eq!(
            http.refusal_message().as_deref(),
            Some("Insufficient balance: 120.50 RUB needed, 17.63 RUB left")
        );
    }

    #[test]
    fn other_refusals_and_other_errors_are_not_balance() {
        assert!(!rejected("pageId 7 was not offered for this URL").is_insufficient_balance());
        let uncertain = MarketError::Uncertain {
            op: crate::market::op::BUY,
            status: Some(502),
            reason: "insufficient balance".into(),
        };
        assert!(!uncertain.is_insufficient_balance());
        assert_eq!(uncertain.refusal_message(), None);
    }
}
