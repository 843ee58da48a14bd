/* contrib_flexlock/flexlock--1.5.sql */

-- The install script of 1.5, the objects of 1.4 without its test functions
-- (flexlock_test_*, now in the test module t/modules/flexlock_inject),
-- grouped by what they count.  An installation of 1.0 to 1.4 reaches the
-- same objects through the update scripts (sql/report.sql compares them).

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION flexlock" to load this file. \quit

-- The counters live in the flexlock core patch.  On a server without it,
-- stop here with one clear message, before anything is created or loaded.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_settings
                 WHERE name = 'lock_stats_timing') THEN
    RAISE EXCEPTION 'this server lacks the flexlock patches'
      USING DETAIL = 'The flexlock extension reads lock statistics that only a PostgreSQL built with the flexlock patch series keeps.',
            HINT = 'Build PostgreSQL with the series in patches/ ("make postgres") and install the extension there.';
  END IF;
END
$$;

-- ==========================================================================
-- LWLocks: counters by tranche and process, waits, holds, hot locks, load
-- ==========================================================================

--
-- flexlock_lwlocks(): per tranche, over all processes past and present
-- since the last reset: acquisitions by mode, how many had to sleep, the
-- sleeps and their time, and the sampled hold times
-- (lock_stats_hold_sample, core).  Hold totals are estimates (each sampled
-- hold counted as many times as the sampling interval in effect when it was
-- taken); averages are of the sampled holds; hold_wait_*_ms is the part of
-- the holds the holder spent asleep on other locks (nested waits).
--
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

--
-- flexlock_backends(pid): the same per live process (all of them, or the
-- one of that pid) and tranche.
--
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

--
-- flexlock_wait_stats(by_backend_type): how long LWLock sleeps take, by
-- tranche and mode: the number of sleeps and percentiles of their duration
-- (log2 histograms, interpolated within a bucket; only sleeps timed with
-- lock_stats_timing on), over all processes past and present since the
-- last reset (backend_type NULL), or per backend type over the live
-- processes; and the sampled holds: holds_timed and the p50, p90, p99 and
-- maximum of their duration, from log2 histograms bucketed as the sleeps.
-- A row per tranche and mode that anyone slept on or held in a sampled
-- hold (holds are exclusive or shared); the columns of the other are 0 and
-- NULL.  The hold percentiles are of the sampled holds, an unbiased sample
-- of all holds.
--
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
-- flexlock_lock_load: per tranche, how busy its locks were: instances is
-- the number of distinct locks of the tranche that sampled holds took
-- (flexlock_lock_instances), no more than the server has;
-- instances_configured the locks the server has, where it fixes the number;
-- instances_saturated says the estimate is a lower bound.  utilization is
-- shown when one lock was taken.
--
CREATE VIEW flexlock_lock_load AS
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

