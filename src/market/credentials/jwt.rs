//! The expiry of a JWT, read without verifying its signature: we only need to know when to
//! ask for a new one, and the marketplace, not us, judges whether it is valid. A token that
//! is not a JWT, or whose `exp` is missing or unreadable, has no known expiry.

use base64::Engine as _;
use chrono::{DateTime, Utc};

/// The `exp` claim of `token`, if it is a JWT that carries one.
pub(crate) fn expiry(token: &str) -> Option<DateTime<Utc>> {
    let mut parts = token.split('.');
    let (_header, payload, _signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let bytes = engine.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let exp = claims.get("exp")?;
    // NumericDate: seconds since the epoch, possibly with a fraction.
    let secs = exp.as_i64().or_else(|| exp.as_f64().map(|f| f as i64))?;
    DateTime::from_timestamp(secs, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(payload: &str) -> String {
        let e = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!(
            "{}.{}.{}",
            e.encode(r#"{"alg":"HS256","typ":"JWT"}"#),
            e.encode(payload),
            e.encode("sig")
        )
    }

    #[test]
    fn the_exp_claim_is_the_expiry() {
        let t = jwt(r#"{"sub":"me","exp":1795000000}"#);
        assert_eq!(expiry(&t).unwrap().timestamp(), 1_795_000_000);
    }

    #[test]
    fn a_fractional_exp_is_read_to_the_second() {
        let t = jwt(r#"{"exp":1795000000.75}"#);
        assert_eq!(expiry(&t).unwrap().timestamp(), 1_795_000_000);
    }

    #[test]
    fn tokens_without_a_readable_exp_have_no_expiry() {
        assert_eq!(expiry("opaque-token"), None);
        assert_eq!(expiry(&jwt(r#"{"sub":"me"}"#)), None);
        assert_eq!(expiry(&jwt(r#"{"exp":"soon"}"#)), None);
        assert_eq!(expiry("a.!!!.c"), None);
        assert_eq!(expiry("a.b.c.d"), None);
    }
}
