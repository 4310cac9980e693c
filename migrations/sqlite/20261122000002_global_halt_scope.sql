-- The halt that stops every campaign (credentials rejected) was stored under the scope
-- `global`, a name a campaign may also have. It is now `*`, which no campaign name can be
-- (names are [a-z0-9][a-z0-9-]*). Only the credentials halt is moved: a campaign named
-- `global` keeps its own halts.
UPDATE halts
SET scope = '*'
WHERE scope = 'global'
  AND reason LIKE 'credentials rejected%';
