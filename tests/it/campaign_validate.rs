//! Campaign files end to end through the one loader the daemon uses: the committed invalid
//! corpus (one snapshot per case, each failing for exactly one reason), file-system limits,
//! cross-file checks, the examples, the schema and the `validate` command.

#[path = "campaign_validate/corpus.rs"]
mod corpus;
#[path = "campaign_validate/examples.rs"]
mod examples;
#[path = "campaign_validate/files.rs"]
mod files;

use linkrunner::campaign::LoadReport;

/// Problems as `validate` prints them; a non-empty `root` (a temporary directory) is shown
/// as `<dir>` so snapshots do not depend on it.
pub fn rendered(report: &LoadReport, root: &str) -> String {
    report
        .problems
        .iter()
        .map(|d| d.to_string())
        .map(|line| {
            if root.is_empty() {
                line
            } else {
                line.replace(root, "<dir>")
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Snapshots live beside the corpus they describe.
pub fn assert_snapshot_named(name: &str, text: &str) {
    insta::with_settings!({ snapshot_path => "../campaigns/snapshots", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, text);
    });
}
