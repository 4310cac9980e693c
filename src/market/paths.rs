//! Operation paths exactly as the spec writes them, with every caller-supplied segment
//! percent-encoded so that no value can change the path's shape.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986 unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A segment value that cannot be carried in a path (see [`segment`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BadSegment(pub(crate) &'static str);

/// Percent-encodes one path segment. `.`, `..` and the empty string are refused: URL
/// parsers resolve dot segments (encoded or not) and an empty segment changes the route.
pub(crate) fn segment(value: &str) -> Result<String, BadSegment> {
    match value {
        "" => Err(BadSegment("it is empty")),
        "." | ".." => Err(BadSegment("a dot segment would be resolved away")),
        _ => Ok(utf8_percent_encode(value, SEGMENT).to_string()),
    }
}

pub(crate) fn create_project() -> String {
    "/rest/Project/addSimpleProjectAndContent".into()
}

pub(crate) fn add_texts(project_id: i64) -> String {
    format!("/rest/Content/add/texts/projectId/{project_id}")
}

pub(crate) fn search(url_id: i64) -> String {
    format!("/rest/SearchRent/rent/tree/urlId/{url_id}")
}

pub(crate) fn search_result(job_handle_id: &str, meta_data: &str) -> Result<String, BadSegment> {
    Ok(format!(
        "/rest/SearchRent/rent/tree/getResult/jobHandleId/{}/rentSearchMetaData/{}",
        segment(job_handle_id)?,
        segment(meta_data)?
    ))
}

pub(crate) fn buy(project_id: i64) -> String {
    format!("/rest/Placement/rent/create/projectId/{project_id}")
}

pub(crate) fn list_links(project_id: i64) -> String {
    format!("/rest/Project/placements/links?projectId={project_id}")
}

pub(crate) fn create_filter() -> String {
    "/rest/SearchFilter".into()
}

pub(crate) fn create_autobuyer(project_id: i64) -> String {
    format!("/rest/Autobuyer/rent/create/projectId/{project_id}")
}

pub(crate) fn stop_autobuyers() -> String {
    "/rest/Autobuyer/stop".into()
}

pub(crate) fn start_autobuyers() -> String {
    "/rest/Autobuyer/start".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_data_is_encoded_except_unreserved_characters() {
        let md = r#"{"sessToken":"a/b+c","x":"~._-"}"#;
        assert_eq!(
            segment(md).unwrap(),
            "%7B%22sessToken%22%3A%22a%2Fb%2Bc%22%2C%22x%22%3A%22~._-%22%7D"
        );
    }

    #[test]
    fn hostile_job_ids_cannot_break_the_path() {
        let path = search_result("../x?y#z", "{}").unwrap();
        assert_eq!(
            path,
            "/rest/SearchRent/rent/tree/getResult/jobHandleId/..%2Fx%3Fy%23z/rentSearchMetaData/%7B%7D"
        );
    }

    #[test]
    fn dot_and_empty_segments_are_refused() {
        for bad in ["", ".", ".."] {
            assert!(segment(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn non_ascii_is_encoded_as_utf8() {
        assert_eq!(segment("ё").unwrap(), "%D1%91");
    }
}
