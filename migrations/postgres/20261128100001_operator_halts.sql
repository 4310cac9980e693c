-- An operator's halt (issue 33): `linkrunner halt` stops all spending until
-- `linkrunner resume`. A table of its own, not a row of `halts`: the code that lifts the
-- automatic halts (credentials accepted again, `resolve`) only ever deletes from `halts`,
-- so nothing but `resume` can lift this one. `scope` is `*` (every campaign), as in `halts`.
CREATE TABLE operator_halts (
    scope      TEXT PRIMARY KEY,
    reason     TEXT NOT NULL,
    halted_by  TEXT NOT NULL,
    since      BIGINT NOT NULL
);

-- Every halt and resume, kept: who pressed it, when and why, after it was lifted.
CREATE TABLE operator_halt_events (
    id      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    action  TEXT NOT NULL CHECK (action IN ('halt', 'resume')),
    scope   TEXT NOT NULL,
    actor   TEXT NOT NULL,
    reason  TEXT NOT NULL,
    at      BIGINT NOT NULL
);
