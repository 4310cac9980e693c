-- Honest outcomes (issue 12): a buy round that could buy but bought nothing (or less than it
-- could) for a reason outside the campaign's caps is `stalled`, with a closed reason. One row
-- per campaign, replaced by every pass that reaches the buy-round decision, so `status`,
-- `/api/v1` and the `linkrunner_campaign_stalled` gauge survive restarts; reconciliations
-- that do not buy leave it as it is.
CREATE TABLE campaign_stalls (
    campaign                 TEXT PRIMARY KEY REFERENCES campaigns (name),
    -- NULL: the last buy pass converged. Else no_readable_price, insufficient_balance,
    -- purchase_rejected, search_not_ready or nothing_bought.
    reason                   TEXT,
    detail                   TEXT NOT NULL DEFAULT '',
    -- Buy rounds in a row that ran with room under the caps and bought nothing.
    rounds_without_purchase  BIGINT NOT NULL DEFAULT 0,
    -- When the reason in force was first recorded (kept while the reason stays the same).
    since                    BIGINT NOT NULL,
    updated_at               BIGINT NOT NULL
);
