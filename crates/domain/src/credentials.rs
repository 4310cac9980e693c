//! How linkrunner obtains its marketplace credentials, as the rest of it speaks of it (the
//! `mode` label, `/readyz`, `status`). The credentials themselves stay in the client.

/// Which way of obtaining credentials is in use: the `mode` label and what `/readyz` and
/// `status` say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialsMode {
    /// Values given once (environment variables): they never change without a restart.
    Fixed,
    /// At least one value in a file, re-read when it changes.
    Files,
    /// The built-in login.
    Login,
}

impl CredentialsMode {
    pub const ALL: [CredentialsMode; 3] = [
        CredentialsMode::Fixed,
        CredentialsMode::Files,
        CredentialsMode::Login,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CredentialsMode::Fixed => "fixed",
            CredentialsMode::Files => "files",
            CredentialsMode::Login => "login",
        }
    }

    /// One line for `/readyz` and `status`.
    pub fn describe(self) -> &'static str {
        match self {
            CredentialsMode::Fixed => {
                "fixed: token and ticket from the environment, changed only by a restart"
            }
            CredentialsMode::Files => {
                "files: token and ticket files re-read when they change, on SIGHUP and before a 401/403 halts spending"
            }
            CredentialsMode::Login => {
                "login: built-in login (--login, --api-key-file), the token refreshed before it expires"
            }
        }
    }
}
