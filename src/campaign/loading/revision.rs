//! The campaign files of a git revision, for `plan --base REV`: what the pull request's base
//! branch holds, so the plan can show what the change under review changes. Read with the
//! `git` command run in the campaigns directory (a review job has a checkout and `git`; the
//! daemon never comes here — it reads `.git` itself, see `git`). Each file is parsed and
//! validated exactly as [`crate::campaign::load_dir`] does, under the same limits: at most
//! [`MAX_FILES`] files of at most [`MAX_FILE_BYTES`] bytes, so a hostile base cannot make
//! `plan` read without bound.
//!
//! `REV` is checked by `git rev-parse --verify` and passed after `--end-of-options`, so a
//! revision that looks like a flag is a revision, never an option.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::load::{MAX_FILES, load_bytes};
use crate::campaign::diag::Diagnostic;
use crate::campaign::model::Campaign;
use crate::campaign::parse::MAX_FILE_BYTES;
use crate::campaign::span::Pos;

/// The campaigns a revision holds in the directory.
#[derive(Debug, Clone, Default)]
pub(crate) struct AtRevision {
    /// The full commit `REV` names.
    pub(crate) commit: String,
    pub(crate) campaigns: Vec<Campaign>,
    /// Files of the revision that did not load: their campaigns are compared as absent.
    pub(crate) problems: Vec<Diagnostic>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum RevisionError {
    #[error("cannot run git in {dir}: {source}")]
    Spawn {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("git {what} failed in {dir}: {stderr}")]
    Git {
        what: &'static str,
        dir: PathBuf,
        stderr: String,
    },
    #[error("`{0}` is not a commit of the repository holding the campaigns directory")]
    UnknownRevision(String),
    #[error("the campaigns directory holds {0} files at the base revision, more than {MAX_FILES}")]
    TooManyFiles(usize),
    #[error("git cat-file answered something unexpected: {0}")]
    Batch(String),
}

/// The campaign files directly in `dir` (as [`crate::campaign::load_dir`] picks them) at revision `rev`.
pub(crate) fn load_at_revision(dir: &Path, rev: &str) -> Result<AtRevision, RevisionError> {
    let commit = resolve(dir, rev)?;
    let entries = list(dir, &commit)?;
    if entries.len() > MAX_FILES {
        return Err(RevisionError::TooManyFiles(entries.len()));
    }
    let mut out = AtRevision {
        commit,
        ..AtRevision::default()
    };
    let mut readable = Vec::new();
    for e in entries {
        let path = dir.join(&e.name);
        match e.refusal() {
            Some(why) => out.problems.push(Diagnostic::new(&path, Pos::FILE, why)),
            None => readable.push((path, e.object)),
        }
    }
    let objects: Vec<&str> = readable.iter().map(|(_, o)| o.as_str()).collect();
    for ((path, _), bytes) in readable.iter().zip(read_blobs(dir, &objects)?) {
        match load_bytes(path, &bytes) {
            Ok(c) => out.campaigns.push(c),
            Err(d) => out.problems.extend(d),
        }
    }
    Ok(out)
}

fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
    c
}

fn run(dir: &Path, what: &'static str, cmd: &mut Command) -> Result<Vec<u8>, RevisionError> {
    let out = cmd.output().map_err(|source| RevisionError::Spawn {
        dir: dir.to_path_buf(),
        source,
    })?;
    if !out.status.success() {
        return Err(RevisionError::Git {
            what,
            dir: dir.to_path_buf(),
            stderr: String::from_utf8_lossy(&out.stderr)
                .trim()
                .chars()
                .take(500)
                .collect(),
        });
    }
    Ok(out.stdout)
}

/// The full commit `rev` names, or [`RevisionError::UnknownRevision`].
fn resolve(dir: &Path, rev: &str) -> Result<String, RevisionError> {
    if rev.is_empty() || rev.starts_with('-') || rev.len() > 256 {
        return Err(RevisionError::UnknownRevision(
            rev.chars().take(80).collect(),
        ));
    }
    let spec = format!("{rev}^{{commit}}");
    let out = git(dir)
        .args([
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ])
        .output()
        .map_err(|source| RevisionError::Spawn {
            dir: dir.to_path_buf(),
            source,
        })?;
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || commit.is_empty() {
        return Err(RevisionError::UnknownRevision(rev.to_string()));
    }
    Ok(commit)
}

/// One entry of `git ls-tree -l`.
struct Entry {
    mode: String,
    kind: String,
    object: String,
    size: Option<u64>,
    name: String,
}

impl Entry {
    /// Why the loader would not read this file, as `list_dir` and `read_campaign_file` say.
    fn refusal(&self) -> Option<String> {
        if self.kind != "blob" || !self.mode.starts_with("100") {
            return Some("not a regular file at the base revision; refused".into());
        }
        match self.size {
            Some(n) if n <= MAX_FILE_BYTES => None,
            _ => Some(format!("file is larger than {MAX_FILE_BYTES} bytes")),
        }
    }
}

