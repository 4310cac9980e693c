//! The ranges every numeric flag is held to, checked by clap when the command line (or the
//! `LINKRUNNER_*` variable behind a flag) is parsed: a value outside is refused before
//! anything starts, with the flag and the range in the message (`--settle-grace
//! 99999999999999` once overflowed a date and panicked). `tests/it/cli_flags.rs` walks every
//! numeric flag of every command with 0, -1, a huge and a non-numeric value.

use std::ops::RangeInclusive;

use clap::builder::{RangedI64ValueParser, RangedU64ValueParser};

/// One day, in seconds: the longest any wait, deadline or interval may be.
pub(crate) const DAY_SECS: u64 = 86_400;
/// One hour, in milliseconds.
pub(crate) const HOUR_MS: u64 = 3_600_000;

pub(crate) fn u64_in(r: RangeInclusive<u64>) -> RangedU64ValueParser<u64> {
    RangedU64ValueParser::new().range(r)
}

pub(crate) fn u32_in(r: RangeInclusive<u64>) -> RangedU64ValueParser<u32> {
    RangedU64ValueParser::new().range(r)
}

pub(crate) fn usize_in(r: RangeInclusive<u64>) -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(r)
}

/// A marketplace or journal id: positive.
pub(crate) fn id() -> RangedI64ValueParser<i64> {
    RangedI64ValueParser::new().range(1..)
}

/// A chance or share from 0 to 1 (NaN and infinities refused): the sandbox's fault rates,
/// `--removal-hold-share`.
pub(crate) fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{s} is not in 0..=1"))
    }
}

/// An amount of rubles from zero to a billion: the sandbox's balance, `plan --fail-above`.
pub(crate) fn rubles(s: &str) -> Result<linkrunner_domain::money::Money, String> {
    let m = linkrunner_domain::money::Money::parse_rubles(s).map_err(|e| e.to_string())?;
    if m.is_negative() || m > linkrunner_domain::money::Money::from_rubles(1_000_000_000) {
        return Err(format!("{s} is not in 0..=1000000000 rubles"));
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "sandbox")]
    fn a_probability_is_a_finite_number_from_zero_to_one() {
        assert_eq!(probability("0.25"), Ok(0.25));
        assert_eq!(probability("1"), Ok(1.0));
        for bad in ["-0.1", "1.5", "NaN", "inf", "x", ""] {
            assert!(probability(bad).is_err(), "{bad}");
        }
    }
}
