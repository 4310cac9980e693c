-- A campaign's record reads its live intents and its autobuyer switches in every state
-- (issue 13). Live intents come from `intents_campaign_state`; this index serves the failed
-- switches without reading the campaign's other failed intents, of which a long-running
-- campaign may hold millions.
CREATE INDEX intents_campaign_kind_state ON intents (campaign, kind, state);
