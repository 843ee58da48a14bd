/* contrib_flexlock/flexlock--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.5'" to load this file. \quit

-- The test functions leave the extension: they are for flexlock's own tests,
-- which now take them from the test module flexlock_inject
-- (t/modules/flexlock_inject).  Their C symbols stay in the library so that
-- the scripts of 1.0 to 1.4 still run on the way here; called, they say
-- where the functions went.

DROP FUNCTION flexlock_test_spin_delay(text, int4, int4);
DROP FUNCTION flexlock_test_lwlock(text, int4);
DROP FUNCTION flexlock_test_lwlock_nested(int4);
DROP FUNCTION flexlock_test_procarray(int4, text);