REVOKE ALL ON FUNCTION flexlock_lwlocks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_lwlocks() TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_backends(int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_backends(int4) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_tranche_instances() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_tranche_instances() TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_lock_caps(int8) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_lock_caps(int8) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_wait_stats(bool) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_wait_stats(bool) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_wait_histogram(bool) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_wait_histogram(bool) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_lock_instances() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_lock_instances() TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_hot_lwlocks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_hot_lwlocks() TO pg_monitor;
REVOKE ALL ON flexlock_lwlocks, flexlock_backends, flexlock_lwlock_waits, flexlock_lwlock_waits_by_type, flexlock_lwlock_wait_histogram, flexlock_lock_load, flexlock_hot_lwlocks FROM PUBLIC;
GRANT SELECT ON flexlock_lwlocks, flexlock_backends, flexlock_lwlock_waits, flexlock_lwlock_waits_by_type, flexlock_lwlock_wait_histogram, flexlock_lock_load, flexlock_hot_lwlocks TO pg_monitor;

-- ==========================================================================
-- Heavyweight locks
-- ==========================================================================

--
-- Heavyweight locks (lock.c), by lock type and mode: how acquisitions were
-- granted (fast path, shared lock table, or already held by the process),
-- why eligible relation locks missed the fast path (its slots were full, or
-- a strong lock on the relation's partition was held or awaited), waits and
-- their time (lock_stats_timing), deadlock checks and deadlocks.
--
CREATE FUNCTION flexlock_hwlocks(
    OUT locktype text,
    OUT mode text,
    OUT fastpath int8,
    OUT shared_table int8,
    OUT fastpath_share float8,
    OUT local int8,
    OUT fastpath_full int8,
    OUT fastpath_strong int8,
    OUT not_avail int8,
    OUT waits int8,
    OUT wait_time_ms float8,
    OUT avg_wait_us float8,
    OUT deadlock_checks int8,
    OUT deadlocks int8,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_hwlocks'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_hwlocks AS
  SELECT * FROM flexlock_hwlocks();

--
-- flexlock_hwlock_backends(pid): the same per live process (all of them, or
-- the one of that pid).
--
CREATE FUNCTION flexlock_hwlock_backends(
    pid int4 DEFAULT NULL,
    OUT pid int4,
    OUT backend_type text,
    OUT locktype text,
    OUT mode text,
    OUT fastpath int8,
    OUT shared_table int8,
    OUT fastpath_share float8,
    OUT local int8,
    OUT fastpath_full int8,
    OUT fastpath_strong int8,
    OUT not_avail int8,
    OUT waits int8,
    OUT wait_time_ms float8,
    OUT avg_wait_us float8,
    OUT deadlock_checks int8,
    OUT deadlocks int8,
    OUT counting_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_hwlock_backends'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_hwlock_backends AS
  SELECT * FROM flexlock_hwlock_backends();

--
-- flexlock_hwlock_wait_histogram(): the waits' durations by lock type, in
-- log2 buckets (the non-empty ones).
--
CREATE FUNCTION flexlock_hwlock_wait_histogram(
    OUT locktype text,
    OUT bucket int4,
    OUT lower_us float8,
    OUT upper_us float8,
    OUT waits int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_hwlock_wait_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_hwlock_wait_histogram AS
  SELECT * FROM flexlock_hwlock_wait_histogram();

REVOKE ALL ON FUNCTION flexlock_hwlocks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_hwlocks() TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_hwlock_backends(int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_hwlock_backends(int4) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_hwlock_wait_histogram() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_hwlock_wait_histogram() TO pg_monitor;
REVOKE ALL ON flexlock_hwlocks, flexlock_hwlock_backends, flexlock_hwlock_wait_histogram FROM PUBLIC;
GRANT SELECT ON flexlock_hwlocks, flexlock_hwlock_backends, flexlock_hwlock_wait_histogram TO pg_monitor;

-- ==========================================================================
-- Spinlocks
-- ==========================================================================

--
-- flexlock_spinlocks(): contended spinlock acquisitions by call site (the
-- function that spun), with their spins and delays.
--
CREATE FUNCTION flexlock_spinlocks(
    OUT site text,
    OUT contended int8,
    OUT spins int8,
    OUT delays int8,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_spinlocks'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_spinlocks AS
  SELECT * FROM flexlock_spinlocks();

REVOKE ALL ON FUNCTION flexlock_spinlocks() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_spinlocks() TO pg_monitor;
REVOKE ALL ON flexlock_spinlocks FROM PUBLIC;
GRANT SELECT ON flexlock_spinlocks TO pg_monitor;

-- ==========================================================================
-- Variants: the lock variants' settings and counters
-- ==========================================================================

--
-- flexlock_variants(): the lock variants of this build, their settings now
-- and at stock.
--
CREATE FUNCTION flexlock_variants(
    OUT name text,
    OUT guc text,
    OUT current_setting text,
    OUT stock_setting text,
    OUT description text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_variants'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

CREATE VIEW flexlock_variants AS
  SELECT * FROM flexlock_variants();

--
-- flexlock_counters(): counter families of the lock variants
--
CREATE FUNCTION flexlock_counters(
    OUT family text,
    OUT counter text,
    OUT kind text,
    OUT value int8,
    OUT description text,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_counters'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_counters AS
  SELECT * FROM flexlock_counters();

REVOKE ALL ON FUNCTION flexlock_variants() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_variants() TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_counters() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_counters() TO pg_monitor;
REVOKE ALL ON flexlock_variants, flexlock_counters FROM PUBLIC;
GRANT SELECT ON flexlock_variants, flexlock_counters TO pg_monitor;

-- ==========================================================================
-- Statements
-- ==========================================================================

--
-- flexlock_statements_tracking(): whether statements are tracked (the
-- library preloaded, flexlock.track not none).
--
CREATE FUNCTION flexlock_statements_tracking()
RETURNS bool
AS 'MODULE_PATHNAME', 'flexlock_statements_tracking_1_3'
LANGUAGE C STRICT STABLE PARALLEL SAFE;

--
-- flexlock_query_id(query): the query id a statement gets when it runs
-- (compute_query_id), to find it in flexlock_statements: the statement is
-- parsed and analyzed, not run; $n parameters take the types they would
-- get unspecified, as with pgbench -M extended or prepared.
--
CREATE FUNCTION flexlock_query_id(query text)
RETURNS int8
AS 'MODULE_PATHNAME', 'flexlock_query_id_1_3'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

--
-- flexlock_statements(): one row per (userid, dbid, queryid, toplevel),
-- queryid 0 for what ran outside any statement; its calls (completed, as
-- pg_stat_statements counts them) and failed calls (whose lock events are
-- in the row too), the totals of the statement's lock events, then of its
-- implicit commit's (commit_*), and when the entry was made.
--
CREATE FUNCTION flexlock_statements(
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel bool,
    OUT queryid int8,
    OUT calls int8,
    OUT failed_calls int8,
    OUT lwlock_acquisitions int8,
    OUT lwlock_sleeps int8,
    OUT lwlock_sleep_time float8,
    OUT lwlock_hold_time float8,
    OUT hwlock_acquisitions int8,
    OUT hwlock_fastpath int8,
    OUT hwlock_shared_table int8,
    OUT hwlock_waits int8,
    OUT hwlock_wait_time float8,
    OUT spin_delays int8,
    OUT commit_lwlock_acquisitions int8,
    OUT commit_lwlock_sleeps int8,
    OUT commit_lwlock_sleep_time float8,
    OUT commit_lwlock_hold_time float8,
    OUT commit_hwlock_acquisitions int8,
    OUT commit_hwlock_fastpath int8,
    OUT commit_hwlock_shared_table int8,
    OUT commit_hwlock_waits int8,
    OUT commit_hwlock_wait_time float8,
    OUT commit_spin_delays int8,
    OUT stats_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_statements_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_statements AS
  SELECT * FROM flexlock_statements();

--
-- flexlock_statement_locks(): the same by lock: one row per statement,
-- part (commit: its implicit commit) and lock, named as pg_stat_activity
-- names what a backend waits for: wait_event_type LWLock (wait_event the
-- tranche, mode exclusive, shared or wait_until_free), Lock (the lock
-- type, mode the lock mode), Timeout and SpinDelay (spinlock delays);
-- wait_event (other) for the locks of a kind that did not fit in the
-- statement's rows.
--
CREATE FUNCTION flexlock_statement_locks(
    OUT userid oid,
    OUT dbid oid,
    OUT toplevel bool,
    OUT queryid int8,
    OUT commit bool,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT mode text,
    OUT acquisitions int8,
    OUT fastpath int8,
    OUT shared_table int8,
    OUT sleeps int8,
    OUT sleep_time float8,
    OUT hold_time float8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_statement_locks_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_statement_locks AS
  SELECT * FROM flexlock_statement_locks();

--
-- flexlock_statements_info(): as pg_stat_statements_info, dealloc (times
-- the full table dropped its least used 5%) and stats_reset (when every
-- entry was last removed); then the statements tracked.
--
CREATE FUNCTION flexlock_statements_info(
    OUT dealloc int8,
    OUT stats_reset timestamptz,
    OUT statements int8)
RETURNS record
AS 'MODULE_PATHNAME', 'flexlock_statements_info_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_statements_info AS
  SELECT * FROM flexlock_statements_info();

--
-- flexlock_statements_reset(userid, dbid, queryid): remove the statements
-- that match (0: any), as pg_stat_statements_reset(); with every entry
-- gone, dealloc and stats_reset are reset too.  The time of the reset.
--
CREATE FUNCTION flexlock_statements_reset(
    userid oid DEFAULT 0,
    dbid oid DEFAULT 0,
    queryid int8 DEFAULT 0)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flexlock_statements_reset_1_4'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

REVOKE ALL ON FUNCTION flexlock_statements_reset(oid, oid, int8) FROM PUBLIC;
GRANT SELECT ON flexlock_statements, flexlock_statement_locks, flexlock_statements_info TO PUBLIC;

-- ==========================================================================
-- Reports and reset
-- ==========================================================================

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
--   statements   when statements are tracked: the top statements by lock
--                time (LWLock sleeps, heavyweight lock waits and sampled
--                LWLock holds, their commit's included), with their share
--                of the lock events and of the lock time of all statements
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
  stmts AS (
    SELECT s.queryid, s.calls,
           s.lwlock_acquisitions + s.hwlock_acquisitions
             + s.commit_lwlock_acquisitions + s.commit_hwlock_acquisitions AS lock_events,
           s.lwlock_sleep_time + s.hwlock_wait_time + s.lwlock_hold_time
             + s.commit_lwlock_sleep_time + s.commit_hwlock_wait_time
             + s.commit_lwlock_hold_time AS lock_ms,
           s.commit_lwlock_sleep_time + s.commit_hwlock_wait_time
             + s.commit_lwlock_hold_time AS commit_ms,
           s.lwlock_sleeps + s.hwlock_waits + s.commit_lwlock_sleeps + s.commit_hwlock_waits AS waits
      FROM flexlock_statements s
     WHERE flexlock_statements_tracking()
  ),
  stmt_total AS (
    SELECT sum(t.lock_events) AS events, sum(t.lock_ms) AS ms FROM stmts t
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
    -- statements
    UNION ALL
    SELECT * FROM (
      SELECT 9, 'statements',
             CASE WHEN t.queryid = 0 THEN 'outside statements' ELSE 'queryid ' || coalesce(t.queryid::text, '(hidden)') END,
             t.lock_events, t.lock_events / p.txn, t.lock_ms, t.lock_ms * 1000 / p.txn,
             t.lock_ms * 1000 / nullif(t.calls, 0),
             format('%s calls; %s%% of the lock events, %s%% of the lock time%s%s',
                    t.calls,
                    round(100 * t.lock_events / nullif(st.events, 0), 1),
                    coalesce(round((100 * t.lock_ms / nullif(st.ms, 0))::numeric, 1), 0),
                    CASE WHEN t.commit_ms > 0
                         THEN format(', %s%% of it in its implicit commit', round((100 * t.commit_ms / t.lock_ms)::numeric, 1)) END,
                    CASE WHEN t.waits > 0 THEN format('; %s waits', t.waits) END)
        FROM stmts t CROSS JOIN p CROSS JOIN stmt_total st
       ORDER BY t.lock_ms DESC, t.lock_events DESC LIMIT (SELECT n FROM p)) sl
    -- counter
    UNION ALL
    SELECT 10, 'counter', c.family || '.' || c.counter, c.value,
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

--
-- flexlock_reset(): make the views count from now on
--
CREATE FUNCTION flexlock_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flexlock_reset'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION flexlock_report(int8, int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION flexlock_report(int8, int4) TO pg_monitor;
REVOKE ALL ON FUNCTION flexlock_reset() FROM PUBLIC;

-- ==========================================================================
-- The LWLock torture test and benchmarks
-- ==========================================================================

--
-- flexlock_torture_lwlock(): many background workers hammer one LWLock of
-- their own with a mix of acquisitions and check its invariants on every
-- one; fails if a worker is not done wait_bound_ms after the end (never
-- woken).  Superuser only.
--
CREATE FUNCTION flexlock_torture_lwlock(
    workers int4,
    seconds float8,
    shared_percent int4 DEFAULT 70,
    exclusive_percent int4 DEFAULT 20,
    conditional_percent int4 DEFAULT 5,
    wait_until_free_percent int4 DEFAULT 5,
    algorithm text DEFAULT 'mixed',
    wait_bound_ms int4 DEFAULT 10000,
    OUT acquisitions int8,
    OUT shared int8,
    OUT exclusive int8,
    OUT conditional_acquired int8,
    OUT conditional_failed int8,
    OUT wait_until_free int8,
    OUT violations int8,
    OUT max_wait_ms float8,
    OUT sleeps int8,
    OUT cas_retries int8,
    OUT backouts int8,
    OUT backout_wakeups int8)
RETURNS record
AS 'MODULE_PATHNAME', 'flexlock_torture_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

--
-- flexlock_bench_lwlock(): LWLock micro-benchmark; the rest of the mix is
-- exclusive.  algorithm 'both' runs exchange, then fetch_add.  Superuser only.
--
CREATE FUNCTION flexlock_bench_lwlock(
    workers int4,
    seconds float8,
    shared_percent int4,
    algorithm text DEFAULT 'both',
    OUT shared_algorithm text,
    OUT acquisitions int8,
    OUT acquisitions_per_sec float8,
    OUT ns_per_acquisition float8,
    OUT cas_retries int8,
    OUT backouts int8,
    OUT sleeps int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_bench_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

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

REVOKE ALL ON FUNCTION flexlock_torture_lwlock(int4, float8, int4, int4, int4, int4, text, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_bench_lwlock(int4, float8, int4, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_bench_lwlock_writer(int4, float8, text, int4) FROM PUBLIC;
