//! `campaign/`: the YAML model, parsing with positions, semantic validation, JSON Schema,
//! loading a directory. Knows nothing about HTTP or SQL.

pub mod cli;
