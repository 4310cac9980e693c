-- The link list's lag behind purchases (issue 32): how long after its purchase a read of the
-- project's link list first showed each link linkrunner bought (ms), written once, at that
-- read. Measured at the reads, so an upper bound (it includes the wait until the read); `plan`
-- shows the largest of a campaign's recent ones where buy rounds and a running autobuyer share a
-- URL. NULL for links not yet shown, bought before this column, or adopted from the list.
ALTER TABLE held_links ADD COLUMN listed_after_ms BIGINT;
