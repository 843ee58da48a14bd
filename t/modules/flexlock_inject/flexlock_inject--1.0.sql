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
