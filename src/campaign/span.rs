//! `At<T>`: a value from a campaign file together with the line and column it was written at.
//!
//! Wraps serde-saphyr's `Spanned<T>` so the rest of the module never names the YAML crate,
//! and so the raw model can derive `JsonSchema` (an `At<T>` has exactly `T`'s schema).

use std::borrow::Cow;

use serde::{Deserialize, Deserializer};

/// A 1-based line and column in a campaign file; `(1, 1)` stands for "the whole file".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) struct Pos {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

impl Pos {
    pub(crate) const FILE: Pos = Pos { line: 1, column: 1 };

    pub(crate) fn new(line: usize, column: usize) -> Pos {
        // serde-saphyr says 0:0 when it does not know; point at the file rather than nowhere.
        if line == 0 {
            Pos::FILE
        } else {
            Pos {
                line,
                column: column.max(1),
            }
        }
    }
}

/// A deserialized value and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct At<T> {
    pub(crate) value: T,
    pub(crate) pos: Pos,
}

impl<T> At<T> {
    pub(super) fn new(value: T, pos: Pos) -> At<T> {
        At { value, pos }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for At<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        let line = usize::try_from(s.referenced.line()).unwrap_or(0);
        let column = usize::try_from(s.referenced.column()).unwrap_or(0);
        Ok(At::new(s.value, Pos::new(line, column)))
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for At<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(g)
    }
}
