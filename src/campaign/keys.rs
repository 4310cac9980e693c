//! Key names: "did you mean" for near misses, second spellings of a known key, and keys
//! that must never appear in a campaign file because they carry secrets or an API address.

/// Keys (after [`normalized`]) that name an API address: those belong to the daemon's settings.
const ADDRESS_KEYS: &[&str] = &[
    "apibaseurl",
    "baseurl",
    "apiurl",
    "endpoint",
    "apiendpoint",
    "host",
];
/// Fragments (after [`normalized`]) that mark a key as holding a secret.
const SECRET_FRAGMENTS: &[&str] = &[
    "token",
    "ticket",
    "password",
    "passwd",
    "secret",
    "apikey",
    "cookie",
    "authorization",
    "credential",
];

/// Lowercase without `_` and `-`: `priceRentFrom`, `price-rent-from` and `price_rent_from` agree.
pub(super) fn normalized(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// The message for a key that would put a secret or an API address into a campaign file.
pub(super) fn forbidden_key_message(key: &str) -> Option<String> {
    let n = normalized(key);
    if ADDRESS_KEYS.contains(&n.as_str()) {
        return Some(format!(
            "`{key}` is not allowed in a campaign file: the API address goes to the daemon's settings (--api-base-url / LINKRUNNER_API_BASE_URL)"
        ));
    }
    SECRET_FRAGMENTS.iter().any(|f| n.contains(f)).then(|| {
        format!(
            "`{key}` is not allowed in a campaign file: secrets go to the daemon's settings (--api-token-file, --auth-ticket-file), never to git"
        )
    })
}

/// The known key closest to `key`, when it is close enough to be a typo of it.
pub(super) fn near_miss(key: &str, known: &[&'static str]) -> Option<&'static str> {
    known
        .iter()
        .map(|k| (strsim::damerau_levenshtein(key, k), *k))
        .filter(|(d, k)| *d > 0 && *d <= if k.len() <= 5 { 1 } else { 2 })
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The message for a key that is not part of the format, with the near miss when there is one.
pub(super) fn unknown_key_message(key: &str, expected: &[&'static str]) -> String {
    if let Some(msg) = forbidden_key_message(key) {
        return msg;
    }
    if let Some(k) = expected.iter().find(|k| normalized(k) == normalized(key)) {
        return format!("unknown key `{key}`: did you mean `{k}`? (keys are snake_case)");
    }
    match near_miss(key, expected) {
        Some(k) => format!("unknown key `{key}`: did you mean `{k}`?"),
        None if expected.is_empty() => format!("unknown key `{key}`"),
        None => format!(
            "unknown key `{key}`; expected one of: {}",
            expected.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_and_snake_case_spellings_normalize_alike() {
        assert_eq!(normalized("priceRentFrom"), normalized("price_rent_from"));
    }

    #[test]
    fn a_typo_of_a_known_key_is_suggested() {
        assert_eq!(near_miss("budjet", &["name", "budget"]), Some("budget"));
    }

    #[test]
    fn an_unrelated_key_gets_no_suggestion() {
        assert_eq!(near_miss("colour", &["name", "budget"]), None);
    }

    #[test]
    fn token_like_keys_are_refused_as_secrets() {
        let msg = forbidden_key_message("AUTH_TICKET").unwrap();
        assert!(msg.contains("secrets go to the daemon's settings"), "{msg}");
    }

    #[test]
    fn api_base_url_is_refused_as_an_address() {
        let msg = forbidden_key_message("api_base_url").unwrap();
        assert!(msg.contains("API address"), "{msg}");
    }
}
