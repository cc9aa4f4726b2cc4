-- 011: the W3C traceparent of the `webhook.receive` span that stored an event (docs/operations.md#traces),
-- the counterpart of PostgreSQL's 018. A delivery attempt, in whatever process claims it, starts
-- its `delivery.attempt` span as a child of it, so one trace runs from the provider's request to
-- the handler's answer. NULL when tracing was off. Trace ids only: never a body or a secret.
-- Never edit after it lands.

ALTER TABLE events ADD COLUMN traceparent TEXT;
