-- Performance (issue 13), nothing changes in what is stored. A campaign's autobuyer switches
-- (one kind, every state) and its blocked purchases (failed purchases with rebuy_blocked)
-- were found through (campaign, state) or (campaign) alone, so each read went through the
-- campaign's whole history: 10,000 rows for a campaign with 10,000 failed purchases, read
-- before its first call after every start. This index finds only the rows asked for.
CREATE INDEX intents_campaign_kind ON intents (campaign, kind, state, rebuy_blocked);
