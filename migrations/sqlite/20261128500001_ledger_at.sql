-- The ledger by time (issue 33): the status page reads the current month's movements on every
-- view (its picture of the month, summed per campaign and day) and `report --month` reads a
-- month's; without this index each read scans the whole ledger, every month since the first.
CREATE INDEX ledger_at ON ledger (at);
