/* t/modules/flexlock_inject/flexlock_inject--1.0.sql */

\echo Use "CREATE EXTENSION flexlock_inject" to load this file. \quit

-- Attach an action to injection point NAME that stops process PID (and
-- PID2, if given) with SIGSTOP the first time that process runs the point
-- (and never again in that process), so that a test can resume it with
-- SIGCONT when it chooses.
CREATE FUNCTION flexlock_inject_stop_once(name text, pid int, pid2 int DEFAULT 0)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Detach whatever action is attached to NAME.
CREATE FUNCTION flexlock_inject_detach(name text)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Acquire the individual LWLock NAME ('WALWrite', as pg_stat_activity names
-- its waiters) exclusively, run the injection point
-- flexlock-inject-lwlock-held (attach injection_points' wait action to it,
-- local to the session), then release the lock.
CREATE FUNCTION flexlock_inject_hold_lwlock(name text)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Attach an action to injection point POINT that acquires the individual
-- LWLock NAME exclusively and releases it, in process PID only.
CREATE FUNCTION flexlock_inject_lwlock_at(point text, name text, pid int)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- Whether process PID is on the wait list of an LWLock: a process stopped
-- with SIGSTOP in its sleep reads as not waiting once a release has woken it.
CREATE FUNCTION flexlock_inject_lwlock_waiting(pid int)
RETURNS bool
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

-- The locks of test_locks.c, which the flexlock extension carried up to its
-- version 1.4.  Superuser only: they write made-up events into the
-- statistics and hold locks of the server.

-- Count a contended spinlock acquisition at a named call site in this
-- process, through finish_spin_delay() as s_lock() does; returns whether
-- finish_spin_delay() itself attributed it to the site's entry (it must not
-- for a site the process has not met before: real callers hold the
-- spinlock).
CREATE FUNCTION flexlock_test_spin_delay(site text, spins int4, delays int4)
RETURNS bool
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- Acquire the server's test LWLock (tranche flexlock_test) in mode 'shared'
-- or 'exclusive' (or 'exclusive_conditional', 'exclusive_conditional_twice'),
-- hold it hold_ms milliseconds and through the injection point
-- flexlock-test-lwlock-held, release it.
CREATE FUNCTION flexlock_test_lwlock(mode text, hold_ms int4 DEFAULT 0)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- Acquire an outer lock (tranche flexlock_test_outer) exclusively, then the
-- test lock exclusively (waiting if it is held), hold both hold_ms
-- milliseconds, and release the outer lock first.
CREATE FUNCTION flexlock_test_lwlock_nested(hold_ms int4 DEFAULT 0)
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

-- Hold ProcArrayLock in shared mode for hold_ms milliseconds, through the
-- state word ('word') or through a read-bias slot ('slot').
CREATE FUNCTION flexlock_test_procarray(hold_ms int4, through text DEFAULT 'word')
RETURNS void
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

REVOKE ALL ON FUNCTION flexlock_test_spin_delay(text, int4, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_test_lwlock(text, int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_test_lwlock_nested(int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION flexlock_test_procarray(int4, text) FROM PUBLIC;
