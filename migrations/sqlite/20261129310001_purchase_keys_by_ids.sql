-- Money follows the marketplace's ids (issue 32): a purchase's natural key names the URL id
-- and the donor page id, `purchase:url:URL_ID:page:PAGE_ID` (`decide::keys::purchase`), no
-- longer the campaign's name and the URL's text (`purchase:CAMPAIGN:PAGE:URL`), so a page
-- bought before a rename or a respelling is refused by the unique key itself, under any name
-- and any spelling. Existing purchases are re-keyed here, so the journal keeps refusing the
-- pages it holds.
--
-- The ids come from the intent's request (every purchase linkrunner recorded carries
-- `url_id` and `page_id` there), else from the link it bought (`held_links`).
--
-- Two rows that name the same URL id and page (possible only where an older linkrunner bought
-- a page twice for one URL, e.g. a URL respelt before respellings kept their identity): one
-- takes the new key, the one that can never be started again under it (not `failed`, or a
-- failed purchase that was ever uncertain), else the oldest; the others keep their old key,
-- which nothing makes any more: they stay in the journal as history and in the money as
-- before. A row whose ids cannot be found (not written by linkrunner's buy round: a
-- hand-written row) keeps its key as it is, for the same reason: nothing can name it by ids,
-- and a rename no longer re-keys purchases, so such a row keeps its old campaign name in it.
WITH found AS (
    SELECT i.id, i.state, i.rebuy_blocked,
        COALESCE(
            CASE WHEN json_valid(i.request) AND json_type(i.request, '$.url_id') = 'integer'
                THEN json_extract(i.request, '$.url_id') END,
            h.url_id) AS url_id,
        COALESCE(
            CASE WHEN json_valid(i.request) AND json_type(i.request, '$.page_id') = 'integer'
                THEN json_extract(i.request, '$.page_id') END,
            h.page_id) AS page_id
    FROM intents i LEFT JOIN held_links h ON h.intent_id = i.id
    WHERE i.kind = 'purchase'
),
keyed AS (
    SELECT id, 'purchase:url:' || url_id || ':page:' || page_id AS key,
        ROW_NUMBER() OVER (
            PARTITION BY url_id, page_id
            ORDER BY (state = 'failed' AND rebuy_blocked = 0), id
        ) AS nth
    FROM found
    WHERE url_id IS NOT NULL AND page_id IS NOT NULL
)
UPDATE intents SET natural_key = keyed.key
FROM keyed
WHERE intents.id = keyed.id AND keyed.nth = 1
    AND NOT EXISTS (SELECT 1 FROM intents o WHERE o.natural_key = keyed.key AND o.id <> keyed.id);
