use serde_json::json;

use super::*;
use crate::market::seen::PendingForm;
use linkrunner_domain::money::Money;

fn plain() -> FieldMap {
    FieldMap::default()
}

fn ready(v: &Value, map: &FieldMap) -> (Vec<Donor>, usize) {
    match poll(v, map).unwrap().poll {
        SearchPoll::Ready { donors, unpriced } => (donors, unpriced),
        other => panic!("expected a ready result, got {other:?}"),
    }
}

fn is_pending(v: &Value) -> bool {
    poll(v, &plain()).unwrap().poll == SearchPoll::Pending
}

fn item(price_key: &str) -> Value {
    json!({"pageId": 1, price_key: 120, "searchId": 77, "forceSeoWait": 0,
           "mosSites": "abc", "domain": "x.example"})
}

#[test]
fn job_keeps_meta_data_byte_for_byte() {
    let md = r#"{"sessToken":"s","cgeoip_country_iso_code":"RU"}"#;
    let v = json!({"jobHandleId": "j-1", "message": "Task added to queue", "metaData": md});
    let job = job(&v).unwrap();
    assert_eq!(job.job_handle_id, "j-1");
    assert_eq!(job.meta_data, md);
}

#[test]
fn job_without_meta_data_names_it() {
    let v = json!({"jobHandleId": "j-1"});
    assert_eq!(job(&v), Err(DecodeError::missing("metaData")));
}

#[test]
fn job_whose_meta_data_is_not_a_string_is_missing_it() {
    let v = json!({"jobHandleId": "j-1", "metaData": {"a": 1}});
    assert_eq!(job(&v), Err(DecodeError::missing("metaData")));
}

#[test]
fn default_ready_shape_yields_the_donor_with_its_tech_values() {
    let v = json!({"status": "done", "result": {"pages": [item("price")]}});
    let (donors, unpriced) = ready(&v, &plain());
    assert_eq!(unpriced, 0);
    assert_eq!(donors.len(), 1);
    assert_eq!(donors[0].page_id, 1);
    assert_eq!(donors[0].price, Money::from_rubles(120));
    assert_eq!(donors[0].tech.search_id, json!(77));
    assert_eq!(donors[0].tech.mos_sites, json!("abc"));
}

#[test]
fn donors_nested_in_groups_are_found() {
    let v =
        json!([{"group": "g", "items": [item("price")]}, {"group": "h", "items": [item("price")]}]);
    assert_eq!(ready(&v, &plain()).0.len(), 2);
}

#[test]
fn price_rent_is_a_default_price_name() {
    let v = json!({"status": "done", "pages": [item("priceRent")]});
    assert_eq!(ready(&v, &plain()).0[0].price, Money::from_rubles(120));
}

#[test]
fn an_unknown_price_name_is_unpriced_until_mapped() {
    let v = json!({"status": "done", "pages": [item("costPerMonth")]});
    assert_eq!(ready(&v, &plain()), (vec![], 1));
    let map = plain().with(FieldKey::Price, "costPerMonth");
    assert_eq!(ready(&v, &map).0.len(), 1);
}

#[test]
fn a_donor_without_a_technical_value_is_counted_not_offered() {
    let mut it = item("price");
    it.as_object_mut().unwrap().remove("searchId");
    let out = poll(&json!({"status": "done", "pages": [it]}), &plain()).unwrap();
    assert_eq!(
        out.poll,
        SearchPoll::Ready {
            donors: vec![],
            unpriced: 1
        }
    );
    assert_eq!(
        out.skipped,
        vec![Skipped {
            page_id: Some(1),
            missing: "searchId"
        }]
    );
}

#[test]
fn a_fractional_kopeck_price_is_never_rounded_into_a_donor() {
    let mut it = item("price");
    it["price"] = json!("120.005");
    assert_eq!(
        ready(&json!({"status": "done", "pages": [it]}), &plain()),
        (vec![], 1)
    );
}

