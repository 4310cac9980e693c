//! Finding the API token, the auth ticket and the login's API key: the file named by a flag
//! (or its `*_FILE` variable), else an environment variable, else systemd's
//! `$CREDENTIALS_DIRECTORY`. Files are read once here to fail the start early and then
//! re-read by the client when they change; environment values are fixed. Trailing newlines
//! are trimmed. Errors name where we looked, never what we read.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use secrecy::SecretString;

use crate::market::credentials::{SecretOrigin, read_secret_file};

/// Where one secret may come from.
pub(crate) struct Source {
    what: &'static str,
    flag: &'static str,
    file_var: &'static str,
    pub(crate) var: &'static str,
    pub(crate) credential: &'static str,
}

pub(crate) const TOKEN: Source = Source {
    what: "API token",
    flag: "--api-token-file",
    file_var: "LINKRUNNER_API_TOKEN_FILE",
    var: "LINKRUNNER_API_TOKEN",
    credential: "api-token",
};

pub(crate) const TICKET: Source = Source {
    what: "auth ticket",
    flag: "--auth-ticket-file",
    file_var: "LINKRUNNER_AUTH_TICKET_FILE",
    var: "LINKRUNNER_AUTH_TICKET",
    credential: "auth-ticket",
};

pub(crate) const API_KEY: Source = Source {
    what: "API key",
    flag: "--api-key-file",
    file_var: "LINKRUNNER_API_KEY_FILE",
    var: "LINKRUNNER_API_KEY",
    credential: "api-key",
};

/// Loads one secret. `file` is the flag's value (clap has already read `*_FILE` into it).
#[cfg(test)]
pub(crate) fn load(
    src: &Source,
    file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<SecretString> {
    let origin = locate(src, file, env)?;
    Ok(origin.read()?)
}

/// Where one secret is: a file (read once here, so a bad one fails the start; the client
/// re-reads it when it changes) or the value of an environment variable (fixed).
pub(crate) fn locate(
    src: &Source,
    file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<SecretOrigin> {
    if let Some(path) = file {
        let origin = format!("{} / {}", src.flag, src.file_var);
        return checked_file(src, path, &origin);
    }
    if let Some(value) = env(src.var) {
        let value = value
            .into_string()
            .map_err(|_| anyhow::anyhow!("${} is not valid UTF-8", src.var))?;
        let value = value.trim_end_matches(['\n', '\r']).to_string();
        if value.is_empty() {
            bail!("the {} from ${} is empty", src.what, src.var);
        }
        return Ok(SecretOrigin::Fixed(SecretString::from(value)));
    }
    if let Some(dir) = env("CREDENTIALS_DIRECTORY") {
        let path = PathBuf::from(dir).join(src.credential);
        if path.exists() {
            return checked_file(src, &path, "$CREDENTIALS_DIRECTORY");
        }
    }
    bail!(
        "no {what}: set {flag} (or {file_var}) to a file holding it, or {var}, \
         or provide the systemd credential `{cred}` ($CREDENTIALS_DIRECTORY/{cred})",
        what = src.what,
        flag = src.flag,
        file_var = src.file_var,
        var = src.var,
        cred = src.credential,
    )
}

/// One secret in the file `path` (an account of the accounts file names its own), checked as
/// [`locate`] checks a flag's; `origin` says where the path was given.
pub(crate) fn in_file(src: &Source, path: &Path, origin: &str) -> anyhow::Result<SecretOrigin> {
    checked_file(src, path, origin)
}

fn checked_file(src: &Source, path: &Path, origin: &str) -> anyhow::Result<SecretOrigin> {
    read_secret_file(path)
        .with_context(|| format!("cannot read the {} from {origin}", src.what))?;
    Ok(SecretOrigin::File(path.to_path_buf()))
}
