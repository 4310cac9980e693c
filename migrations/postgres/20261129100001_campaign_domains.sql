-- Renames are edits (issue 32): the domain each campaign's project is for, as its file gave it
-- when the campaign was first recorded (`scheme://host[:port]`). A new campaign whose domain
-- folds to the same site as a recorded campaign's (live or removed) is blocked, never given a
-- second project: its file must say `renamed_from`. Filled from the project's creation for
-- campaigns recorded before this column; NULL for an adopted project recorded before it
-- (filled in by the next pass that loads its file).
ALTER TABLE campaigns ADD COLUMN domain TEXT;
UPDATE campaigns SET domain = (
    SELECT (i.request::json)->>'domain' FROM intents i
    WHERE i.campaign = campaigns.name AND i.kind = 'create_project'
    ORDER BY i.id DESC LIMIT 1
);
