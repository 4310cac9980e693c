-- The marketplace shows only part of the truth (issue 11): link lists that page or lag,
-- autobuyers that buy by themselves, links that leave the list.

-- A purchase that was ever uncertain is never bought again automatically for that URL:
-- re-arming its natural key needs an operator's word (`linkrunner resolve --allow-rebuy`).
ALTER TABLE intents ADD COLUMN rebuy_blocked BIGINT NOT NULL DEFAULT 0;
UPDATE intents SET rebuy_blocked = 1 WHERE kind = 'purchase' AND state = 'uncertain';
UPDATE intents SET rebuy_blocked = 1
    WHERE kind = 'purchase' AND state = 'failed' AND error LIKE 'not in the project''s link list%';

-- Links leave the list (removed, rejected): their rent is released after the settle grace,
-- with the reason kept here and in the ledger.
ALTER TABLE held_links ADD COLUMN status TEXT;
ALTER TABLE held_links ADD COLUMN leaving_since BIGINT;
ALTER TABLE held_links ADD COLUMN released_at BIGINT;
ALTER TABLE held_links ADD COLUMN released_why TEXT;

-- Every link the project holds counts once, whoever bought it. `autobuyer` names the
-- autobuyer a link is attributed to (its rent is then inside that autobuyer's part);
-- `counted` is what the link itself adds to the commitment. Rows recorded before this
-- migration were never counted: `adopted = 0` makes the next link sync count them.
ALTER TABLE foreign_links ADD COLUMN autobuyer TEXT;
ALTER TABLE foreign_links ADD COLUMN counted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE foreign_links ADD COLUMN adopted BIGINT NOT NULL DEFAULT 0;
-- 1 when the list gave no price and `price` is the campaign's max_link_price, an estimate.
ALTER TABLE foreign_links ADD COLUMN price_estimated BIGINT NOT NULL DEFAULT 0;
ALTER TABLE foreign_links ADD COLUMN leaving_since BIGINT;
ALTER TABLE foreign_links ADD COLUMN released_at BIGINT;
ALTER TABLE foreign_links ADD COLUMN released_why TEXT;

-- `running` now means "counts as running for money": true until a confirmed stop is settled.
-- `switch_state` is what the marketplace last confirmed (running, stopped, unknown);
-- `stopped_at` when a stop was confirmed (its budget is settled after the settle grace).
ALTER TABLE autobuyers ADD COLUMN switch_state TEXT NOT NULL DEFAULT 'unknown';
ALTER TABLE autobuyers ADD COLUMN stopped_at BIGINT;
UPDATE autobuyers SET switch_state = 'stopped' WHERE running = 0;

-- The smallest length at which the project's link list was seen cut (a known link missing
-- from a list that showed no sign of paging): lists that long or longer prove no absence.
ALTER TABLE projects ADD COLUMN list_cut_at BIGINT;
