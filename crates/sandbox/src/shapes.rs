//! Answer shapes. The published spec leaves nesting, pending behaviour, several field names
//! and the error style unstated, so the sandbox can answer in each plausible variant and the
//! client's tolerance gets tested against all of them. Parsed from `key=value,...` for the CLI.

use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Declares a closed set of variants with their CLI names.
macro_rules! variants {
    ($name:ident { $($variant:ident = $text:literal),+ $(,)? }) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
        pub enum $name {
            #[default]
            $(#[serde(rename = $text)] $variant),+
        }
        impl $name {
            /// Every variant, the default first.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The variant as written in `--shape`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }
        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(format!("`{s}` is not one of: {}", [$($text),+].join(", "))),
                }
            }
        }
    };
}

variants!(Nesting { Pages = "pages", Grouped = "grouped" });
variants!(Pending {
    StatusField = "status_field",
    Http202 = "http202",
    EmptyList = "empty_list",
    Http404 = "http404",
});
variants!(PriceField {
    Price = "price",
    PriceRent = "priceRent",
    RentPrice = "rentPrice",
    Nested = "nested",
    Unknown = "unknown",
});
variants!(CreateIds { Id = "id", Named = "named" });
variants!(BuyAnswer { PlacementIds = "placement_ids", ResultIds = "result_ids" });
variants!(LinkList { Links = "links", DataItems = "data_items" });
variants!(TextsAnswer {
    Nested = "nested",
    Flat = "flat",
    NestedObjects = "nested_objects",
});
variants!(ErrorStyle { IsError = "is_error", Http = "http" });

/// Every shape knob; the default is the first variant of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Shape {
    /// `pages`: `{"status":"done","result":{"pages":[...]}}`; `grouped`: `[{"group","items"}]`.
    pub results: Nesting,
    pub pending: Pending,
    /// Name of the donor price field.
    pub price: PriceField,
    /// Filter and autobuyer create answers: `id`, or `searchFilterId` / `autobuyerId`.
    pub ids: CreateIds,
    pub buy: BuyAnswer,
    pub links: LinkList,
    pub texts: TextsAnswer,
    pub errors: ErrorStyle,
}

impl FromStr for Shape {
    type Err = String;

    /// `results=grouped,pending=http202,price=rentPrice,ids=named,buy=result_ids,
    /// links=data_items,texts=flat,errors=http`; omitted keys keep their defaults.
    fn from_str(s: &str) -> Result<Self, String> {
        let mut shape = Shape::default();
        for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}` is not key=value"))?;
            let bad = |e: String| format!("shape {key}: {e}");
            match key.trim() {
                "results" => shape.results = value.parse().map_err(bad)?,
                "pending" => shape.pending = value.parse().map_err(bad)?,
                "price" => shape.price = value.parse().map_err(bad)?,
                "ids" => shape.ids = value.parse().map_err(bad)?,
                "buy" => shape.buy = value.parse().map_err(bad)?,
                "links" => shape.links = value.parse().map_err(bad)?,
                "texts" => shape.texts = value.parse().map_err(bad)?,
                "errors" => shape.errors = value.parse().map_err(bad)?,
                other => {
                    return Err(format!(
                        "unknown shape key `{other}` (results, pending, price, ids, buy, links, texts, errors)"
                    ));
                }
            }
        }
        Ok(shape)
    }
}

impl Shape {
    /// Every shape key with every value it takes, as written in `--shape` (the default
    /// first): what a test needs to cover combinations of shapes.
    pub fn dimensions() -> Vec<(&'static str, Vec<&'static str>)> {
        fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
            all.iter().map(|v| name(*v)).collect()
        }
        vec![
            ("results", names(Nesting::ALL, Nesting::as_str)),
            ("pending", names(Pending::ALL, Pending::as_str)),
            ("price", names(PriceField::ALL, PriceField::as_str)),
            ("ids", names(CreateIds::ALL, CreateIds::as_str)),
            ("buy", names(BuyAnswer::ALL, BuyAnswer::as_str)),
            ("links", names(LinkList::ALL, LinkList::as_str)),
            ("texts", names(TextsAnswer::ALL, TextsAnswer::as_str)),
            ("errors", names(ErrorStyle::ALL, ErrorStyle::as_str)),
        ]
    }
}

impl PriceField {
    /// Where the donor price is: a field name, or for `nested` the dotted path
    /// `prices.rent` (what `--field-map price=…` must name). `unknown` keeps it under
    /// `costPerMonth`, a key the client does not know: a marketplace whose price field
    /// nobody told linkrunner about.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PriceField::Price => "price",
            PriceField::PriceRent => "priceRent",
            PriceField::RentPrice => "rentPrice",
            PriceField::Nested => "prices.rent",
            PriceField::Unknown => "costPerMonth",
        }
    }

    /// Puts `price` into a donor item where this shape keeps it.
    pub(crate) fn put(self, item: &mut serde_json::Value, price: serde_json::Value) {
        match self {
            PriceField::Nested => item["prices"] = serde_json::json!({ "rent": price }),
            other => item[other.name()] = price,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_text_sets_only_the_named_knobs() {
        let shape: Shape = "results=grouped, price=rentPrice".parse().unwrap();
        assert_eq!(shape.results, Nesting::Grouped);
        assert_eq!(shape.price, PriceField::RentPrice);
        assert_eq!(shape.pending, Pending::StatusField);
    }

    #[test]
    fn every_value_of_every_dimension_parses_and_only_the_first_is_the_default() {
        let mut seen = vec![Shape::default()];
        for (key, values) in Shape::dimensions() {
            for (i, value) in values.iter().enumerate() {
                let text = format!("{key}={value}");
                let shape: Shape = text.parse().unwrap();
                assert_eq!(shape == Shape::default(), i == 0, "{text}");
                if i > 0 {
                    assert!(!seen.contains(&shape), "{text} is not a shape of its own");
                    seen.push(shape);
                }
            }
        }
    }

    #[test]
    fn unknown_shape_keys_and_values_are_refused() {
        assert!("nesting=grouped".parse::<Shape>().is_err());
        assert!("pending=later".parse::<Shape>().is_err());
    }
}
