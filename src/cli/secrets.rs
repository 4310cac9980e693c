//! Loading the API token and the auth ticket: from the file named by a flag (or its
//! `*_FILE` variable), else from an environment variable, else from systemd's
//! `$CREDENTIALS_DIRECTORY`. Trailing newlines are trimmed. Errors name where we looked,
//! never what we read.

use std::ffi::OsString;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use secrecy::SecretString;

/// Where one secret may come from.
pub struct Source {
    pub what: &'static str,
    pub flag: &'static str,
    pub file_var: &'static str,
    pub var: &'static str,
    pub credential: &'static str,
}

pub const TOKEN: Source = Source {
    what: "API token",
    flag: "--api-token-file",
    file_var: "LINKRUNNER_API_TOKEN_FILE",
    var: "LINKRUNNER_API_TOKEN",
    credential: "api-token",
};

pub const TICKET: Source = Source {
    what: "auth ticket",
    flag: "--auth-ticket-file",
    file_var: "LINKRUNNER_AUTH_TICKET_FILE",
    var: "LINKRUNNER_AUTH_TICKET",
    credential: "auth-ticket",
};

/// A secret file larger than this is surely the wrong file.
const MAX_SECRET_BYTES: u64 = 64 * 1024;

/// Loads one secret. `file` is the flag's value (clap has already read `*_FILE` into it).
pub fn load(
    src: &Source,
    file: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> anyhow::Result<SecretString> {
    if let Some(path) = file {
        let origin = format!("{} / {}", src.flag, src.file_var);
        return read_file(src, path, &origin);
    }
    if let Some(value) = env(src.var) {
        let value = value
            .into_string()
            .map_err(|_| anyhow::anyhow!("${} is not valid UTF-8", src.var))?;
        return non_empty(src, trim_newlines(value), &format!("${}", src.var));
    }
    if let Some(dir) = env("CREDENTIALS_DIRECTORY") {
        let path = PathBuf::from(dir).join(src.credential);
        if path.exists() {
            return read_file(src, &path, "$CREDENTIALS_DIRECTORY");
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

fn read_file(src: &Source, path: &Path, origin: &str) -> anyhow::Result<SecretString> {
    let describe = || {
        format!(
            "cannot read the {} from {origin} (`{}`)",
            src.what,
            path.display()
        )
    };
    let file = std::fs::File::open(path).with_context(describe)?;
    let mut bytes = Vec::new();
    file.take(MAX_SECRET_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(describe)?;
    if bytes.len() as u64 > MAX_SECRET_BYTES {
        bail!(
            "{}: the file is larger than {MAX_SECRET_BYTES} bytes",
            describe()
        );
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("{}: the file is not valid UTF-8", describe()))?;
    non_empty(
        src,
        trim_newlines(text),
        &format!("{origin} (`{}`)", path.display()),
    )
}

fn trim_newlines(mut s: String) -> String {
    while s.ends_with('\n') || s.ends_with('\r') {
        s.pop();
    }
    s
}

fn non_empty(src: &Source, value: String, origin: &str) -> anyhow::Result<SecretString> {
    if value.is_empty() {
        bail!("the {} from {origin} is empty", src.what);
    }
    Ok(SecretString::from(value))
}
