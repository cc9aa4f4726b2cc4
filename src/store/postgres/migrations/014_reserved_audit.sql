-- 014: RESERVED for the audit helper's migration (issue 24). This empty placeholder only keeps
-- the gap check (src/store/core/migrations.ts) passing on branch wt-pgq, whose migration is 015.
-- DROP THIS FILE AT MERGE: the audit branch's 014 takes its number.
SELECT 1;
