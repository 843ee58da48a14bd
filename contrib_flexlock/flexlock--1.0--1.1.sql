/* contrib_flexlock/flexlock--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.1'" to load this file. \quit

-- (flexlock_report() of issue 28 goes above this line; the sampled hold
-- times of issue 27 follow.)

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
