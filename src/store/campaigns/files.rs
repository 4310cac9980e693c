//! Each campaign's file, as the last pass that loaded it found it (issue 25, point 0): a file
//! that exists but fails validation holds the campaign recorded from its path, even when it
//! is too broken to show its `name` (`campaign::InvalidFiles`).

use crate::store::StoreError;
use crate::store::handles::Campaigns;
use crate::store::rows::read_row;

/// A campaign the journal knows, and the file it was last loaded from (`None`: recorded
/// before files were, filled in by the next pass that loads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CampaignFile {
    pub(crate) name: String,
    pub(crate) file: Option<String>,
    /// The name it was renamed from (`renamed_from`), once its rename was handed over.
    pub(crate) renamed_from: Option<String>,
}

impl Campaigns<'_> {
    /// Every campaign the journal knows with its recorded file, by name.
    pub(crate) async fn campaign_files(self) -> Result<Vec<CampaignFile>, StoreError> {
        let query = sqlx::query("SELECT name, file, renamed_from FROM campaigns ORDER BY name");
        self.read_all("campaign_files", query, |r| {
            Ok(read_row!(
                r,
                CampaignFile {
                    name,
                    file,
                    renamed_from,
                }
            ))
        })
        .await
    }

    /// Records where each of `files` was loaded from, in one transaction. Only campaigns the
    /// journal already knows are updated (a pass creates its campaign first); callers pass
    /// only the files that changed, so a pass over 10,000 unchanged campaigns writes nothing.
    pub(crate) async fn record_campaign_files(
        self,
        files: &[CampaignFile],
    ) -> Result<(), StoreError> {
        if files.is_empty() {
            return Ok(());
        }
        transaction!(self, "record_campaign_files", |tx| {
            for f in files {
                run!(
                    execute, &mut *tx, "record_campaign_files",
                    "UPDATE campaigns SET file = $1 WHERE name = $2";
                    f.file.as_deref(), &f.name
                )?;
            }
            Ok(())
        })
    }
}
