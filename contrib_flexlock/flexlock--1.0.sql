/* contrib_flexlock/flexlock--1.0.sql */

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

--
-- flexlock_lwlocks()
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
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_lwlocks'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlocks AS
  SELECT * FROM flexlock_lwlocks();

--
-- flexlock_spinlocks()
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

--
-- flexlock_backends(pid): per live process and tranche
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
    OUT counting_since timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_backends'
LANGUAGE C CALLED ON NULL INPUT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_backends AS
  SELECT * FROM flexlock_backends();

--
-- flexlock_variants(): the lock variants of this build
--
--
-- How long LWLock sleeps take: by tranche and mode, the number of sleeps
-- and percentiles of their duration (log2 histograms, interpolated within
-- a bucket), over all processes past and present since the last reset
-- (backend_type NULL), or per backend type over the live processes.  Only
-- sleeps timed with lock_stats_timing on are in them.
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
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_wait_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlock_waits AS
  SELECT tranche, mode, sleeps, p50_us, p90_us, p99_us, max_us, stats_reset
    FROM flexlock_wait_stats(false);

CREATE VIEW flexlock_lwlock_waits_by_type AS
  SELECT backend_type, tranche, mode, sleeps, p50_us, p90_us, p99_us, max_us
    FROM flexlock_wait_stats(true);

--
-- The histograms themselves: the non-empty buckets, bucket 0 below
-- 1.024 us, bucket b from 2^(b+9) ns to 2^(b+10) ns, the last one open.
--
CREATE FUNCTION flexlock_wait_histogram(
    by_backend_type bool,
    OUT backend_type text,
    OUT tranche text,
    OUT mode text,
    OUT bucket int4,
    OUT lower_us float8,
    OUT upper_us float8,
    OUT sleeps int8)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'flexlock_wait_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW flexlock_lwlock_wait_histogram AS
  SELECT tranche, mode, bucket, lower_us, upper_us, sleeps
    FROM flexlock_wait_histogram(false);

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
-- flexlock_reset(): make the views count from now on
--
CREATE FUNCTION flexlock_reset()
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'flexlock_reset'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

--
-- flexlock_torture_lwlock(): many background workers hammer one LWLock of
-- their own with a mix of acquisitions and check its invariants on every
-- one; fails if a worker is not done wait_bound_ms after the end (never woken).  Superuser only.
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
-- flexlock_test_spin_delay(): for tests, count a contended spinlock
-- acquisition at a named call site in this process, through
-- finish_spin_delay() as s_lock() does; returns whether finish_spin_delay()
-- itself attributed it to the site's entry (it must not for a site the
-- process has not met before: real callers hold the spinlock).  Superuser
-- only: it writes made-up events into the statistics.
--
CREATE FUNCTION flexlock_test_spin_delay(site text, spins int4, delays int4)
RETURNS bool
AS 'MODULE_PATHNAME', 'flexlock_test_spin_delay'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

--
-- flexlock_test_lwlock(): for tests, acquire the server's test LWLock
-- (tranche flexlock_lwbench) in mode 'shared' or 'exclusive', hold it
-- hold_ms milliseconds and through the injection point
-- flexlock-test-lwlock-held, release it.  Superuser only.
--
CREATE FUNCTION flexlock_test_lwlock(mode text, hold_ms int4 DEFAULT 0)
RETURNS void
AS 'MODULE_PATHNAME', 'flexlock_test_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- Reading is for monitoring roles; resetting is for superusers unless granted.
REVOKE ALL ON FUNCTION flexlock_lwlocks() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_spinlocks() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_counters() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_backends(int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_variants() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_wait_stats(bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_wait_histogram(bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_reset() FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_torture_lwlock(int4, float8, int4, int4, int4, int4, text, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_bench_lwlock(int4, float8, int4, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_test_spin_delay(text, int4, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_test_lwlock(text, int4) FROM PUBLIC;
REVOKE ALL ON flexlock_lwlocks, flexlock_spinlocks, flexlock_counters,
  flexlock_backends, flexlock_variants, flexlock_lwlock_waits,
  flexlock_lwlock_waits_by_type, flexlock_lwlock_wait_histogram FROM PUBLIC;

GRANT EXECUTE ON FUNCTION flexlock_lwlocks() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_spinlocks() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_counters() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_backends(int4) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_variants() TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_wait_stats(bool) TO pg_monitor;
GRANT EXECUTE ON FUNCTION flexlock_wait_histogram(bool) TO pg_monitor;
GRANT SELECT ON flexlock_lwlocks, flexlock_spinlocks, flexlock_counters,
  flexlock_backends, flexlock_variants, flexlock_lwlock_waits,
  flexlock_lwlock_waits_by_type, flexlock_lwlock_wait_histogram TO pg_monitor;
