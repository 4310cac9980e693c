//! Reading one secret file (token, ticket, API key): whole, size-capped, trailing newlines
//! trimmed, and an error that names the file, never its content. A leaf: `auth` and the
//! credential sources both use it.

use std::io::Read as _;
use std::path::Path;

use secrecy::SecretString;

/// A secret file larger than this is surely the wrong file.
pub(crate) const MAX_SECRET_BYTES: u64 = 64 * 1024;

/// Why a secret file could not be used. Names the file, never its content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretFileError {
    #[error("cannot read `{path}`: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("`{0}` is larger than {MAX_SECRET_BYTES} bytes")]
    TooLarge(String),
    #[error("`{0}` is not valid UTF-8")]
    NotUtf8(String),
    #[error("`{0}` is empty")]
    Empty(String),
}

/// Reads one secret file: whole, at most [`MAX_SECRET_BYTES`], trailing newlines trimmed.
pub(crate) fn read_secret_file(path: &Path) -> Result<SecretString, SecretFileError> {
    let shown = || path.display().to_string();
    let unreadable = |e: std::io::Error| SecretFileError::Unreadable {
        path: shown(),
        reason: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_SECRET_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_SECRET_BYTES {
        return Err(SecretFileError::TooLarge(shown()));
    }
    let mut text = String::from_utf8(bytes).map_err(|_| SecretFileError::NotUtf8(shown()))?;
    while text.ends_with('\n') || text.ends_with('\r') {
        text.pop();
    }
    if text.is_empty() {
        return Err(SecretFileError::Empty(shown()));
    }
    Ok(SecretString::from(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use secrecy::ExposeSecret as _;

    #[test]
    fn a_secret_file_is_read_without_its_trailing_newlines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, "tok-1\r\n\n").unwrap();
        assert_eq!(read_secret_file(&p).unwrap().expose_secret(), "tok-1");
    }

    #[test]
    fn an_empty_or_missing_file_is_named_without_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        std::fs::write(&p, "\n").unwrap();
        assert!(matches!(
            read_secret_file(&p),
            Err(SecretFileError::Empty(_))
        ));
        let missing = dir.path().join("nope");
        let err = read_secret_file(&missing).unwrap_err().to_string();
        assert!(err.contains("nope"), "{err}");
    }
}
