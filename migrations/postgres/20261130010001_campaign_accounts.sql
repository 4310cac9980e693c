-- The marketplace account a campaign spends in (issue 34): `default` for every campaign of a
-- deployment of one account, and for every campaign recorded before accounts existed. Written
-- when the campaign is first recorded; a campaign that holds a project never changes it (the
-- pass refuses a file that moves it to another account).
ALTER TABLE campaigns ADD COLUMN account TEXT NOT NULL DEFAULT 'default';
