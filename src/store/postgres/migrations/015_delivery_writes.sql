-- 015: fewer writes per forwarded event on attempts (issue 24, "fewer writes per event on the
-- hot tables"). Never edit after it lands.
--
-- An attempt row is inserted by the claim and updated once, by the statement that ends it (which
-- now also stores the destination's answer). That update changes no indexed column, so it can be
-- a HOT update (no new index entries) when the row's page has room for the new version: keep 40%
-- of each page free for it. Only pages written from now on are filled to 60%; existing ones keep
-- their packing (no table rewrite, no lock held beyond the ALTER's brief one).
ALTER TABLE attempts SET (fillfactor = 60);

-- The attempts → deliveries foreign key costs a lookup of the delivery (its primary key, with a
-- KEY SHARE lock) for every attempt inserted, and a probe of attempts for every delivery deleted.
-- Integrity holds by construction instead: an attempt is inserted only by the claim, in the same
-- statement that leases its delivery (INSERT … SELECT FROM the UPDATE's RETURNING), so its delivery
-- exists; attempts are deleted before their deliveries (retention) or with their unclaimed
-- attempt (leases.ts, the same statement); nothing deletes a delivery alone.
ALTER TABLE attempts DROP CONSTRAINT attempts_delivery_id_fkey;
