-- The credentials halt is per marketplace account (issue 34): a 401 on one account stops that
-- account's campaigns only, under the scope `@ID`. A journal written before accounts may hold
-- the automatic credentials halt under `*` (every campaign): it was the one account's, which is
-- now the default account, so it moves to `@default` — lifted by a working read of the default
-- account and by no other account's. `halts` holds only automatic halts (an operator's `*` is
-- in `operator_halts` and stays every account's). When `@default` is already set, the `*` row
-- is a duplicate of it and goes.
UPDATE halts
SET scope = '@default'
WHERE scope = '*'
  AND NOT EXISTS (SELECT 1 FROM halts AS d WHERE d.scope = '@default');
DELETE FROM halts WHERE scope = '*';
