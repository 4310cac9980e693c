//! Loading campaign files from disk: the one loader used by `validate`, `plan` and the
//! daemon, so what CI accepts is exactly what the daemon runs. A file with any problem
//! contributes no campaign; duplicate names reject every file involved; other files are
//! unaffected. Files are parsed and validated on every core (`std::thread::scope`), their
//! outcomes kept in file order, so the report is the same as one thread's.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::campaign::diag::{Diagnostic, Problems};
use crate::campaign::fence;
use crate::campaign::model::{LoadReport, LoadedCampaign};
use crate::campaign::parse::{self, MAX_FILE_BYTES};
use crate::campaign::span::{At, Pos};
use crate::campaign::validate::validate;

/// Most campaign files read from one directory.
pub const MAX_FILES: usize = 10_000;

/// Every `*.yaml` / `*.yml` file directly in `dir` (not recursive, dot-files skipped), by name.
pub fn load_dir(dir: &Path) -> LoadReport {
    load_paths(&[dir.to_path_buf()])
}

/// Files or directories; a directory contributes its campaign files as [`load_dir`] does.
pub fn load_paths(paths: &[PathBuf]) -> LoadReport {
    let mut report = LoadReport::default();
    let mut seen = HashSet::new();
    let mut jobs = Vec::new();
    for path in paths {
        let before = report.problems.len();
        let files = files_of(path, &mut report.problems);
        if report.problems.len() > before {
            // Nothing here can be told gone: every recorded campaign is held, none removed.
            report.invalid.hold_everything();
        }
        let commit = files.first().map(|_| commit_of(path)).unwrap_or_default();
        for file in files {
            let key = fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
            if seen.insert(key) {
                jobs.push((file, commit.clone()));
            }
        }
    }
    let mut outcomes = load_all(&jobs);
    reject_duplicate_names(&mut outcomes);
    reject_shared_ownership(&mut outcomes);
    reject_rename_beside_old(&mut outcomes);
    reject_move_beside_source(&mut outcomes);
    for o in outcomes {
        match o.result {
            Ok(c) => {
                if let Some(old) = &c.campaign.renamed_from {
                    report.invalid.renamed(old, &c.campaign.name);
                }
                report.campaigns.push(c)
            }
            Err(d) => {
                report.invalid.push(&o.path, o.name.map(|n| n.value));
                report.problems.extend(d);
            }
        }
    }
    report
}

