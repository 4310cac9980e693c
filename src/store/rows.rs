//! Reading `Any` rows: the few column types the journal uses, with errors that name the column.

use sqlx::any::AnyRow;
use sqlx::{Decode, Row, Type};

use super::{AnyQuery, Store, StoreError};

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
/// A day as stored: `YYYY-MM-DD`.
pub(super) fn day_text(day: chrono::NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}