#[test]
fn pending_status_values_are_recognised_case_insensitively() {
    for s in [
        "pending",
        "Processing",
        "QUEUED",
        "in-progress",
        "running",
        "not ready",
    ] {
        assert!(is_pending(&json!({"status": s})), "{s}");
    }
    assert!(is_pending(&json!({"state": "wait"})));
}

#[test]
fn ready_false_is_pending_even_with_items() {
    assert!(is_pending(
        &json!({"ready": false, "pages": [item("price")]})
    ));
}

#[test]
fn an_empty_list_is_pending() {
    assert!(is_pending(&json!([])));
    assert!(is_pending(&Value::Null));
}

#[test]
fn a_terminal_status_with_no_donors_is_an_empty_result() {
    let v = json!({"status": "done", "result": {"pages": []}});
    assert_eq!(ready(&v, &plain()), (vec![], 0));
}

#[test]
fn a_failed_status_is_a_rejection() {
    let v = json!({"status": "failed", "message": "bad filter"});
    assert_eq!(
        poll(&v, &plain()),
        Err(DecodeError::Rejected {
            message: "bad filter".into()
        })
    );
}

#[test]
fn is_error_true_is_a_rejection() {
    assert!(matches!(
        poll(&json!({"isError": true}), &plain()),
        Err(DecodeError::Rejected { .. })
    ));
}

#[test]
fn donor_status_fields_do_not_make_the_result_pending() {
    let mut it = item("price");
    it["status"] = json!("pending");
    assert_eq!(ready(&json!({"pages": [it]}), &plain()).0.len(), 1);
}

#[test]
fn is_error_saying_not_found_or_not_finished_is_not_found_not_a_rejection() {
    for m in [
        "job not found or not finished",
        "Result NOT READY",
        "Задача не найдена",
    ] {
        let out = poll(&json!({"isError": true, "message": m}), &plain()).unwrap();
        assert_eq!(out.poll, SearchPoll::NotFound { message: m.into() });
        assert_eq!(
            out.seen.pending,
            Some(PendingForm::NotFound {
                status: None,
                message: m.into()
            })
        );
    }
}

#[test]
fn is_error_with_another_message_stays_a_rejection() {
    assert_eq!(
        poll(
            &json!({"isError": true, "message": "bad metaData"}),
            &plain()
        ),
        Err(DecodeError::Rejected {
            message: "bad metaData".into()
        })
    );
}

#[test]
fn a_mapped_price_path_reads_nested_prices_and_is_reported_as_seen() {
    let mut it = item("x");
    it.as_object_mut().unwrap().remove("x");
    it["prices"] = json!({"rent": "99.90"});
    let v = json!({"status": "done", "result": {"pages": [it]}});
    let unmapped = poll(&v, &plain()).unwrap();
    assert_eq!(unmapped.seen.skipped.get("price"), Some(&1));
    let map = plain().with(FieldKey::Price, "prices.rent");
    let out = poll(&v, &map).unwrap();
    assert_eq!(ready(&v, &map).0[0].price, Money::from_kopecks(9_990));
    assert_eq!(out.seen.price_fields, vec!["prices.rent".to_string()]);
    assert_eq!(out.seen.donors_at.as_deref(), Some("result.pages[]"));
}

#[test]
fn the_pending_form_is_reported() {
    let form = |v: Value| poll(&v, &plain()).unwrap().seen.pending;
    assert_eq!(
        form(json!({"status": "Processing"})),
        Some(PendingForm::StatusField {
            name: "status".into(),
            value: "Processing".into()
        })
    );
    assert_eq!(
        form(json!({"ready": false})),
        Some(PendingForm::NotReadyFlag {
            name: "ready".into()
        })
    );
    assert_eq!(form(json!([])), Some(PendingForm::NoDonors));
    assert_eq!(
        form(json!({"status": "done", "pages": [item("price")]})),
        None
    );
}
