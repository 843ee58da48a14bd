/* contrib_flexlock/flexlock--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.2'" to load this file. \quit

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
