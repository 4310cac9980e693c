use serde_json::json;

use super::*;

fn donor_priced(price: Value) -> Value {
    json!({"pageId": 1, "price": price, "searchId": 77, "forceSeoWait": 0, "mosSites": "abc"})
}

fn offered_and_unpriced(items: Vec<Value>) -> (Vec<i64>, usize) {
    let v = json!({"status": "done", "pages": items});
    match poll(&v, &FieldMap::default()).unwrap().poll {
        SearchPoll::Ready { donors, unpriced } => {
            (donors.iter().map(|d| d.page_id).collect(), unpriced)
        }
        other => panic!("expected a ready result, got {other:?}"),
    }
}

#[test]
fn a_donor_priced_at_zero_is_counted_as_unpriced_and_never_offered() {
    let out = offered_and_unpriced(vec![
        donor_priced(json!(0)),
        donor_priced(json!("0.00")),
        donor_priced(json!(-5)),
    ]);
    assert_eq!(out, (vec![], 3));
}

#[test]
fn a_donor_priced_at_one_kopeck_is_offered() {
    assert_eq!(
        offered_and_unpriced(vec![donor_priced(json!(0.01))]),
        (vec![1], 0)
    );
}
