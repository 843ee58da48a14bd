/* contrib_flexlock/flexlock--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.2'" to load this file. \quit

-- Issue 27: hold histograms and hottest locks
--
-- The sampled holds of lock_stats_hold_sample (core, patch 0017) in
-- histograms beside the sleep-time ones, the number of distinct locks of a
-- tranche that they took, and the hottest locks by hold and sleep time.

--
-- flexlock_wait_stats(by_backend_type): the sleeps by tranche and mode as
-- in 1.0, and the sampled holds: holds_timed and the p50, p90, p99 and
-- maximum of their duration, from log2 histograms bucketed as the sleeps.
-- A row per tranche and mode that anyone slept on or held in a sampled
-- hold (holds are exclusive or shared); the columns of the other are 0 and
-- NULL.  The hold percentiles are of the sampled holds, an unbiased sample
-- of all holds.
--
DROP VIEW flexlock_lwlock_waits;
DROP VIEW flexlock_lwlock_waits_by_type;
DROP FUNCTION flexlock_wait_stats(bool);
CREATE FUNCTION flexlock_wait_stats(
    by_backend_type bool,
    OUT backend_type text,
    OUT tranche text,
    OUT mode text,
    OUT sleeps int8,
    OUT p50_us float8,
    OUT p90_us float8,
    OUT p99_us float8,
    OUT max_us float8,
    OUT holds_timed int8,
    OUT hold_p50_us float8,
    OUT hold_p90_us float8,
    OUT hold_p99_us float8,
    OUT hold_max_us float8,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_wait_stats_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlock_waits AS
  SELECT tranche, mode, sleeps, p50_us, p90_us, p99_us, max_us,
         holds_timed, hold_p50_us, hold_p90_us, hold_p99_us, hold_max_us, stats_reset
    FROM flexlock_wait_stats(false);

CREATE VIEW flexlock_lwlock_waits_by_type AS
  SELECT backend_type, tranche, mode, sleeps, p50_us, p90_us, p99_us, max_us,
         holds_timed, hold_p50_us, hold_p90_us, hold_p99_us, hold_max_us
    FROM flexlock_wait_stats(true);

--
-- flexlock_wait_histogram(by_backend_type): the non-empty buckets, with the
-- sampled holds of each bucket beside its sleeps.
--
DROP VIEW flexlock_lwlock_wait_histogram;
DROP FUNCTION flexlock_wait_histogram(bool);
CREATE FUNCTION flexlock_wait_histogram(
    by_backend_type bool,
    OUT backend_type text,
    OUT tranche text,
    OUT mode text,
    OUT bucket int4,
    OUT lower_us float8,
    OUT upper_us float8,
    OUT sleeps int8,
    OUT holds int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_wait_histogram_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlock_wait_histogram AS
  SELECT tranche, mode, bucket, lower_us, upper_us, sleeps, holds
    FROM flexlock_wait_histogram(false);

--
-- flexlock_lock_instances(): per tranche, the distinct locks that sampled
-- holds took since the last reset: 1 for an individual lock, else a
-- linear-counting estimate from 1024-bit bitmaps of lock addresses, one
-- per tranche and process, OR-ed (standard error 0.2 locks at 8, 0.35 at
-- 16, 2.3% at 128, 2.6% at 1000, 5.4% at 4000; saturated, a lower bound of
-- about 7100, when every bit is set).
--
CREATE FUNCTION flexlock_lock_instances(
    OUT tranche_id int4,
    OUT tranche text,
    OUT instances int8,
    OUT bits_set int4,
    OUT saturated bool)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_lock_instances_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

--
-- flexlock_lock_load: instances is now the number of distinct locks of the
-- tranche that sampled holds took (flexlock_lock_instances), no more than
-- the server has; instances_configured is what 1.1 showed (the locks the
-- server has, where it fixes the number); instances_saturated says the
-- estimate is a lower bound.  utilization is shown when one lock was taken.
--
CREATE OR REPLACE VIEW flexlock_lock_load AS
  SELECT l.tranche_id,
         l.tranche,
         n.instances,
         s.seconds,
         l.holds_timed,
         l.hold_exclusive_ms / 1000 / s.seconds AS exclusive_per_second,
         CASE WHEN n.instances = 1
              THEN l.hold_exclusive_ms / 1000 / s.seconds END AS utilization,
         l.hold_exclusive_ms / 1000 / s.seconds / n.instances AS mean_utilization,
         l.hold_shared_ms / 1000 / s.seconds AS shared_per_second,
         l.hold_wait_exclusive_ms / nullif(l.hold_exclusive_ms, 0) AS exclusive_waiting,
         i.instances AS instances_configured,
         coalesce(m.saturated, false) AS instances_saturated
    FROM flexlock_lwlocks l
    LEFT JOIN flexlock_tranche_instances() i USING (tranche_id, tranche)
    LEFT JOIN flexlock_lock_instances() m USING (tranche_id, tranche)
    CROSS JOIN LATERAL (
      SELECT CASE WHEN m.instances IS NULL THEN i.instances
                  WHEN i.instances IS NULL THEN m.instances
                  ELSE least(m.instances, i.instances) END AS instances) n
    CROSS JOIN LATERAL (
      SELECT extract(epoch FROM clock_timestamp() -
                     coalesce(l.stats_reset, pg_postmaster_start_time()))::float8
             AS seconds) s
   WHERE l.holds_timed > 0;

--
-- flexlock_hot_lwlocks(): the hottest LWLocks since the last reset, one row
-- per lock: hold_ms (sampled holds, each scaled by the sampling interval),
-- wait_ms (timed sleeps on it), from a 16-entry space-saving table per
-- process and a 64-entry pool of the processes that exited, merged by lock
-- address.  error_ms bounds the time the lock had beyond hold_ms + wait_ms
-- before it last entered a table.  lock names it: an individual lock by
-- name, a partition of the main array by tranche and number, a buffer
-- content lock by its buffer, else the tranche and lock_offset, its offset
-- in bytes from the main LWLock array.  For a buffer content lock, the
-- relation (if in this database), relfilenode, fork and block of the page
-- its buffer holds at the time of reading, which may not be the page it
-- held when it was hot.
--
CREATE FUNCTION flexlock_hot_lwlocks(
    OUT tranche_id int4,
    OUT tranche text,
    OUT lock text,
    OUT lock_offset int8,
    OUT hold_ms float8,
    OUT wait_ms float8,
    OUT error_ms float8,
    OUT relation regclass,
    OUT relfilenode oid,
    OUT fork text,
    OUT block int8,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_hot_lwlocks_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

--
-- flexlock_hot_lwlocks: the same, hottest first, with hold_share, the
-- lock's share of its tranche's estimated hold time.
--
CREATE VIEW flexlock_hot_lwlocks AS
  SELECT h.tranche, h.lock, h.lock_offset, h.hold_ms, h.wait_ms, h.error_ms,
         h.hold_ms / nullif(l.hold_shared_ms + l.hold_exclusive_ms, 0) AS hold_share,
         h.relation, h.relfilenode, h.fork, h.block, h.stats_reset
    FROM flexlock_hot_lwlocks() h
    LEFT JOIN flexlock_lwlocks() l USING (tranche_id)
   ORDER BY h.hold_ms + h.wait_ms DESC, h.tranche, h.lock;

-- flexlock_report(): its sleep details leave out the modes held but never
-- slept on, which flexlock_lwlock_waits now shows (otherwise as in 1.1).
CREATE OR REPLACE FUNCTION flexlock_report(
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
           ('clock_sweep', 'clocksweep'), ('relation_extend_pages', 'extend'),
           ('lwlock_read_biased', 'readbias')
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
      FROM flexlock_lwlock_waits w WHERE w.sleeps > 0 GROUP BY w.tranche
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

REVOKE ALL ON FUNCTION flexlock_wait_stats(bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_wait_histogram(bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_lock_instances() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_hot_lwlocks() FROM PUBLIC;
REVOKE ALL ON flexlock_lwlock_waits, flexlock_lwlock_waits_by_type,
  flexlock_lwlock_wait_histogram, flexlock_hot_lwlocks FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_wait_stats(bool) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_wait_histogram(bool) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_lock_instances() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_hot_lwlocks() TO pg_monitor;
GRANT SELECT ON flexlock_lwlock_waits, flexlock_lwlock_waits_by_type,
  flexlock_lwlock_wait_histogram, flexlock_hot_lwlocks TO pg_monitor;

-- Issue 29: read-biased LWLocks

--
-- flexlock_bench_lwlock_writer(): the writer's price of a read-optimized
-- LWLock.  readers background workers take the lock in shared mode as fast
-- as they can while one more takes it exclusively every interval_us
-- microseconds and times each acquisition.  algorithm: exchange, fetch_add
-- or readbiased.  Superuser only.
--
CREATE FUNCTION flexlock_bench_lwlock_writer(
    readers int4,
    seconds float8,
    algorithm text DEFAULT 'readbiased',
    interval_us int4 DEFAULT 1000,
    OUT shared_algorithm text,
    OUT shared_acquisitions int8,
    OUT shared_per_sec float8,
    OUT writes int8,
    OUT avg_write_us float8,
    OUT max_write_us float8)
RETURNS record
AS 'MODULE_PATHNAME', 'flexlock_bench_lwlock_writer'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION flexlock_bench_lwlock_writer(int4, float8, text, int4) FROM PUBLIC;

--
-- flexlock_test_procarray(): for tests, hold ProcArrayLock in shared mode
-- for hold_ms milliseconds, through the state word ('word') or through a
-- read-bias slot ('slot').  Superuser only.
--
CREATE FUNCTION flexlock_test_procarray(hold_ms int4, through text DEFAULT 'word')
RETURNS void
AS 'MODULE_PATHNAME', 'flexlock_test_procarray'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;
REVOKE ALL ON FUNCTION flexlock_test_procarray(int4, text) FROM PUBLIC;
