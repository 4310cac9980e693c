//! The git commit checked out in a campaigns directory, read from `.git` directly: the daemon
//! never runs `git` and links no git library. Read once per directory load; recorded with
//! every intent so `explain` can name the file version that made it.
//!
//! Understands a work tree's `.git` directory or `.git` file (`gitdir: …`, worktrees and
//! submodules), a `HEAD` that names a ref (loose, or in `packed-refs` of the common dir) or
//! holds a detached commit. Anything else (no repository, an unborn branch) is `None`.

use std::fs;
use std::path::{Path, PathBuf};

/// How many parent directories are searched for `.git`.
const MAX_DEPTH: usize = 32;

/// The commit (40 or 64 hex digits) checked out in the work tree containing `dir`.
pub(crate) fn head_commit(dir: &Path) -> Option<String> {
    let start = fs::canonicalize(dir).ok()?;
    let git_dir = start
        .ancestors()
        .take(MAX_DEPTH)
        .find_map(|d| git_dir_of(&d.join(".git")))?;
    let head = read_trimmed(&git_dir.join("HEAD"))?;
    match head.strip_prefix("ref:") {
        Some(name) => resolve_ref(&git_dir, name.trim()),
        None => is_commit(&head).then_some(head),
    }
}

/// The repository directory a `.git` entry points to.
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let meta = fs::metadata(dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = read_trimmed(dot_git)?;
    let target = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
    let base = dot_git.parent()?;
    Some(if target.is_absolute() {
        target
    } else {
        base.join(target)
    })
}

/// A ref's commit: loose in the git dir or its common dir, else in `packed-refs`.
fn resolve_ref(git_dir: &Path, name: &str) -> Option<String> {
    if name.contains("..") || !name.starts_with("refs/") {
        return None;
    }
    let common = read_trimmed(&git_dir.join("commondir"))
        .map(|c| git_dir.join(c))
        .unwrap_or_else(|| git_dir.to_path_buf());
    for dir in [git_dir, common.as_path()] {
        if let Some(c) = read_trimmed(&dir.join(name)).filter(|c| is_commit(c)) {
            return Some(c);
        }
    }
    let packed = fs::read_to_string(common.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (commit, r) = line.split_once(' ')?;
        (r == name && is_commit(commit)).then(|| commit.to_string())
    })
}

/// A small file's content without surrounding whitespace; `None` for anything large.
fn read_trimmed(path: &Path) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    Some(fs::read_to_string(path).ok()?.trim().to_string())
}

fn is_commit(s: &str) -> bool {
    (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const C1: &str = "0123456789abcdef0123456789abcdef01234567";
    const C2: &str = "89abcdef0123456789abcdef0123456789abcdef";

    fn repo(head: &str) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join(".git/refs/heads")).unwrap();
        fs::create_dir_all(t.path().join("campaigns")).unwrap();
        fs::write(t.path().join(".git/HEAD"), head).unwrap();
        t
    }

    #[test]
    fn a_branch_head_is_read_from_its_loose_ref() {
        let t = repo("ref: refs/heads/main\n");
        fs::write(t.path().join(".git/refs/heads/main"), format!("{C1}\n")).unwrap();
        assert_eq!(
            head_commit(&t.path().join("campaigns")).as_deref(),
            Some(C1)
        );
    }

    #[test]
    fn a_packed_ref_and_a_detached_head_are_read_too() {
        let t = repo("ref: refs/heads/main\n");
        let packed = format!("# pack-refs with: peeled\n{C2} refs/heads/main\n");
        fs::write(t.path().join(".git/packed-refs"), packed).unwrap();
        assert_eq!(head_commit(t.path()).as_deref(), Some(C2));
        fs::write(t.path().join(".git/HEAD"), C1).unwrap();
        assert_eq!(head_commit(t.path()).as_deref(), Some(C1));
    }

    #[test]
    fn a_worktree_git_file_points_to_its_git_dir_and_common_dir() {
        let t = repo("ref: refs/heads/main\n");
        fs::write(t.path().join(".git/refs/heads/feature"), C2).unwrap();
        let wt_git = t.path().join(".git/worktrees/wt");
        fs::create_dir_all(&wt_git).unwrap();
        fs::write(wt_git.join("HEAD"), "ref: refs/heads/feature").unwrap();
        fs::write(wt_git.join("commondir"), "../..").unwrap();
        let wt = t.path().join("wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(wt.join(".git"), format!("gitdir: {}\n", wt_git.display())).unwrap();
        assert_eq!(head_commit(&wt).as_deref(), Some(C2));
    }

    #[test]
    fn no_repository_or_an_unborn_branch_is_none() {
        let t = repo("ref: refs/heads/main\n");
        assert_eq!(head_commit(t.path()), None);
        fs::write(t.path().join(".git/HEAD"), "ref: ../../etc/passwd").unwrap();
        assert_eq!(head_commit(t.path()), None);
    }
}
