//! Reading `Any` rows: the few column types the journal uses, with errors that name the column.
//! A row reader names each column once (`read_row!`); the field's type picks the decoding
//! ([`Stored`]).

use chrono::{DateTime, Utc};
use sqlx::any::AnyRow;
use sqlx::{Decode, Row, Type};

use super::{AnyQuery, Store, StoreError};
use linkrunner_domain::intents::{IntentId, IntentKind, IntentState};
use linkrunner_domain::money::Money;
use linkrunner_domain::records::{RemovalState, RoundState, SearchState, StallReason, SwitchState};

impl Store {
    /// Every row `query` reads, each through `read`, collected (a `Vec`, a map), as one
    /// public read: a failure is `op`'s and counted ([`Store::done`]).
    pub(super) async fn read_all<T, C: FromIterator<T>>(
        &self,
        op: &'static str,
        query: AnyQuery<'_>,
        read: impl Fn(&AnyRow) -> Result<T, StoreError>,
    ) -> Result<C, StoreError> {
        let rows = query.fetch_all(&self.pool).await.map_err(db(op));
        self.done(rows.and_then(|rows| rows.iter().map(read).collect()))
    }

    /// [`Store::read_all`] of a query that reads one row at the most.
    pub(super) async fn read_optional<T>(
        &self,
        op: &'static str,
        query: AnyQuery<'_>,
        read: impl Fn(&AnyRow) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let row = query.fetch_optional(&self.pool).await.map_err(db(op));
        self.done(row.and_then(|r| r.as_ref().map(read).transpose()))
    }

    /// [`Store::read_optional`] for a statement that writes and returns at most one row
    /// (`UPDATE … RETURNING`): run on the writer, its result through [`Store::write_done`].
    pub(super) async fn write_optional<T>(
        &self,
        op: &'static str,
        query: AnyQuery<'_>,
        read: impl Fn(&AnyRow) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        let row = query.fetch_optional(&self.writer).await.map_err(db(op));
        self.write_done(row.and_then(|r| r.as_ref().map(read).transpose()))
            .await
    }
}

/// Maps a sqlx error to [`StoreError::Database`] for the named operation.
pub(crate) fn db(op: &'static str) -> impl Fn(sqlx::Error) -> StoreError {
    move |source| StoreError::Database { op, source }
}

pub(crate) fn col<'r, T>(row: &'r AnyRow, name: &'static str) -> Result<T, StoreError>
where
    T: Decode<'r, sqlx::Any> + Type<sqlx::Any>,
{
    row.try_get(name).map_err(db(name))
}

/// A count or limit stored as BIGINT, read back as the `u32` the API speaks.
pub(crate) fn count(row: &AnyRow, name: &'static str) -> Result<u32, StoreError> {
    let v: i64 = col(row, name)?;
    u32::try_from(v).map_err(|_| StoreError::corrupt(format!("{name} = {v} is not a count")))
}

pub(crate) fn flag(row: &AnyRow, name: &'static str) -> Result<bool, StoreError> {
    Ok(col::<i64>(row, name)? != 0)
}

pub(crate) fn time(
    row: &AnyRow,
    name: &'static str,
) -> Result<chrono::DateTime<chrono::Utc>, StoreError> {
    Ok(linkrunner_domain::clock::from_millis(col(row, name)?))
}

pub(crate) fn opt_time(
    row: &AnyRow,
    name: &'static str,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, StoreError> {
    Ok(col::<Option<i64>>(row, name)?.map(linkrunner_domain::clock::from_millis))
}

