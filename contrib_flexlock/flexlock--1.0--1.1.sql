/* contrib_flexlock/flexlock--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.1'" to load this file. \quit

--
-- flexlock_report(transactions, top): the lock profile of what ran since
-- the last flexlock_reset() (or since the server started), one row per
-- finding, in sections:
--
--   run          the time since the reset and, if given, the transactions
--   variant      the lock variants not at their stock setting
--   lwlock wait  LWLock sleeps: all tranches, then the top tranches by
--                time slept, with each mode's sleeps and 99th percentile
--   lwlock hold  sampled hold times (lock_stats_hold_sample), the top
--                tranches and modes by time held: acquisitions, hold time
--                per transaction, average hold, the share of the time the
--                lock was held (a tranche of one lock) and the throughput
--                its exclusive holds cap (flexlock_lock_caps; caps of 10
--                million transactions per second and more are left out)
--   hwlock       heavyweight lock acquisitions by how they were granted,
--                then the top lock types and modes by time waited
--   spinlock     contended spinlock acquisitions, with the top call sites
--   counter      the non-zero counters of the families of the variants in
--                use (none at stock settings)
--
-- events counts what the item says (sleeps, acquisitions, waits...);
-- time_ms is the total time of it; per_txn, us_per_txn divide by
-- transactions (NULL without it); avg_us is per event.  Figures are
-- rounded to three significant digits.  A section with nothing to show
-- has one row saying so.  make pgbench passes pgbench's transaction count.
--
CREATE FUNCTION flexlock_report(
    transactions int8 DEFAULT NULL,
    top int4 DEFAULT 5,
    OUT section text,
    OUT item text,
    OUT events int8,
    OUT per_txn numeric,
    OUT time_ms numeric,
    OUT us_per_txn numeric,
    OUT avg_us numeric,
    OUT detail text)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE PARALLEL SAFE
AS $$
#variable_conflict use_column
BEGIN
  IF flexlock_report.transactions <= 0 THEN
    RAISE EXCEPTION 'transactions must be a positive number, not %', flexlock_report.transactions
      USING HINT = 'Pass the transactions run since flexlock_reset() (pgbench prints them as "number of transactions actually processed"), or NULL for totals only.';
  END IF;
  IF flexlock_report.top IS NULL OR flexlock_report.top < 1 THEN
    RAISE EXCEPTION 'top must be at least 1, not %', coalesce(flexlock_report.top::text, 'NULL')
      USING HINT = 'top is the number of rows shown per section.';
  END IF;

  RETURN QUERY
  WITH p AS (
    SELECT flexlock_report.transactions::float8 AS txn,
           flexlock_report.top AS n,
           coalesce((SELECT max(l.stats_reset) FROM flexlock_lwlocks l),
                    pg_postmaster_start_time()) AS since
  ),
  -- counter families of the variant GUCs (lock_fastpath: the hwlock section)
  fam(guc, family) AS (
    VALUES ('btree_leaf_exclusive_descent', 'btree'), ('procarray_group_clear', 'groupclear'),
           ('lwlock_shared_add', 'sharedadd'), ('wal_flush_wait', 'walflush'),
           ('wal_insert_locks', 'walinsert'), ('wal_insert_reservation', 'walreserve'),
           ('wal_buffer_init', 'walbuffer'), ('lwlock_implementation', 'lwspin'),
           ('clock_sweep', 'clocksweep'), ('relation_extend_pages', 'extend')
  ),
  changed AS (
    SELECT v.guc, v.current_setting, v.stock_setting, f.family
      FROM flexlock_variants v LEFT JOIN fam f USING (guc)
     WHERE v.current_setting IS DISTINCT FROM v.stock_setting
  ),
  lw AS (
    SELECT l.* FROM flexlock_lwlocks l
  ),
  lw_modes AS (
    SELECT w.tranche,
           string_agg(format('%s %s, p99 %s us', w.mode, w.sleeps, round(w.p99_us::numeric)),
                      '; ' ORDER BY w.sleeps DESC) AS modes
      FROM flexlock_lwlock_waits w GROUP BY w.tranche
  ),
  holds AS (
    SELECT l.tranche, m.mode, m.acquisitions, m.hold_ms, m.avg_us, m.nested_ms
      FROM lw l
     CROSS JOIN LATERAL (VALUES
       ('exclusive', l.acquire_exclusive, l.hold_exclusive_ms, l.avg_hold_exclusive_us, l.hold_wait_exclusive_ms),
       ('shared', l.acquire_shared, l.hold_shared_ms, l.avg_hold_shared_us, l.hold_wait_shared_ms))
       AS m(mode, acquisitions, hold_ms, avg_us, nested_ms)
     WHERE l.holds_timed > 0 AND m.hold_ms > 0
  ),
  hw AS (
    SELECT h.* FROM flexlock_hwlocks h
  ),
  spin AS (
    SELECT max(c.value) FILTER (WHERE c.counter = 'contended') AS contended,
           max(c.value) FILTER (WHERE c.counter = 'delays') AS delays,
           max(c.value) FILTER (WHERE c.counter = 'max_delays') AS max_delays
      FROM flexlock_counters c WHERE c.family = 'spinlock'
  ),
  found(o, s, i, e, pt, ms, ut, au, d) AS (
    -- run
    SELECT 1, 'run', 'since reset', flexlock_report.transactions, NULL::float8,
           extract(epoch FROM clock_timestamp() - p.since)::float8 * 1000, NULL::float8, NULL::float8,
           format('%s s since %s', round(extract(epoch FROM clock_timestamp() - p.since)::numeric, 1),
                  to_char(p.since, 'YYYY-MM-DD HH24:MI:SS'))
             || CASE WHEN p.txn IS NULL THEN '; pass the transactions for figures per transaction'
                     ELSE format('; %s transactions per second',
                                 round((p.txn / greatest(extract(epoch FROM clock_timestamp() - p.since)::float8, 1e-3))::numeric))
                END
      FROM p
    -- variant
    UNION ALL
    SELECT 2, 'variant', c.guc, NULL, NULL, NULL, NULL, NULL,
           format('%s (stock: %s)', c.current_setting, c.stock_setting)
      FROM changed c
    UNION ALL
    SELECT 2, 'variant', 'stock', NULL, NULL, NULL, NULL, NULL, 'every lock variant at its stock setting'
     WHERE NOT EXISTS (SELECT 1 FROM changed)
    -- lwlock wait
    UNION ALL
    SELECT 3, 'lwlock wait', 'all tranches', sum(l.waits)::int8, sum(l.waits) / p.txn,
           sum(l.wait_time_ms), sum(l.wait_time_ms) * 1000 / p.txn,
           sum(l.wait_time_ms) * 1000 / nullif(sum(l.waits), 0),
           CASE WHEN sum(l.waits) = 0 THEN 'no LWLock sleeps'
                ELSE format('%s tranches slept on', count(*) FILTER (WHERE l.waits > 0)) END
      FROM lw l, p GROUP BY p.txn
    UNION ALL
    SELECT * FROM (
      SELECT 4, 'lwlock wait', l.tranche, l.waits, l.waits / p.txn, l.wait_time_ms,
             l.wait_time_ms * 1000 / p.txn, l.avg_wait_us, m.modes
        FROM lw l CROSS JOIN p LEFT JOIN lw_modes m USING (tranche)
       WHERE l.waits > 0
       ORDER BY l.wait_time_ms DESC, l.waits DESC LIMIT (SELECT n FROM p)) w
    -- lwlock hold
    UNION ALL
    SELECT * FROM (
      SELECT 5, 'lwlock hold', h.tranche || ' ' || h.mode, h.acquisitions, h.acquisitions / p.txn,
             h.hold_ms, h.hold_ms * 1000 / p.txn, h.avg_us,
             concat_ws('; ',
               CASE WHEN h.mode = 'exclusive' AND ld.utilization IS NOT NULL
                    THEN format('held %s%% of the time', round((100 * ld.utilization)::numeric, 1)) END,
               CASE WHEN h.nested_ms > 0
                    THEN format('%s%% of it asleep on other locks', round((100 * h.nested_ms / h.hold_ms)::numeric, 1)) END,
               CASE WHEN h.mode = 'exclusive' AND cp.cap_tps < 1e7
                    THEN format('caps %s tps', round(cp.cap_tps::numeric)) END)
        FROM holds h CROSS JOIN p
        LEFT JOIN flexlock_lock_load ld ON ld.tranche = h.tranche
        LEFT JOIN flexlock_lock_caps(flexlock_report.transactions) cp ON cp.tranche = h.tranche
       ORDER BY h.hold_ms DESC LIMIT (SELECT n FROM p)) hl
    UNION ALL
    SELECT 5, 'lwlock hold', 'not sampled', NULL, NULL, NULL, NULL, NULL,
           CASE WHEN coalesce(current_setting('lock_stats_hold_sample', true), '0') = '0'
                THEN 'lock_stats_hold_sample = 0; set it to 100 to time one hold in 100'
                ELSE 'no hold sampled since the reset' END
     WHERE NOT EXISTS (SELECT 1 FROM holds)
    -- hwlock
    UNION ALL
    SELECT 6, 'hwlock', 'acquisitions', sum(h.fastpath + h.shared_table)::int8,
           sum(h.fastpath + h.shared_table) / p.txn, NULL, NULL, NULL,
           format('fast path %s%%, shared table %s, already held %s, fast path full %s, strong lock %s',
                  coalesce(round(100 * sum(h.fastpath) / nullif(sum(h.fastpath + h.shared_table), 0), 1), 0),
                  coalesce(sum(h.shared_table), 0), coalesce(sum(h.local), 0),
                  coalesce(sum(h.fastpath_full), 0), coalesce(sum(h.fastpath_strong), 0))
      FROM p LEFT JOIN hw h ON true GROUP BY p.txn
    UNION ALL
    SELECT * FROM (
      SELECT 7, 'hwlock wait', h.locktype || ' ' || h.mode, h.waits, h.waits / p.txn, h.wait_time_ms,
             h.wait_time_ms * 1000 / p.txn, h.avg_wait_us,
             nullif(concat_ws(', ',
               CASE WHEN h.deadlock_checks > 0 THEN format('%s deadlock checks', h.deadlock_checks) END,
               CASE WHEN h.deadlocks > 0 THEN format('%s deadlocks', h.deadlocks) END), '')
        FROM hw h CROSS JOIN p
       WHERE h.waits > 0
       ORDER BY h.wait_time_ms DESC, h.waits DESC LIMIT (SELECT n FROM p)) hwl
    UNION ALL
    SELECT 7, 'hwlock wait', 'none', NULL, NULL, NULL, NULL, NULL, 'no heavyweight lock waits'
     WHERE NOT EXISTS (SELECT 1 FROM hw h WHERE h.waits > 0)
    -- spinlock
    UNION ALL
    SELECT 8, 'spinlock', 'contended', s.contended, s.contended / p.txn, NULL, NULL, NULL,
           CASE WHEN coalesce(s.contended, 0) = 0 THEN 'no spinlock found held'
                ELSE CASE WHEN s.delays > 0 THEN format('%s delays (sleeps), at most %s in one acquisition', s.delays, s.max_delays)
                          ELSE 'spun, never slept' END
                     || coalesce('; ' || (SELECT string_agg(format('%s %s', t.site, t.contended), ', ' ORDER BY t.contended DESC)
                                           FROM (SELECT * FROM flexlock_spinlocks sp WHERE sp.contended > 0
                                                  ORDER BY sp.contended DESC LIMIT (SELECT n FROM p)) t), '')
           END
      FROM spin s, p
    -- counter
    UNION ALL
    SELECT 9, 'counter', c.family || '.' || c.counter, c.value,
           CASE WHEN c.kind = 'sum' THEN c.value / p.txn END, NULL, NULL, NULL, c.description
      FROM flexlock_counters c CROSS JOIN p
     WHERE c.value <> 0 AND c.family IN (SELECT ch.family FROM changed ch)
  )
  SELECT r.s, r.i, r.e,
         CASE WHEN r.pt IS NULL OR r.pt = 0 THEN r.pt::numeric
              ELSE round(r.pt::numeric, greatest(0, 2 - floor(log(abs(r.pt::numeric))))::int) END,
         CASE WHEN r.ms IS NULL OR r.ms = 0 THEN r.ms::numeric
              ELSE round(r.ms::numeric, greatest(0, 2 - floor(log(abs(r.ms::numeric))))::int) END,
         CASE WHEN r.ut IS NULL OR r.ut = 0 THEN r.ut::numeric
              ELSE round(r.ut::numeric, greatest(0, 2 - floor(log(abs(r.ut::numeric))))::int) END,
         CASE WHEN r.au IS NULL OR r.au = 0 THEN r.au::numeric
              ELSE round(r.au::numeric, greatest(0, 2 - floor(log(abs(r.au::numeric))))::int) END,
         r.d
    FROM found r
   ORDER BY r.o, r.ms DESC NULLS LAST, r.e DESC NULLS LAST, r.i;
END
$$;

REVOKE ALL ON FUNCTION flexlock_report(int8, int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_report(int8, int4) TO pg_monitor;

-- 1.0 left the heavyweight lock functions and views out of its grants: any
-- role could call the functions, and pg_monitor could not read the views
-- (nor, through them, flexlock_report()).  Grant them as the others.
REVOKE ALL ON FUNCTION flexlock_hwlocks() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_hwlock_backends(int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_hwlock_wait_histogram() FROM PUBLIC;
REVOKE ALL ON flexlock_hwlocks, flexlock_hwlock_backends, flexlock_hwlock_wait_histogram FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_hwlocks() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_hwlock_backends(int4) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_hwlock_wait_histogram() TO pg_monitor;
GRANT SELECT ON flexlock_hwlocks, flexlock_hwlock_backends, flexlock_hwlock_wait_histogram TO pg_monitor;

--
-- (The sampled hold times of issue 27 follow.)

--
-- Sampled LWLock hold times (lock_stats_hold_sample, core): flexlock_lwlocks
-- and flexlock_backends gain seven columns before their last one.  Totals
-- are estimates (each sampled hold counted as many times as the sampling
-- interval in effect when it was taken); averages are of the sampled holds;
-- hold_wait_*_ms is the part of the holds the holder spent asleep on other
-- locks (nested waits).
--
DROP VIEW flexlock_lwlocks;
DROP FUNCTION flexlock_lwlocks();
CREATE FUNCTION flexlock_lwlocks(
    OUT tranche_id int4,
    OUT tranche text,
    OUT acquire_shared int8,
    OUT acquire_exclusive int8,
    OUT wait_until_free int8,
    OUT cond_fail int8,
    OUT block_shared int8,
    OUT block_exclusive int8,
    OUT block_wait_until_free int8,
    OUT waits int8,
    OUT wait_time_ms float8,
    OUT avg_wait_us float8,
    OUT cas_retries int8,
    OUT spin_delays int8,
    OUT dequeue_self int8,
    OUT wakeups int8,
    OUT holds_timed int8,
    OUT hold_shared_ms float8,
    OUT hold_exclusive_ms float8,
    OUT avg_hold_shared_us float8,
    OUT avg_hold_exclusive_us float8,
    OUT hold_wait_shared_ms float8,
    OUT hold_wait_exclusive_ms float8,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_lwlocks_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlocks AS
  SELECT * FROM flexlock_lwlocks();

DROP VIEW flexlock_backends;
DROP FUNCTION flexlock_backends(int4);
CREATE FUNCTION flexlock_backends(
    pid int4 DEFAULT NULL,
    OUT pid int4,
    OUT backend_type text,
    OUT tranche_id int4,
    OUT tranche text,
    OUT acquire_shared int8,
    OUT acquire_exclusive int8,
    OUT wait_until_free int8,
    OUT cond_fail int8,
    OUT block_shared int8,
    OUT block_exclusive int8,
    OUT block_wait_until_free int8,
    OUT waits int8,
    OUT wait_time_ms float8,
    OUT avg_wait_us float8,
    OUT cas_retries int8,
    OUT spin_delays int8,
    OUT dequeue_self int8,
    OUT wakeups int8,
    OUT holds_timed int8,
    OUT hold_shared_ms float8,
    OUT hold_exclusive_ms float8,
    OUT avg_hold_shared_us float8,
    OUT avg_hold_exclusive_us float8,
    OUT hold_wait_shared_ms float8,
    OUT hold_wait_exclusive_ms float8,
    OUT counting_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_backends_1_1'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_backends AS
  SELECT * FROM flexlock_backends();

--
-- flexlock_tranche_instances(): how many locks a tranche has, where the
-- server fixes it (individual locks, partitioned tables, buffer content
-- locks, WAL insertion locks)
--
CREATE FUNCTION flexlock_tranche_instances(
    OUT tranche_id int4,
    OUT tranche text,
    OUT instances int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_tranche_instances'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

--
-- flexlock_lock_load: per tranche whose holds were sampled, over the time
-- since the last reset (or since the server started), the exclusive hold
-- time per second of all its locks, and its utilization: the exclusive hold
-- seconds per second of its busiest lock, known so far only for a tranche
-- of one lock (NULL otherwise; mean_utilization divides by the number of
-- locks, which the busiest one can only exceed).  Exclusive holds of one
-- lock never overlap, so utilization cannot exceed 1 but for the sampling
-- error.  exclusive_waiting is the share of exclusive holds spent asleep on
-- other locks.
--
CREATE VIEW flexlock_lock_load AS
  SELECT l.tranche_id,
         l.tranche,
         i.instances,
         s.seconds,
         l.holds_timed,
         l.hold_exclusive_ms / 1000 / s.seconds AS exclusive_per_second,
         CASE WHEN i.instances = 1
              THEN l.hold_exclusive_ms / 1000 / s.seconds END AS utilization,
         l.hold_exclusive_ms / 1000 / s.seconds / i.instances AS mean_utilization,
         l.hold_shared_ms / 1000 / s.seconds AS shared_per_second,
         l.hold_wait_exclusive_ms / nullif(l.hold_exclusive_ms, 0) AS exclusive_waiting
    FROM flexlock_lwlocks l
    LEFT JOIN flexlock_tranche_instances() i USING (tranche_id, tranche)
    CROSS JOIN LATERAL (
      SELECT extract(epoch FROM clock_timestamp() -
                     coalesce(l.stats_reset, pg_postmaster_start_time()))::float8
             AS seconds) s
   WHERE l.holds_timed > 0;

--
-- flexlock_lock_caps(transactions): the throughput that each sampled
-- tranche's exclusive holds cap, if the last reset saw that many
-- transactions: a lock held exclusively for h seconds per transaction allows
-- at most 1/h transactions per second, on any number of cores; a tranche of
-- k interchangeable locks (WAL insertion locks, the partitions of the buffer
-- mapping and lock tables) about k/h.  own_cap_tps leaves out the nested
-- waits, the part of the holds spent asleep on other locks.  Buffer content
-- locks are not interchangeable (the hottest page decides), so they get no
-- cap here.
--
CREATE FUNCTION flexlock_lock_caps(
    transactions int8,
    OUT tranche text,
    OUT instances int8,
    OUT exclusive_hold_us_per_txn float8,
    OUT own_exclusive_hold_us_per_txn float8,
    OUT cap_tps float8,
    OUT own_cap_tps float8)
RETURNS SETOF record
LANGUAGE sql STRICT STABLE PARALLEL SAFE
AS $$
  SELECT l.tranche, i.instances, h.excl_us, h.own_us,
         CASE WHEN k.k IS NOT NULL AND h.excl_us > 0 THEN k.k * 1e6 / h.excl_us END,
         CASE WHEN k.k IS NOT NULL AND h.own_us > 0 THEN k.k * 1e6 / h.own_us END
    FROM flexlock_lwlocks() l
    LEFT JOIN flexlock_tranche_instances() i USING (tranche_id, tranche)
    CROSS JOIN LATERAL (
      SELECT l.hold_exclusive_ms * 1000 / transactions AS excl_us,
             (l.hold_exclusive_ms - l.hold_wait_exclusive_ms) * 1000 / transactions AS own_us) h
    CROSS JOIN LATERAL (
      SELECT CASE WHEN i.instances = 1 OR l.tranche IN ('WALInsert', 'BufferMapping',
                                                        'LockManager', 'PredicateLockManager')
                  THEN i.instances END AS k) k
   WHERE l.holds_timed > 0 AND transactions > 0
   ORDER BY 5 NULLS LAST
$$;

REVOKE ALL ON FUNCTION flexlock_lwlocks() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_backends(int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_tranche_instances() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_lock_caps(int8) FROM PUBLIC;
REVOKE ALL ON flexlock_lwlocks, flexlock_backends, flexlock_lock_load FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_lwlocks() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_backends(int4) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_tranche_instances() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_lock_caps(int8) TO pg_monitor;
GRANT SELECT ON flexlock_lwlocks, flexlock_backends, flexlock_lock_load TO pg_monitor;

--
-- flexlock_test_lwlock_nested(): for tests, acquire an outer lock (tranche
-- flexlock_test_outer) exclusively, then the test lock of
-- flexlock_test_lwlock() exclusively (waiting if it is held), hold both
-- hold_ms milliseconds, and release the outer lock first.  Superuser only.
--
CREATE FUNCTION flexlock_test_lwlock_nested(hold_ms int4 DEFAULT 0)
RETURNS void
AS 'MODULE_PATHNAME', 'flexlock_test_lwlock_nested'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION flexlock_test_lwlock_nested(int4) FROM PUBLIC;
