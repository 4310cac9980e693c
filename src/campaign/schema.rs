//! The JSON Schema (draft-07) of a campaign file, for editors and CI. Generated from the raw
//! model so it cannot drift from what the parser accepts; `schema/campaign.schema.json` is
//! a committed copy that a test keeps equal to [`schema_json`].

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::raw::{RawCampaign, RawFilter, RawSearch};
use linkrunner_domain::money::Money;

/// The schema as pretty-printed JSON with a trailing newline, exactly as committed.
pub fn schema_json() -> String {
    let generator = SchemaSettings::draft07().into_generator();
    let schema = generator.into_root_schema_for::<RawCampaign>();
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Values a pass-through parameter may take: a scalar or a list of scalars.
fn pass_through() -> Schema {
    json_schema!({
        "anyOf": [
            { "type": ["string", "number", "boolean"] },
            { "type": "array", "maxItems": 100, "items": { "type": ["string", "number", "boolean"] } }
        ]
    })
}

impl JsonSchema for RawSearch {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Search".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let rubles = g.subschema_for::<Money>();
        json_schema!({
            "description": "Donor search parameters. `price_rent_from` / `price_rent_to` are rubles; other keys are passed to the marketplace as written.",
            "type": "object",
            "maxProperties": 50,
            "properties": { "price_rent_from": rubles, "price_rent_to": rubles },
            "additionalProperties": pass_through()
        })
    }
}

impl JsonSchema for RawFilter {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Filter".into()
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        let rubles = g.subschema_for::<Money>();
        json_schema!({
            "description": "A named search filter. Price bounds are rubles; other keys are passed to the marketplace as written.",
            "type": "object",
            "required": ["name"],
            "maxProperties": 50,
            "properties": {
                "name": { "type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$" },
                "price_article_from": rubles, "price_article_to": rubles,
                "price_rent_from": rubles, "price_rent_to": rubles
            },
            "additionalProperties": pass_through()
        })
    }
}
