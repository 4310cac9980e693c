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

#[test]
fn a_donor_with_two_different_prices_is_skipped_with_its_reason_never_bought_at_either() {
    let mut two = donor_priced(json!(100));
    two["priceRent"] = json!(80);
    let mut agreeing = donor_priced(json!("80.00"));
    agreeing["pageId"] = json!(2);
    agreeing["priceRent"] = json!(80);
    let v = json!({"status": "done", "pages": [two.clone(), agreeing]});

    let out = poll(&v, &FieldMap::default()).unwrap();

    match out.poll {
        SearchPoll::Ready { donors, unpriced } => {
            assert_eq!(donors.iter().map(|d| d.page_id).collect::<Vec<_>>(), [2]);
            assert_eq!(unpriced, 1);
        }
        other => panic!("expected a ready result, got {other:?}"),
    }
    assert_eq!(out.seen.skipped.get(AMBIGUOUS_PRICE), Some(&1));
    // Named by the operator, the mapped field decides alone.
    let mapped = FieldMap::default().with(FieldKey::Price, "priceRent");
    let v = json!({"status": "done", "pages": [two]});
    match poll(&v, &mapped).unwrap().poll {
        SearchPoll::Ready { donors, .. } => assert_eq!(donors[0].price, Money::from_rubles(80)),
        other => panic!("expected a ready result, got {other:?}"),
    }
}
