-- The ProcArrayEndTransaction storm: short transactions that take an XID,
-- mixed with read-only ones that take snapshots.
\set aid random(1, 100000 * :scale)
\set kind random(1, 2)
\if :kind = 1
SELECT pg_current_xact_id();
\else
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\endif