/// Loads each `(file, commit)` job, in their order, on every core: each file is read, parsed
/// and validated on its own, so contiguous runs of files go to one thread each and their
/// outcomes are joined back in order (10,000 files: start-up within issue 13's 2 s).
fn load_all(jobs: &[(PathBuf, Option<String>)]) -> Vec<Outcome> {
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let per_thread = jobs.len().div_ceil(threads.max(1)).max(1);
    if jobs.len() <= per_thread {
        return jobs.iter().map(load_job).collect();
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = jobs
            .chunks(per_thread)
            .map(|run| s.spawn(move || run.iter().map(load_job).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

fn load_job((file, commit): &(PathBuf, Option<String>)) -> Outcome {
    let mut o = load_file(file);
    if let Ok(lc) = &mut o.result {
        lc.git_commit = commit.clone();
    }
    o
}

/// The git commit of a directory, or of a file's directory: once per path given.
fn commit_of(path: &Path) -> Option<String> {
    if path.is_dir() {
        super::git::head_commit(path)
    } else {
        let dir = path.parent()?;
        super::git::head_commit(if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        })
    }
}

struct Outcome {
    path: PathBuf,
    name: Option<At<String>>,
    /// The name the file says it had before (`renamed_from`), once it parsed.
    renamed_from: Option<At<String>>,
    /// Its autobuyers' names, each with the campaign it says it moved from (`moved_from`).
    autobuyers: Vec<(String, Option<At<String>>)>,
    /// What the file claims to own (project, autobuyers, domain), once it parsed.
    claims: Option<fence::Claims>,
    result: Result<LoadedCampaign, Vec<Diagnostic>>,
}

fn files_of(path: &Path, problems: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => list_dir(path, problems),
        Ok(_) => vec![path.to_path_buf()],
        Err(e) => {
            problems.push(Diagnostic::new(
                path,
                Pos::FILE,
                format!("cannot read: {e}"),
            ));
            Vec::new()
        }
    }
}

fn list_dir(dir: &Path, problems: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(Diagnostic::new(
                dir,
                Pos::FILE,
                format!("cannot list directory: {e}"),
            ));
            return Vec::new();
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| is_campaign_file_name(p))
        .collect();
    if files.len() > MAX_FILES {
        let msg = format!(
            "directory holds {} campaign files, more than {MAX_FILES}; none were loaded",
            files.len()
        );
        problems.push(Diagnostic::new(dir, Pos::FILE, msg));
        return Vec::new();
    }
    files.sort();
    files
}

fn is_campaign_file_name(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    !name.starts_with('.') && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

/// One file's bytes, parsed and validated as [`load_dir`] does (the campaign files of a git
/// revision for `plan --base`); `path` only names the file in the problems.
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<crate::campaign::Campaign, Vec<Diagnostic>> {
    let raw = parse::parse(bytes).map_err(|p| p.into_diagnostics(path))?;
    validate(&raw).map_err(|p: Problems| p.into_diagnostics(path))
}

fn load_file(path: &Path) -> Outcome {
    let mut outcome = Outcome {
        path: path.to_path_buf(),
        name: None,
        renamed_from: None,
        autobuyers: Vec::new(),
        claims: None,
        result: Err(Vec::new()),
    };
    let bytes = match read_campaign_file(path) {
        Ok(b) => b,
        Err(msg) => {
            outcome.result = Err(vec![Diagnostic::new(path, Pos::FILE, msg)]);
            return outcome;
        }
    };
    let raw = match parse::parse(&bytes) {
        Ok(r) => r,
        Err(p) => {
            outcome.result = Err(p.into_diagnostics(path));
            return outcome;
        }
    };
    outcome.name = Some(raw.name.clone());
    outcome.renamed_from = raw.renamed_from.clone();
    outcome.autobuyers = raw
        .autobuyers
        .iter()
        .map(|a| (a.value.name.value.clone(), a.value.moved_from.clone()))
        .collect();
    outcome.claims = Some(fence::Claims::of(&raw));
    outcome.result = validate(&raw)
        .map(|campaign| LoadedCampaign {
            campaign,
            path: path.to_path_buf(),
            fingerprint: sha256_hex(&bytes),
            git_commit: None,
            account_pos: raw.account.as_ref().map_or(Pos::FILE, |a| a.pos),
        })
        .map_err(|p: Problems| p.into_diagnostics(path));
    outcome
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`]. A symlink is followed only when its
/// target stays inside the file's own directory: that is how Kubernetes mounts ConfigMaps
/// (`name.yaml -> ..data/name.yaml`), while a link to `/etc` or `/dev/zero` is refused.
fn read_campaign_file(path: &Path) -> Result<Vec<u8>, String> {
    let link = fs::symlink_metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if link.file_type().is_symlink() {
        check_symlink_target(path)?;
    }
    let meta = fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file; refused".to_string());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!("file is larger than {MAX_FILE_BYTES} bytes"));
    }
    let mut bytes = Vec::new();
    let file = fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(bytes)
}

fn check_symlink_target(path: &Path) -> Result<(), String> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let dir = fs::canonicalize(parent).map_err(|e| format!("cannot read: {e}"))?;
    let target = fs::canonicalize(path).map_err(|e| format!("symlink cannot be followed: {e}"))?;
    if !target.starts_with(&dir) {
        return Err("symlink points outside the campaigns directory; refused".to_string());
    }
    Ok(())
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Every file whose campaign name another file also uses gets a problem and loses its campaign.
fn reject_duplicate_names(outcomes: &mut [Outcome]) {
    let mut by_name: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, o) in outcomes.iter().enumerate() {
        if let Some(n) = &o.name {
            by_name.entry(n.value.clone()).or_default().push(i);
        }
    }
    for idxs in by_name.values().filter(|v| v.len() > 1) {
        for &i in idxs {
            let others: Vec<String> = idxs
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| outcomes[j].path.display().to_string())
                .collect();
            let name = outcomes[i]
                .name
                .clone()
                .unwrap_or_else(|| At::new(String::new(), Pos::FILE));
            let msg = format!(
                "campaign name `{}` is also used by {}; names must be unique",
                name.value,
                others.join(", ")
            );
            let d = Diagnostic::new(&outcomes[i].path, name.pos, msg);
            match &mut outcomes[i].result {
                Err(ds) => ds.push(d),
                r @ Ok(_) => *r = Err(vec![d]),
            }
        }
    }
}

/// The ownership fence (see `fence.rs`): every file that claims a project, autobuyer or
/// domain another file claims too gets a problem naming the others, and loses its campaign.
fn reject_shared_ownership(outcomes: &mut [Outcome]) {
    let (index, files): (Vec<usize>, Vec<(PathBuf, fence::Claims)>) = outcomes
        .iter()
        .enumerate()
        .filter_map(|(i, o)| Some((i, (o.path.clone(), o.claims.clone()?))))
        .unzip();
    for clash in fence::clashes(&files) {
        let o = &mut outcomes[index[clash.index]];
        match &mut o.result {
            Err(ds) => ds.push(clash.diagnostic),
            r @ Ok(_) => *r = Err(vec![clash.diagnostic]),
        }
    }
}

/// A file that says `renamed_from: OLD` while OLD's own file is still loaded beside it gets a
/// problem and loses its campaign: the rename would hand OLD's project, links and money to
/// this campaign while OLD's file still spends on them. OLD's file is not touched (its
/// campaign keeps running as before), so a half-done edit changes nothing.
fn reject_rename_beside_old(outcomes: &mut [Outcome]) {
    let names: BTreeMap<String, PathBuf> = outcomes
        .iter()
        .filter_map(|o| Some((o.name.as_ref()?.value.clone(), o.path.clone())))
        .collect();
    for o in outcomes.iter_mut() {
        let Some(old) = &o.renamed_from else { continue };
        let Some(old_file) = names.get(&old.value) else {
            continue;
        };
        if *old_file == o.path {
            continue; // its own name: `validate` says so
        }
        let msg = format!(
            "`renamed_from: {name}`, but the campaign `{name}` is still in {file}; a rename hands everything `{name}` holds to this campaign, so remove {file} in the same change (or remove `renamed_from`)",
            name = old.value,
            file = old_file.display()
        );
        let d = Diagnostic::new(&o.path, old.pos, msg);
        match &mut o.result {
            Err(ds) => ds.push(d),
            r @ Ok(_) => *r = Err(vec![d]),
        }
    }
}

/// An autobuyer that says `moved_from: SOURCE` while SOURCE's file, loaded beside it, still
/// declares an autobuyer of that name: its file gets a problem at the key and loses its
/// campaign (both files would claim one autobuyer). SOURCE's file is not touched, so a
/// half-done edit changes nothing.
fn reject_move_beside_source(outcomes: &mut [Outcome]) {
    let declared: BTreeMap<String, (PathBuf, Vec<String>)> = outcomes
        .iter()
        .filter_map(|o| {
            let names = o.autobuyers.iter().map(|(n, _)| n.clone()).collect();
            Some((o.name.as_ref()?.value.clone(), (o.path.clone(), names)))
        })
        .collect();
    for o in outcomes.iter_mut() {
        let mut found = Vec::new();
        for (name, from) in &o.autobuyers {
            let Some(from) = from else { continue };
            let Some((file, names)) = declared.get(&from.value) else {
                continue;
            };
            if *file == o.path || !names.contains(name) {
                continue; // its own name: `validate` says so
            }
            let msg = format!(
                "autobuyer `{name}`: `moved_from: {source}`, but {file} (campaign `{source}`) still declares autobuyer `{name}`; remove it there in the same change (or remove `moved_from`)",
                source = from.value,
                file = file.display()
            );
            found.push(Diagnostic::new(&o.path, from.pos, msg));
        }
        if found.is_empty() {
            continue;
        }
        match &mut o.result {
            Err(ds) => ds.extend(found),
            r @ Ok(_) => *r = Err(found),
        }
    }
}
