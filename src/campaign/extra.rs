//! Open-ended maps (`buy.search`, `filters[]`): a few typed keys, everything else passed
//! through to the marketplace as written. Pass-through is where mistakes hide, so keys are
//! checked too: no secrets, no second spelling of a typed key, no near-miss of one, and only
//! small scalar or array values.

use std::collections::HashMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::diag::Problems;
use super::keys;
use super::span::{At, Pos};
use linkrunner_domain::money::Money;

const MAX_KEYS: usize = 50;
const MAX_KEY_LEN: usize = 64;
const MAX_STRING_LEN: usize = 1000;
const MAX_ARRAY_LEN: usize = 100;

/// The entries of a YAML mapping in file order, keys and values with their positions.
#[derive(Debug, Default)]
pub(super) struct ExtraMap {
    entries: Vec<(At<String>, At<Value>)>,
}

impl<'de> Deserialize<'de> for ExtraMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ExtraMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of parameter names to values")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ExtraMap, A::Error> {
                let mut entries = Vec::new();
                while let Some(k) = m.next_key::<At<String>>()? {
                    entries.push((k, m.next_value::<At<Value>>()?));
                }
                Ok(ExtraMap { entries })
            }
        }
        d.deserialize_map(V)
    }
}

/// An [`ExtraMap`] split into its typed keys and its pass-through rest.
pub(super) struct Split<'a> {
    typed: HashMap<&'static str, &'a At<Value>>,
    pub(crate) extra: serde_json::Map<String, Value>,
}

impl ExtraMap {
    /// Sorts keys into `typed` ones and checked pass-through ones; `what` names the map in messages.
    pub(super) fn split(&self, typed: &[&'static str], what: &str, p: &mut Problems) -> Split<'_> {
        let mut split = Split {
            typed: HashMap::new(),
            extra: serde_json::Map::new(),
        };
        if self.entries.len() > MAX_KEYS {
            let pos = self.entries[MAX_KEYS].0.pos;
            p.at(pos, format!("{what} has more than {MAX_KEYS} keys"));
        }
        for (k, v) in &self.entries {
            if let Some(t) = typed.iter().find(|t| **t == k.value) {
                split.typed.insert(t, v);
            } else if check_extra_key(k, typed, what, p) && check_extra_value(k, v, p) {
                split.extra.insert(k.value.clone(), v.value.clone());
            }
        }
        split
    }
}

fn check_extra_key(k: &At<String>, typed: &[&'static str], what: &str, p: &mut Problems) -> bool {
    let key = k.value.as_str();
    if let Some(msg) = keys::forbidden_key_message(key) {
        p.at(k.pos, msg);
        return false;
    }
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        p.at(
            k.pos,
            format!("{what} key must be 1 to {MAX_KEY_LEN} characters long"),
        );
        return false;
    }
    if let Some(t) = typed
        .iter()
        .find(|t| keys::normalized(t) == keys::normalized(key))
    {
        p.at(
            k.pos,
            format!("`{key}` is another spelling of `{t}`; write it as `{t}`"),
        );
        return false;
    }
    if let Some(t) = keys::near_miss(key, typed) {
        p.at(
            k.pos,
            format!("unknown key `{key}` in {what}: did you mean `{t}`? (unknown keys are passed to the marketplace unchecked)"),
        );
        return false;
    }
    true
}

fn check_extra_value(k: &At<String>, v: &At<Value>, p: &mut Problems) -> bool {
    let problem = match &v.value {
        Value::Null => Some("has no value; remove the key or give it one".to_string()),
        Value::Object(_) => {
            Some("must be a scalar or a list of scalars, not a mapping".to_string())
        }
        Value::String(s) if s.chars().count() > MAX_STRING_LEN => {
            Some(format!("is longer than {MAX_STRING_LEN} characters"))
        }
        Value::Array(a) if a.len() > MAX_ARRAY_LEN => {
            Some(format!("has more than {MAX_ARRAY_LEN} items"))
        }
        Value::Array(a)
            if a.iter()
                .any(|i| i.is_array() || i.is_object() || i.is_null()) =>
        {
            Some("must be a list of scalars".to_string())
        }
        _ => None,
    };
    match problem {
        Some(msg) => {
            p.at(v.pos, format!("`{}` {msg}", k.value));
            false
        }
        None => true,
    }
}

impl Split<'_> {
    /// Position of a typed key's value, if present.
    pub(super) fn pos(&self, key: &str) -> Option<Pos> {
        self.typed.get(key).map(|v| v.pos)
    }

    /// A typed amount of rubles, non-negative; problems are reported, not returned.
    pub(super) fn money(&self, key: &str, p: &mut Problems) -> Option<At<Money>> {
        let v = self.typed.get(key)?;
        let parsed = match &v.value {
            Value::Number(n) => Money::from_json_number(n).map_err(|e| e.to_string()),
            Value::String(s) => Money::parse_rubles(s).map_err(|e| e.to_string()),
            _ => Err("expected an amount of rubles such as 150 or \"150.50\"".to_string()),
        };
        match parsed {
            Ok(m) if m.is_negative() => p.at(v.pos, format!("`{key}` must not be negative")),
            Ok(m) => return Some(At::new(m, v.pos)),
            Err(e) => p.at(v.pos, format!("`{key}`: {e}")),
        }
        None
    }

    /// A typed string.
    pub(super) fn string(&self, key: &str, p: &mut Problems) -> Option<At<String>> {
        let v = self.typed.get(key)?;
        match &v.value {
            Value::String(s) => Some(At::new(s.clone(), v.pos)),
            _ => {
                p.at(v.pos, format!("`{key}` must be a string"));
                None
            }
        }
    }
}
