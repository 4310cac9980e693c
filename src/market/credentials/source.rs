//! Where the secrets come from: given (fixed or a file re-read when it changes) or the
//! built-in login's settings. Reading one file is [`super::secret_file`].

use std::path::PathBuf;

use secrecy::SecretString;

use super::super::auth::Credentials;
use super::secret_file::{SecretFileError, read_secret_file};

/// Where one secret comes from.
#[derive(Clone)]
pub enum SecretOrigin {
    /// A value given once (an environment variable, a test): it never changes.
    Fixed(SecretString),
    /// A file (a flag's, or `$CREDENTIALS_DIRECTORY/NAME`): re-read when it changes.
    File(PathBuf),
}

impl std::fmt::Debug for SecretOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretOrigin::Fixed(_) => f.write_str("Fixed([REDACTED])"),
            SecretOrigin::File(p) => write!(f, "File({})", p.display()),
        }
    }
}

impl SecretOrigin {
    /// The current value: the fixed one, or the file's content now.
    pub(crate) fn read(&self) -> Result<SecretString, SecretFileError> {
        match self {
            SecretOrigin::Fixed(v) => Ok(v.clone()),
            SecretOrigin::File(p) => read_secret_file(p),
        }
    }

    pub(crate) fn is_file(&self) -> bool {
        matches!(self, SecretOrigin::File(_))
    }
}

/// The built-in login: `POST {base}{login_path}` with `{login, apiToken}` answers the
/// `AUTH_TICKET` cookie; `GET {base}{auth_path}` with it answers the token.
#[derive(Debug, Clone)]
pub struct LoginSettings {
    /// The account's login name (not a secret).
    pub(crate) login: String,
    /// The long-lived `apiToken`.
    pub(crate) api_key: SecretOrigin,
    pub(crate) login_path: String,
    pub(crate) auth_path: String,
}

impl LoginSettings {
    pub(crate) const DEFAULT_LOGIN_PATH: &'static str = "/login";
    pub(crate) const DEFAULT_AUTH_PATH: &'static str = "/auth";

    pub fn new(login: impl Into<String>, api_key: SecretOrigin) -> LoginSettings {
        LoginSettings {
            login: login.into(),
            api_key,
            login_path: Self::DEFAULT_LOGIN_PATH.into(),
            auth_path: Self::DEFAULT_AUTH_PATH.into(),
        }
    }
}

/// How the client gets its token and ticket.
#[derive(Debug, Clone)]
pub enum CredentialSource {
    /// A token and a ticket given to us, each fixed or in a file that is re-read.
    Given {
        token: SecretOrigin,
        ticket: SecretOrigin,
    },
    /// The built-in login obtains both, and obtains a new token before it expires.
    Login(LoginSettings),
}

impl From<Credentials> for CredentialSource {
    fn from(c: Credentials) -> CredentialSource {
        let (token, ticket) = c.into_parts();
        CredentialSource::Given {
            token: SecretOrigin::Fixed(token),
            ticket: SecretOrigin::Fixed(ticket),
        }
    }
}

pub use linkrunner_domain::credentials::CredentialsMode;

impl CredentialSource {
    pub(crate) fn mode(&self) -> CredentialsMode {
        match self {
            CredentialSource::Login(_) => CredentialsMode::Login,
            CredentialSource::Given { token, ticket } if token.is_file() || ticket.is_file() => {
                CredentialsMode::Files
            }
            CredentialSource::Given { .. } => CredentialsMode::Fixed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_says_whether_anything_is_re_read() {
        let fixed = || SecretOrigin::Fixed(SecretString::from("x"));
        let given = |token, ticket| CredentialSource::Given { token, ticket };
        assert_eq!(given(fixed(), fixed()).mode(), CredentialsMode::Fixed);
        let file = SecretOrigin::File(PathBuf::from("/run/t"));
        assert_eq!(given(file, fixed()).mode(), CredentialsMode::Files);
        let login = CredentialSource::Login(LoginSettings::new("me", fixed()));
        assert_eq!(login.mode(), CredentialsMode::Login);
    }
}
