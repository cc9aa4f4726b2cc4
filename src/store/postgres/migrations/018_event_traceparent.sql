-- 018: the W3C traceparent of the `webhook.receive` span that stored an event (docs/operations.md#traces),
-- the counterpart of SQLite's 011. A delivery attempt, in whatever process claims it, starts its
-- `delivery.attempt` span as a child of it, so one trace runs from the provider's request to the
-- handler's answer. NULL when tracing was off. A nullable column with no default is added without
-- a table rewrite (and to every partition of events). Never edit after it lands.
ALTER TABLE events ADD COLUMN traceparent text;
