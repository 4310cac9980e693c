//! Money: integer kopecks (1/100 RUB), never floating point.
//!
//! The marketplace speaks "number" for prices (rubles); campaign files write rubles as
//! integers or decimal strings. Both are converted through their decimal text, so
//! `150.5` becomes exactly 15 050 kopecks and anything finer than a kopeck is refused
//! rather than rounded: we never guess about money.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An amount of money in kopecks. Arithmetic is checked; overflow is an error, not a wrap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(i64);

/// Why a text could not be read as an amount of money.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoneyError {
    #[error("`{0}` is not an amount of rubles (expected e.g. 150 or 150.50)")]
    Syntax(String),
    #[error("`{0}` has more than two decimal places; amounts are whole kopecks")]
    TooPrecise(String),
    #[error("`{0}` is out of range")]
    Overflow(String),
}

impl Money {
    pub const ZERO: Money = Money(0);
    /// The largest amount we accept anywhere: 10^12 RUB keeps every sum far from i64 overflow.
    pub const MAX: Money = Money(100_000_000_000_000);

    pub const fn from_kopecks(k: i64) -> Self {
        Money(k)
    }
    pub const fn from_rubles(r: i64) -> Self {
        Money(r * 100)
    }
    pub const fn kopecks(self) -> i64 {
        self.0
    }
    pub fn is_negative(self) -> bool {
        self.0 < 0
    }
    pub fn checked_add(self, o: Money) -> Option<Money> {
        self.0.checked_add(o.0).map(Money)
    }
    pub fn checked_sub(self, o: Money) -> Option<Money> {
        self.0.checked_sub(o.0).map(Money)
    }
    pub fn checked_mul(self, n: i64) -> Option<Money> {
        self.0.checked_mul(n).map(Money)
    }
    /// Saturating at zero: "what is left" never goes negative.
    pub fn saturating_headroom(cap: Money, used: Money) -> Money {
        Money((cap.0 - used.0).max(0))
    }

    /// Parses a decimal ruble amount: `150`, `150.5`, `150.50`, `-3`. At most two decimals.
    pub fn parse_rubles(text: &str) -> Result<Money, MoneyError> {
        let t = text.trim();
        let (neg, digits) = match t.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if int.is_empty()
            || !all_digits(int)
            || !all_digits(frac)
            || (digits.contains('.') && frac.is_empty())
        {
            return Err(MoneyError::Syntax(text.to_string()));
        }
        let frac_trimmed = frac.trim_end_matches('0');
        if frac_trimmed.len() > 2 {
            return Err(MoneyError::TooPrecise(text.to_string()));
        }
        let overflow = || MoneyError::Overflow(text.to_string());
        let rubles: i64 = int.parse().map_err(|_| overflow())?;
        let mut kop: i64 = 0;
        for (i, b) in frac_trimmed.bytes().enumerate() {
            kop += i64::from(b - b'0') * if i == 0 { 10 } else { 1 };
        }
        let total = rubles
            .checked_mul(100)
            .and_then(|r| r.checked_add(kop))
            .ok_or_else(overflow)?;
        if total > Money::MAX.0 {
            return Err(overflow());
        }
        Ok(Money(if neg { -total } else { total }))
    }

    /// Reads a JSON number through its shortest decimal text (exact for any real price).
    pub fn from_json_number(n: &serde_json::Number) -> Result<Money, MoneyError> {
        Money::parse_rubles(&n.to_string())
    }

    /// The amount as a JSON number of rubles, for the wire: integral when whole.
    pub fn to_json_rubles(self) -> serde_json::Value {
        if self.0 % 100 == 0 {
            serde_json::Value::from(self.0 / 100)
        } else {
            // Display gives the exact decimal; the f64 nearest to it prints back identically.
            let f: f64 = self.to_string().parse().unwrap_or_default();
            serde_json::Value::from(f)
        }
    }

    /// Rubles as f64, only for Prometheus gauges (display, never arithmetic).
    pub fn as_rubles_f64(self) -> f64 {
        self.0 as f64 / 100.0
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let a = self.0.unsigned_abs();
        if a.is_multiple_of(100) {
            write!(f, "{sign}{}", a / 100)
        } else {
            write!(f, "{sign}{}.{:02}", a / 100, a % 100)
        }
    }
}

impl FromStr for Money {
    type Err = MoneyError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Money::parse_rubles(s)
    }
}

/// Serialized as a decimal string of rubles ("150.50") so no reader turns it into a float.
impl Serialize for Money {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Accepts an integer, a decimal number or a decimal string of rubles.
impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Money;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an amount of rubles such as 150 or \"150.50\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Money, E> {
                Money::parse_rubles(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Money, E> {
                Money::parse_rubles(&v.to_string()).map_err(E::custom)
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Money, E> {
                // Rust prints the shortest text that reads back as `v`: the literal the user wrote.
                Money::parse_rubles(&v.to_string()).map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Money, E> {
                Money::parse_rubles(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl schemars::JsonSchema for Money {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Rubles".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "An amount of rubles: an integer, or a number or string with at most two decimals (kopecks).",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "number", "minimum": 0, "multipleOf": 0.01 },
                { "type": "string", "pattern": "^[0-9]+(\\.[0-9]{1,2})?$" }
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_whole_and_fractional_rubles_exactly() {
        assert_eq!(
            Money::parse_rubles("150").unwrap(),
            Money::from_kopecks(15_000)
        );
        assert_eq!(
            Money::parse_rubles("150.5").unwrap(),
            Money::from_kopecks(15_050)
        );
        assert_eq!(Money::parse_rubles("0.07").unwrap(), Money::from_kopecks(7));
        assert_eq!(
            Money::parse_rubles("-3").unwrap(),
            Money::from_kopecks(-300)
        );
        assert_eq!(
            Money::parse_rubles("1.230").unwrap(),
            Money::from_kopecks(123)
        );
    }

    #[test]
    fn refuses_what_is_not_whole_kopecks_or_not_a_number() {
        assert!(matches!(
            Money::parse_rubles("1.005"),
            Err(MoneyError::TooPrecise(_))
        ));
        for bad in ["", "abc", "1e3", ".5", "5.", "1,5", "NaN", "--1"] {
            assert!(
                matches!(Money::parse_rubles(bad), Err(MoneyError::Syntax(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            Money::parse_rubles("99999999999999999999"),
            Err(MoneyError::Overflow(_))
        ));
    }

    #[test]
    fn json_numbers_round_trip_through_their_decimal_text() {
        let n: serde_json::Number = serde_json::from_str("149.99").unwrap();
        let m = Money::from_json_number(&n).unwrap();
        assert_eq!(m.kopecks(), 14_999);
        assert_eq!(m.to_json_rubles().to_string(), "149.99");
        assert_eq!(Money::from_rubles(80).to_json_rubles().to_string(), "80");
    }

    proptest! {
        #[test]
        fn display_then_parse_is_identity(k in -Money::MAX.kopecks()..Money::MAX.kopecks()) {
            let m = Money::from_kopecks(k);
            prop_assert_eq!(Money::parse_rubles(&m.to_string()).unwrap(), m);
        }

        #[test]
        fn wire_number_reads_back_to_the_same_kopecks(k in 0i64..10_000_000_000) {
            let m = Money::from_kopecks(k);
            let v = m.to_json_rubles();
            let back = Money::from_json_number(v.as_number().unwrap()).unwrap();
            prop_assert_eq!(back, m);
        }
    }
}
