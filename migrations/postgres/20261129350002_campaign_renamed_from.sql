-- The name a campaign was renamed from (issue 32), written by the rename's transaction. A
-- replica whose campaign files predate the rename (it still loads OLD's file, not the new
-- one) holds the new name as recorded instead of removing it: nothing is stopped because one
-- replica reloaded before another. NULL for a campaign never renamed.
ALTER TABLE campaigns ADD COLUMN renamed_from TEXT;