/// Reads a stored enum through its `parse`, refusing values this version does not know.
pub(crate) fn parsed<T>(
    row: &AnyRow,
    name: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<T, StoreError> {
    let text: String = col(row, name)?;
    parse(&text).ok_or_else(|| StoreError::corrupt(format!("{name} = `{text}`")))
}

/// [`parsed`] of a column that may be NULL.
pub(crate) fn opt_parsed<T>(
    row: &AnyRow,
    name: &'static str,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>, StoreError> {
    let text: Option<String> = col(row, name)?;
    text.map(|text| parse(&text).ok_or_else(|| StoreError::corrupt(format!("{name} = `{text}`"))))
        .transpose()
}

/// A day as stored: `YYYY-MM-DD`.
pub(super) fn day_text(day: chrono::NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

/// A value as the journal stores it, read from the column `name`. The type picks the
/// decoding, so a reader cannot read a time as a plain number or money as a count: times are
/// Unix milliseconds, money is kopecks, a count is a BIGINT read back as `u32` (refusing one
/// that is not), a flag is 0/1, and a closed set is its text (refusing one this version does
/// not know).
pub(crate) trait Stored: Sized {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError>;
}

/// The column `name` of `row`, decoded as its type says ([`Stored`]): for a field whose
/// column has another name, or a value read outside a struct.
pub(crate) fn stored<T: Stored>(row: &AnyRow, name: &'static str) -> Result<T, StoreError> {
    T::read(row, name)
}

/// Types sqlx decodes as they are.
macro_rules! stored_as_is {
    ($($t:ty),+) => {$(
        impl Stored for $t {
            fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
                col(row, name)
            }
        }
    )+};
}
stored_as_is!(String, i64, Option<String>, Option<i64>);

/// Closed sets stored as their text (a set the store keeps to itself says so where it is
/// declared).
macro_rules! stored_as_text {
    ($($t:ty),+) => {$(
        impl $crate::store::rows::Stored for $t {
            fn read(
                row: &sqlx::any::AnyRow,
                name: &'static str,
            ) -> Result<Self, $crate::store::StoreError> {
                $crate::store::rows::parsed(row, name, <$t>::parse)
            }
        }

        impl $crate::store::rows::Stored for Option<$t> {
            fn read(
                row: &sqlx::any::AnyRow,
                name: &'static str,
            ) -> Result<Self, $crate::store::StoreError> {
                $crate::store::rows::opt_parsed(row, name, <$t>::parse)
            }
        }
    )+};
}
stored_as_text!(
    IntentKind,
    IntentState,
    RoundState,
    SearchState,
    RemovalState,
    SwitchState,
    StallReason
);
pub(crate) use stored_as_text;

impl Stored for u32 {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        count(row, name)
    }
}

impl Stored for bool {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        flag(row, name)
    }
}

impl Stored for DateTime<Utc> {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        time(row, name)
    }
}

impl Stored for Option<DateTime<Utc>> {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        opt_time(row, name)
    }
}

impl Stored for Money {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        Ok(Money::from_kopecks(col(row, name)?))
    }
}

impl Stored for Option<Money> {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        Ok(col::<Option<i64>>(row, name)?.map(Money::from_kopecks))
    }
}

impl Stored for IntentId {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        Ok(IntentId(col(row, name)?))
    }
}

impl Stored for Option<IntentId> {
    fn read(row: &AnyRow, name: &'static str) -> Result<Self, StoreError> {
        Ok(col::<Option<i64>>(row, name)?.map(IntentId))
    }
}

/// `read_row!(r, T { a, b, c: value })` builds `T` from the row `r` (inside a function that
/// returns `Result<_, StoreError>`): each field written alone is read from the column of its
/// own name through [`Stored`]; a field given a value takes it (a column of another name
/// through [`stored`], a JSON text, a nested struct).
macro_rules! read_row {
    ($row:expr, $ty:ident { $($field:ident $(: $value:expr)?),+ $(,)? }) => {
        $ty { $($field: $crate::store::rows::read_row!(@field $row, $field $(, $value)?)),+ }
    };
    (@field $row:expr, $field:ident) => {
        $crate::store::rows::Stored::read($row, stringify!($field))?
    };
    (@field $row:expr, $field:ident, $value:expr) => {
        $value
    };
}
pub(crate) use read_row;
