//! The HTTP side's own series: connections held per listener, connections refused at the
//! cap, and requests refused by the Host allow-list or the access token. Labels are closed
//! sets ([`LISTENERS`], [`REFUSALS`]).

use prometheus::{IntCounterVec, IntGaugeVec, Registry};

use super::{counter_vec_of, gauge_vec};

/// `listener` label values: the main port and the probe port.
pub(crate) const LISTENERS: [&str; 2] = ["main", "probe"];
/// `reason` label values of `linkrunner_http_requests_refused_total`.
pub(crate) const REFUSALS: [&str; 2] = ["host", "token"];

#[derive(Clone)]
pub(crate) struct HttpMetrics {
    /// Connections open now, by listener.
    pub(crate) connections: IntGaugeVec,
    /// Connections closed at once because the listener's cap was reached.
    pub(crate) connections_refused_total: IntCounterVec,
    /// Requests answered 403 (Host not allowed) or 401 (no or wrong token).
    pub(crate) requests_refused_total: IntCounterVec,
}

impl HttpMetrics {
    pub(super) fn register(r: &Registry) -> HttpMetrics {
        let m = HttpMetrics {
            connections: gauge_vec(
                r,
                "linkrunner_http_connections",
                "HTTP connections open, by listener (main, probe).",
                &["listener"],
            ),
            connections_refused_total: counter_vec_of(
                r,
                "linkrunner_http_connections_refused_total",
                "HTTP connections closed unanswered because the listener held its maximum, by listener.",
                "listener",
                &LISTENERS,
            ),
            requests_refused_total: counter_vec_of(
                r,
                "linkrunner_http_requests_refused_total",
                "HTTP requests refused, by reason: host (not on the allow-list, 403), token (missing or wrong, 401).",
                "reason",
                &REFUSALS,
            ),
        };
        for l in LISTENERS {
            m.connections.with_label_values(&[l]).set(0);
        }
        m
    }
}
