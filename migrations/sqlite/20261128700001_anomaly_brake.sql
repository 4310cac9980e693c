-- The anomaly brake (issue 33) reads what was committed and what appeared in the last hour
-- and day on every check: by time, not by scanning the whole ledger and every link. (The
-- ledger's own index by time, `ledger_at`, comes with 20261128500001_ledger_at.)
CREATE INDEX held_links_bought_at ON held_links (bought_at);
CREATE INDEX foreign_links_first_seen_at ON foreign_links (first_seen_at);
