//! What the loader refuses or isolates on disk: oversized files, symlinks leaving the
//! directory, non-regular files, too many files, and names used by two files. These are
//! made at run time (a 256 KiB file or 10,001 files do not belong in git).

use std::fs;
use std::path::{Path, PathBuf};

use linkrunner::campaign::{MAX_FILE_BYTES, MAX_FILES, load_dir, load_paths};

use super::{assert_snapshot_named, rendered};

const VALID: &str = "campaigns/calm-tea.yaml";

fn dir_with_valid_campaign() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(VALID, dir.path().join("calm-tea.yaml")).unwrap();
    let root = dir.path().to_string_lossy().into_owned();
    (dir, root)
}

#[test]
fn a_file_larger_than_the_limit_is_refused_without_parsing() {
    let (dir, root) = dir_with_valid_campaign();
    let big = format!("# {}\n", "x".repeat(MAX_FILE_BYTES as usize));
    fs::write(dir.path().join("big.yaml"), big).unwrap();
    let report = load_dir(dir.path());
    assert_eq!(report.campaigns.len(), 1);
    assert_snapshot_named("runtime-file-too-large", &rendered(&report, &root));
}

#[test]
fn a_symlink_leaving_the_campaigns_directory_is_refused() {
    let (dir, root) = dir_with_valid_campaign();
    let outside = tempfile::tempdir().unwrap();
    fs::copy(VALID, outside.path().join("elsewhere.yaml")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("elsewhere.yaml"),
        dir.path().join("link.yaml"),
    )
    .unwrap();
    let report = load_dir(dir.path());
    assert_eq!(report.campaigns.len(), 1);
    assert_snapshot_named("runtime-symlink-outside", &rendered(&report, &root));
}

#[test]
fn a_symlink_inside_the_directory_is_followed_as_kubernetes_configmaps_need() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("..data")).unwrap();
    fs::copy(VALID, dir.path().join("..data/calm-tea.yaml")).unwrap();
    std::os::unix::fs::symlink("..data/calm-tea.yaml", dir.path().join("calm-tea.yaml")).unwrap();
    let report = load_dir(dir.path());
    assert_eq!((report.campaigns.len(), report.problems.len()), (1, 0));
}

#[test]
fn a_directory_named_like_a_campaign_file_is_refused_as_not_regular() {
    let (dir, root) = dir_with_valid_campaign();
    fs::create_dir(dir.path().join("odd.yaml")).unwrap();
    let report = load_dir(dir.path());
    assert_eq!(report.campaigns.len(), 1);
    assert_snapshot_named("runtime-not-regular", &rendered(&report, &root));
}

#[test]
fn more_files_than_the_limit_load_nothing_and_say_so() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..=MAX_FILES {
        fs::write(dir.path().join(format!("c{i:05}.yaml")), "").unwrap();
    }
    let report = load_dir(dir.path());
    assert!(report.campaigns.is_empty());
    assert_snapshot_named(
        "runtime-too-many-files",
        &rendered(&report, &dir.path().to_string_lossy()),
    );
}

#[test]
fn a_name_used_by_two_files_rejects_both_files() {
    let report = load_dir(Path::new("tests/campaigns/duplicate-names"));
    assert!(report.campaigns.is_empty());
    assert_snapshot_named("duplicate-names-across-files", &rendered(&report, ""));
}

#[test]
fn a_broken_file_leaves_the_other_campaigns_loaded() {
    let (dir, _) = dir_with_valid_campaign();
    fs::copy(
        "tests/campaigns/invalid/64-per-run-zero.yaml",
        dir.path().join("broken.yaml"),
    )
    .unwrap();
    let report = load_dir(dir.path());
    let names: Vec<&str> = report
        .campaigns
        .iter()
        .map(|c| c.campaign.name.as_str())
        .collect();
    assert_eq!((names, report.problems.len()), (vec!["calm-tea"], 1));
}

#[test]
fn a_directory_is_read_flat_sorted_and_without_dot_files_or_other_extensions() {
    let dir = tempfile::tempdir().unwrap();
    for (src, dst) in [
        ("bolt-bikes.yaml", "b.yml"),
        ("acme-shoes.yaml", "a.yaml"),
        ("calm-tea.yaml", ".hidden.yaml"),
    ] {
        fs::copy(Path::new("campaigns").join(src), dir.path().join(dst)).unwrap();
    }
    fs::write(dir.path().join("notes.txt"), "not yaml").unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    fs::copy(VALID, dir.path().join("sub/calm-tea.yaml")).unwrap();
    let report = load_dir(dir.path());
    let files: Vec<PathBuf> = report
        .campaigns
        .iter()
        .map(|c| PathBuf::from(c.path.file_name().unwrap()))
        .collect();
    assert_eq!(files, vec![PathBuf::from("a.yaml"), PathBuf::from("b.yml")]);
}

