-- The owner of a URL id (issue 32): a file that names a `url_id` another campaign, live or
-- removed, records in `urls` is refused at the pass (`store::Campaigns::url_owner`), which
-- looks the id up across every campaign's rows. Not a unique index: a journal written before
-- this check may already hold one id under two campaigns (both adopted it), and a unique
-- violation would fail its upgrade or a pass half-way; the pass refuses the second claim
-- before anything is recorded instead.
CREATE INDEX urls_url_id ON urls (url_id);
