//! The notifications' series (issue 33): messages delivered and not delivered, by event kind
//! and body format — closed sets ([`NOTIFY_EVENTS`], [`NOTIFY_FORMATS`]); never an address
//! or an endpoint's name.

use prometheus::{IntCounterVec, Registry};

use super::counter_vec;

/// `event` label values: the notifier's event kinds (`notify::events::EventKind`).
pub(crate) const NOTIFY_EVENTS: [&str; 9] = [
    "halted",
    "waiting_for_operator",
    "stalled",
    "cap_reached",
    "uncertain",
    "links_lost",
    "removals_held",
    "page_held_twice",
    "other",
];
/// `format` label values: the notify file's body formats.
pub(crate) const NOTIFY_FORMATS: [&str; 3] = ["generic", "slack", "telegram"];

#[derive(Clone)]
pub(crate) struct NotifyMetrics {
    /// Messages a receiver accepted (2xx).
    pub(crate) sent_total: IntCounterVec,
    /// Messages given up: every try failed, or the endpoint's queue was full.
    pub(crate) failed_total: IntCounterVec,
}

impl NotifyMetrics {
    pub(super) fn register(r: &Registry) -> NotifyMetrics {
        let m = NotifyMetrics {
            sent_total: counter_vec(
                r,
                "linkrunner_notifications_sent_total",
                "Notifications a receiver accepted, by event kind and body format.",
                &["event", "format"],
            ),
            failed_total: counter_vec(
                r,
                "linkrunner_notifications_failed_total",
                "Notifications given up after every try failed or dropped because the endpoint's queue was full, by event kind and body format.",
                &["event", "format"],
            ),
        };
        for e in NOTIFY_EVENTS {
            for f in NOTIFY_FORMATS {
                m.sent_total.with_label_values(&[e, f]).inc_by(0);
                m.failed_total.with_label_values(&[e, f]).inc_by(0);
            }
        }
        m
    }
}
