//! Operation names of the marketplace, used in errors, logs and the `operation` metrics label
//! (a closed set).

pub const CREATE_PROJECT: &str = "Project.addSimpleProjectAndContent";
pub const ADD_TEXTS: &str = "Content.addTexts";
pub const SEARCH: &str = "SearchRent.searchRentTree";
pub const SEARCH_RESULT: &str = "SearchRent.searchRentTreeResult";
pub const BUY: &str = "Placement.createPlacementsRent";
pub const LIST_LINKS: &str = "Placement.getProjectPlacementsLinks";
pub const CREATE_FILTER: &str = "SearchFilter.addSearchFilter";
pub const CREATE_AUTOBUYER: &str = "Autobuyer.createAutobuyerRent";
pub const STOP_AUTOBUYERS: &str = "Autobuyer.stopAutobuyers";
pub const START_AUTOBUYERS: &str = "Autobuyer.startAutobuyers";
/// The built-in login (`POST /login`, `GET /auth`): named in a halt when it is refused.
/// Not one of the ten operations, so not in [`ALL`].
pub const LOGIN: &str = "login";
pub const ALL: [&str; 10] = [
    CREATE_PROJECT,
    ADD_TEXTS,
    SEARCH,
    SEARCH_RESULT,
    BUY,
    LIST_LINKS,
    CREATE_FILTER,
    CREATE_AUTOBUYER,
    STOP_AUTOBUYERS,
    START_AUTOBUYERS,
];