#[test]
fn the_same_file_given_twice_is_loaded_once() {
    let report = load_paths(&[PathBuf::from(VALID), PathBuf::from("campaigns")]);
    assert_eq!((report.campaigns.len(), report.problems.len()), (3, 0));
}

#[test]
fn a_missing_path_is_a_problem_not_a_crash() {
    let report = load_paths(&[PathBuf::from("tests/campaigns/no-such-dir")]);
    assert_eq!(report.problems.len(), 1);
    assert!(
        report.problems[0].message.starts_with("cannot read:"),
        "{}",
        report.problems[0]
    );
}

#[test]
fn the_report_names_the_files_whose_campaigns_were_not_loaded() {
    let (dir, _) = dir_with_valid_campaign();
    let broken = dir.path().join("broken.yaml");
    fs::copy("tests/campaigns/invalid/64-per-run-zero.yaml", &broken).unwrap();
    let report = load_dir(dir.path());
    let failed: Vec<&Path> = report.paths_with_problems().into_iter().collect();
    assert_eq!(failed, vec![broken.as_path()]);
}

/// A campaign on `domain` whose second URL names `url_id: 11`.
fn naming_url_id_11(name: &str, domain: &str) -> String {
    format!(
        "name: {name}\ndomain: {domain}\nurls:\n  - url: {domain}/a\n    texts: [\"#a#a#/a#\"]\n\
         \x20 - url: {domain}/b\n    url_id: 11\n    texts: [\"#a#b#/a#\"]\n\
         budget: {{monthly: 100, max_link_price: 10, daily_links: 1, total_links: 1}}\n"
    )
}

/// Issue 32: two files present together that name one `url_id` would each buy for that URL
/// under their own cap; each file's problem stands where it names the id and names where the
/// other file does, and neither campaign is loaded.
#[test]
fn one_url_id_in_two_files_is_an_error_at_both_positions() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("a.yaml"),
        naming_url_id_11("acme", "https://acme.example"),
    )
    .unwrap();
    fs::write(
        dir.path().join("b.yaml"),
        naming_url_id_11("bolt", "https://bolt.example"),
    )
    .unwrap();
    let report = load_dir(dir.path());
    assert!(report.campaigns.is_empty());
    let shown = rendered(&report, &dir.path().to_string_lossy());
    let lines: Vec<&str> = shown.lines().collect();
    let said = "one project, URL id, autobuyer or domain belongs to one campaign file";
    for (here, there) in [("a", "b"), ("b", "a")] {
        let line = format!(
            "<dir>/{here}.yaml:7:13: error: `url_id` 11 is also given in <dir>/{there}.yaml:7:13; {said}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with(&line)),
            "{line}\nnot in\n{shown}"
        );
    }
    assert_eq!(lines.len(), 2, "{shown}");
}

/// Issue 34: ownership is per marketplace account. Two files of two accounts may name the
/// same domain and the same `url_id` (each account's marketplace has its own ids, which may
/// coincide); both load. Within one account, named or the default, the clash stays refused.
#[test]
fn the_same_domain_and_url_id_in_two_accounts_are_valid_and_in_one_account_refused() {
    let in_account = |name: &str, account: Option<&str>| {
        let file = naming_url_id_11(name, "https://acme.example");
        match account {
            Some(a) => file.replacen('\n', &format!("\naccount: {a}\n"), 1),
            None => file,
        }
    };
    let load = |a: Option<&str>, b: Option<&str>| {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.yaml"), in_account("shop-a", a)).unwrap();
        fs::write(dir.path().join("b.yaml"), in_account("shop-b", b)).unwrap();
        let report = load_dir(dir.path());
        let shown = rendered(&report, &dir.path().to_string_lossy());
        (report, shown)
    };
    for (a, b) in [
        (Some("client-a"), Some("client-b")),
        (None, Some("client-b")),
    ] {
        let (report, shown) = load(a, b);
        assert_eq!(report.campaigns.len(), 2, "{a:?} and {b:?}: {shown}");
        assert!(report.problems.is_empty(), "{shown}");
        let accounts: Vec<&str> = report
            .campaigns
            .iter()
            .map(|c| c.campaign.account.as_str())
            .collect();
        assert_eq!(accounts, [a.unwrap_or("default"), b.unwrap()]);
    }
    for (a, b) in [
        (Some("client-a"), Some("client-a")),
        (None, Some("default")),
    ] {
        let (report, shown) = load(a, b);
        assert!(report.campaigns.is_empty(), "{a:?} and {b:?}: {shown}");
        assert!(
            shown.contains("domain `acme.example` is also the domain of"),
            "{shown}"
        );
        assert!(shown.contains("`url_id` 11 is also given in"), "{shown}");
    }
}
