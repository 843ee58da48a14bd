-- Shared reads of 100 hot rows: every client takes the same few buffer
-- content locks (and buffer mapping partitions) in shared mode.
\set aid random(1, 100)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
