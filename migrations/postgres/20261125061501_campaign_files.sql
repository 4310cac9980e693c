-- Issue 25: each campaign's file, absolute (symlinks not resolved), as the last pass that
-- loaded it found it. A file that exists but fails validation holds the campaign recorded
-- from its path (nothing stopped, nothing bought) even when it is too broken to show its
-- `name`; only a file that is really gone removes its campaign. NULL: recorded before this
-- column, filled in by the next pass that loads the campaign.
ALTER TABLE campaigns ADD COLUMN file TEXT;