/// The campaign files directly in `dir` at `commit`, by name (paths relative to `dir`).
fn list(dir: &Path, commit: &str) -> Result<Vec<Entry>, RevisionError> {
    let out = run(
        dir,
        "ls-tree",
        git(dir).args(["ls-tree", "-l", "-z", commit, "--", "."]),
    )?;
    let mut entries: Vec<Entry> = out
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .filter_map(|r| {
            let r = String::from_utf8_lossy(r);
            let (meta, name) = r.split_once('\t')?;
            let mut f = meta.split_whitespace();
            Some(Entry {
                mode: f.next()?.to_string(),
                kind: f.next()?.to_string(),
                object: f.next()?.to_string(),
                size: f.next().and_then(|s| s.parse().ok()),
                name: name.to_string(),
            })
        })
        .filter(|e| is_campaign_file_name(&e.name))
        .collect();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

fn is_campaign_file_name(name: &str) -> bool {
    !name.contains('/')
        && !name.starts_with('.')
        && (name.ends_with(".yaml") || name.ends_with(".yml"))
}

/// The content of each blob, in order, from one `git cat-file --batch` (one process however
/// many files). Every object is a blob of at most [`MAX_FILE_BYTES`] (checked by the caller).
fn read_blobs(dir: &Path, objects: &[&str]) -> Result<Vec<Vec<u8>>, RevisionError> {
    if objects.is_empty() {
        return Ok(Vec::new());
    }
    let spawn_err = |source| RevisionError::Spawn {
        dir: dir.to_path_buf(),
        source,
    };
    let mut child = git(dir)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(spawn_err)?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| RevisionError::Batch("no stdin".into()))?;
    let request: String = objects.iter().map(|o| format!("{o}\n")).collect();
    // Written from another thread: git answers while it reads, and both pipes are bounded.
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| RevisionError::Batch("no stdout".into()))?;
    let mut reader = BufReader::new(stdout);
    let blobs = objects
        .iter()
        .map(|o| read_one(&mut reader, o))
        .collect::<Result<Vec<_>, _>>();
    let _ = writer.join();
    let _ = child.wait();
    blobs
}

fn read_one(reader: &mut impl BufRead, object: &str) -> Result<Vec<u8>, RevisionError> {
    let mut header = String::new();
    reader
        .read_line(&mut header)
        .map_err(|e| RevisionError::Batch(e.to_string()))?;
    let mut f = header.split_whitespace();
    let (oid, kind, size) = (
        f.next(),
        f.next(),
        f.next().and_then(|s| s.parse::<u64>().ok()),
    );
    let size = match (oid, kind, size) {
        (Some(id), Some("blob"), Some(n)) if id == object && n <= MAX_FILE_BYTES => n,
        _ => {
            return Err(RevisionError::Batch(
                header.trim().chars().take(200).collect(),
            ));
        }
    };
    let mut bytes = vec![0; size as usize + 1];
    reader
        .read_exact(&mut bytes)
        .map_err(|e| RevisionError::Batch(e.to_string()))?;
    bytes.pop(); // the newline after each object
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t.invalid"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            ok.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&ok.stderr)
        );
    }

    const FILE: &str = "name: acme\ndomain: https://acme.example\nurls:\n  - url: https://acme.example/\n    texts: [\"#a#acme#/a#\"]\nbudget:\n  monthly: 1000\n  max_link_price: 100\n  daily_links: 1\n  total_links: 10\n";

    #[test]
    fn the_files_of_a_revision_are_loaded_and_later_edits_do_not_show() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("campaigns");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        sh(t.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.join("acme.yaml"), FILE).unwrap();
        std::fs::write(dir.join("bad.yml"), "name: [\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "not a campaign").unwrap();
        std::fs::write(dir.join("sub/deep.yaml"), FILE).unwrap();
        sh(t.path(), &["add", "."]);
        sh(t.path(), &["commit", "-q", "-m", "base"]);
        std::fs::write(dir.join("acme.yaml"), FILE.replace("1000", "2000")).unwrap();

        let at = load_at_revision(&dir, "main").unwrap();

        assert_eq!(at.commit.len(), 40);
        assert_eq!(at.campaigns.len(), 1, "{:?}", at.problems);
        assert_eq!(
            at.campaigns[0].budget.monthly,
            linkrunner_domain::money::Money::from_rubles(1000)
        );
        assert_eq!(at.problems.len(), 1);
        assert!(
            at.problems[0].path.ends_with("campaigns/bad.yml"),
            "{:?}",
            at.problems
        );
    }

    #[test]
    fn an_unknown_revision_or_one_that_looks_like_a_flag_is_refused() {
        let t = tempfile::tempdir().unwrap();
        sh(t.path(), &["init", "-q"]);
        for rev in ["no-such-branch", "--output=/tmp/x", ""] {
            assert!(
                matches!(
                    load_at_revision(t.path(), rev),
                    Err(RevisionError::UnknownRevision(_))
                ),
                "{rev}"
            );
        }
    }
}
