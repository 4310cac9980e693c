-- The marketplace's own spelling of a respelt URL (issue 32): `Content.addTexts` names a URL
-- by its text, so a text added under the file's new spelling would make a second URL. When a
-- URL is respelt with `url_id`, `url` takes the file's spelling (what `plan` and `status`
-- show) and `market_url` keeps the text the marketplace created or adopted it with, which
-- every call naming the URL by text sends. NULL: the two spellings are the same.
ALTER TABLE urls ADD COLUMN market_url TEXT;
