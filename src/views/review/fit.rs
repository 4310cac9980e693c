//! Fitting a comment's campaign sections into its size limit: every section in detail when
//! they fit; otherwise one line per campaign (a table, in the order given: the caller puts the
//! largest money change first), then the details of the first ones while they still fit. A
//! bulk edit of thousands of campaigns still ends in a bounded comment that says how many
//! lines it left out.

/// One campaign as a table row and as a detailed section.
pub(super) struct Item {
    /// A markdown table row, `| … |`, no newline.
    pub(crate) line: String,
    /// The detailed section, ending in a blank line.
    pub(crate) detail: String,
}

/// Whether every item's detail fits in `budget` bytes.
pub(super) fn fits_in_detail<'a>(items: impl IntoIterator<Item = &'a Item>, budget: usize) -> bool {
    items.into_iter().map(|i| i.detail.len()).sum::<usize>() <= budget
}

/// The items within `budget` bytes; `header` is the table's header and separator rows.
pub(super) fn render(items: &[Item], header: &str, budget: usize) -> String {
    if fits_in_detail(items, budget) {
        return items.iter().map(|i| i.detail.as_str()).collect();
    }
    // At most half the budget for the one-line table, the rest for details of the largest.
    let mut o = format!(
        "**{} campaign(s) are too many to show in detail here: one line each, the largest money \
         change first; details below for the first ones that fit.**\n\n{header}\n",
        items.len()
    );
    let table_budget = budget / 2;
    let mut shown = 0;
    for i in items {
        if o.len() + i.line.len() + 1 > table_budget {
            break;
        }
        o.push_str(&i.line);
        o.push('\n');
        shown += 1;
    }
    if shown < items.len() {
        o.push_str(&format!(
            "\n… and {} more campaign(s): run `linkrunner plan` for every line.\n",
            items.len() - shown
        ));
    }
    o.push('\n');
    for i in items {
        if o.len() + i.detail.len() > budget {
            break;
        }
        o.push_str(&i.detail);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize, detail: usize) -> Vec<Item> {
        (0..n)
            .map(|k| Item {
                line: format!("| c{k} | x |"),
                detail: format!("### c{k}\n{}\n\n", "d".repeat(detail)),
            })
            .collect()
    }

    #[test]
    fn sections_that_fit_are_all_in_detail() {
        let out = render(&items(3, 10), "| h |\n|---|", 1_000);
        assert_eq!(out.matches("### c").count(), 3);
        assert!(!out.contains("| c0 |"));
    }

    #[test]
    fn too_many_sections_become_lines_with_details_for_the_first_and_stay_in_budget() {
        let out = render(&items(10_000, 500), "| h |\n|---|", 50_000);
        assert!(out.len() <= 50_000, "{}", out.len());
        assert!(
            out.contains("| c0 |") && out.contains("### c0\n"),
            "the largest is in detail"
        );
        assert!(!out.contains("### c9999"), "the smallest is not");
        assert!(out.contains("more campaign(s)"), "the cut is said");
    }
}
