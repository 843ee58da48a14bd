--
-- flexlock_report() (flexlock 1.1): the lock profile since the last reset
-- in SQL, and the update from 1.0 that brings it.  Assertions are
-- relations, not numbers, and hold under every variant config.
--

-- The update from 1.0 adds the function, and the updates 1.0 -> 1.1 -> 1.2
-- -> 1.3 -> 1.4 -> 1.5 give the same objects, with the same columns,
-- definitions and privileges, as a fresh CREATE EXTENSION (which runs the
-- install script of 1.5).
CREATE EXTENSION flexlock VERSION '1.0';
-- The test functions (flexlock_test_*) are the test module's
-- (t/modules/flexlock_inject), in a schema of their own: flexlock before
-- 1.5 had functions of the same names, which now say they moved.
CREATE SCHEMA regress_inject;
CREATE EXTENSION flexlock_inject SCHEMA regress_inject;
SELECT count(*) AS report_in_1_0 FROM pg_proc WHERE proname = 'flexlock_report';
ALTER EXTENSION flexlock UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
ALTER EXTENSION flexlock UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
ALTER EXTENSION flexlock UPDATE TO '1.3';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
ALTER EXTENSION flexlock UPDATE TO '1.4';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
-- 1.4's test functions are there, and say where they went
SELECT count(*) AS test_functions_1_4 FROM pg_proc WHERE proname LIKE 'flexlock\_test\_%' AND pronamespace = 'public'::regnamespace;
SELECT public.flexlock_test_lwlock('exclusive');
ALTER EXTENSION flexlock UPDATE TO '1.5';
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
SELECT count(*) AS test_functions_1_5 FROM pg_proc WHERE proname LIKE 'flexlock\_test\_%' AND pronamespace = 'public'::regnamespace;
CREATE FUNCTION pg_temp.regress_shape() RETURNS TABLE (object text, shape text)
LANGUAGE sql AS $$
  SELECT pg_describe_object(d.classid, d.objid, d.objsubid),
         CASE WHEN d.classid = 'pg_proc'::regclass
              THEN pg_get_function_identity_arguments(d.objid) || ' -> ' ||
                   pg_get_function_result(d.objid) || ' ' ||
                   (SELECT coalesce(p.proacl::text, '') FROM pg_proc p WHERE p.oid = d.objid) || ' ' ||
                   pg_get_functiondef(d.objid)
              WHEN d.classid = 'pg_class'::regclass
              THEN (SELECT coalesce(c.relacl::text, '') FROM pg_class c WHERE c.oid = d.objid) || ' ' ||
                   (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
                      FROM pg_attribute a WHERE a.attrelid = d.objid AND a.attnum > 0)
                   || ' ' || coalesce(pg_get_viewdef(d.objid), '')
         END
    FROM pg_depend d
   WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
     AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flexlock')
$$;
CREATE TEMP TABLE regress_updated AS SELECT * FROM pg_temp.regress_shape();
DROP EXTENSION flexlock;
CREATE EXTENSION flexlock;
SELECT count(*) > 20 AS many_objects,
       count(*) FILTER (WHERE u.object IS NULL) AS only_in_fresh,
       count(*) FILTER (WHERE f.object IS NULL) AS only_in_updated,
       count(*) FILTER (WHERE u.shape IS DISTINCT FROM f.shape) AS shapes_differ
  FROM regress_updated u FULL JOIN pg_temp.regress_shape() f USING (object);
DROP TABLE regress_updated;
DROP EXTENSION flexlock;
-- and so does ALTER EXTENSION UPDATE from 1.0 in one step
CREATE EXTENSION flexlock VERSION '1.0';
ALTER EXTENSION flexlock UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'flexlock';
SELECT a.name, a.mode
  FROM pg_proc p, unnest(p.proargnames, p.proargmodes) WITH ORDINALITY a(name, mode, n)
 WHERE p.proname = 'flexlock_report' ORDER BY a.n;
CREATE TEMP TABLE regress_updated AS
  SELECT pg_describe_object(classid, objid, objsubid) AS object
    FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flexlock');
DROP EXTENSION flexlock;
CREATE EXTENSION flexlock;
SELECT count(*) > 20 AS many_objects,
       count(*) FILTER (WHERE u.object IS NULL) AS only_in_fresh,
       count(*) FILTER (WHERE f.object IS NULL) AS only_in_updated
  FROM regress_updated u
  FULL JOIN (SELECT pg_describe_object(classid, objid, objsubid) AS object
               FROM pg_depend
              WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
                AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'flexlock')) f
    USING (object);
DROP TABLE regress_updated;

-- Bad input: one clear error each
SELECT * FROM flexlock_report(0);
SELECT * FROM flexlock_report(-5);
SELECT * FROM flexlock_report(100, 0);
SELECT * FROM flexlock_report(100, NULL);

-- Sections come in a fixed order; all but counter are always there, a
-- section with nothing to show says so in one row.
SET lock_stats_hold_sample = 0;
SELECT flexlock_reset() IS NOT NULL AS reset;
CREATE TEMP TABLE regress_report AS
  SELECT ordinality AS n, r.* FROM flexlock_report(1000) WITH ORDINALITY r;
-- (statements only when the library is preloaded: sql/unloaded.sql)
SELECT section, min(n) = max(n) - count(*) + 1 AS contiguous
  FROM regress_report WHERE section NOT IN ('counter', 'statements')
 GROUP BY section ORDER BY min(n);
-- counter rows (variant configs not at stock) come last
SELECT coalesce(min(n) FILTER (WHERE section = 'counter'), 1000) >
       max(n) FILTER (WHERE section <> 'counter') AS counters_last
  FROM regress_report;
SELECT item, events = 1000 AS transactions_shown FROM regress_report WHERE section = 'run';
-- (the section is empty when no process sampled holds since the reset: on
-- make check's server; a server that samples, as make server's, has rows)
SELECT count(*) FILTER (WHERE item = 'not sampled') = 0 OR count(*) = 1
       AS one_row_per_empty_section
  FROM regress_report WHERE section = 'lwlock hold';
-- the variant rows are the variants not at their stock setting
SELECT count(*) FILTER (WHERE item <> 'stock') =
       (SELECT count(*) FROM flexlock_variants WHERE current_setting <> stock_setting)
       AS variant_rows_match
  FROM regress_report WHERE section = 'variant';
-- per transaction: the events divided by the transactions, to 3 digits
SELECT bool_and(abs(per_txn - events / 1000.0) <= 0.005 * events / 1000.0) AS per_txn_right,
       bool_and(per_txn IS NULL) FILTER (WHERE section IN ('run', 'variant')) AS none_for_run
  FROM regress_report WHERE events > 0;
-- without the transactions, totals only
SELECT bool_and(per_txn IS NULL AND us_per_txn IS NULL) AS totals_only,
       bool_and(events IS NULL) FILTER (WHERE section = 'run') AS no_transactions
  FROM flexlock_report();
DROP TABLE regress_report;

-- What this session does shows: a 20 ms exclusive hold of the test lock
-- with every hold timed, heavyweight lock acquisitions, a contended
-- spinlock acquisition (made up by flexlock_test_spin_delay).
CREATE TABLE regress_report_t (id int PRIMARY KEY);
SELECT flexlock_reset() IS NOT NULL AS reset;
SET lock_stats_hold_sample = 1;
SELECT regress_inject.flexlock_test_lwlock('exclusive', 20);
SET lock_stats_hold_sample = 0;
SELECT count(*) FROM regress_report_t WHERE id = 1;
SELECT regress_inject.flexlock_test_spin_delay('regress_report_site', 3, 2);
SELECT item, events = 1 AS one_acquisition, time_ms >= 20 AS held_20ms, avg_us >= 20000 AS avg_shown,
       us_per_txn >= 2000 AS per_txn_shown
  FROM flexlock_report(10, 100) WHERE section = 'lwlock hold' AND item LIKE 'flexlock_test%';
SELECT item, events > 0 AS acquisitions, detail LIKE 'fast path %' AS how_granted
  FROM flexlock_report() WHERE section = 'hwlock';
SELECT item, events >= 1 AS contended FROM flexlock_report() WHERE section = 'spinlock';

-- A variant not at its stock setting shows, with its counter family:
-- relation_extend_pages = 1 and a table grown page by page by this session
-- move extend.extensions and extend.pages; the counters of the families of
-- variants at their stock setting (walinsert, btree ...: they move too) do
-- not show.
SET lwlock_shared_add = on;
SET relation_extend_pages = 1;
CREATE TABLE regress_report_ext (a int, b text);
INSERT INTO regress_report_ext SELECT i, repeat('x', 100) FROM generate_series(1, 1000) i;
SELECT item, detail FROM flexlock_report() WHERE section = 'variant'
   AND item IN ('lwlock_shared_add', 'relation_extend_pages') ORDER BY item;
SELECT count(*) FILTER (WHERE item IN ('extend.extensions', 'extend.pages') AND events > 0) AS extend_rows,
       bool_and(split_part(item, '.', 1) IN (SELECT f FROM (VALUES
                      ('btree_leaf_exclusive_descent', 'btree'), ('procarray_group_clear', 'groupclear'),
                      ('lwlock_shared_add', 'sharedadd'), ('wal_flush_wait', 'walflush'),
                      ('wal_insert_locks', 'walinsert'), ('wal_insert_reservation', 'walreserve'),
                      ('wal_buffer_init', 'walbuffer'), ('lwlock_implementation', 'lwspin'),
                      ('clock_sweep', 'clocksweep'), ('relation_extend_pages', 'extend'),
                      ('lwlock_read_biased', 'readbias')) AS fam(guc, f)
                    JOIN flexlock_variants v USING (guc)
                   WHERE v.current_setting IS DISTINCT FROM v.stock_setting))
         AS only_families_of_changed_variants,
       (SELECT sum(value) > 0 FROM flexlock_counters WHERE family = 'walinsert') AS walinsert_moved
  FROM flexlock_report() WHERE section = 'counter';
DROP TABLE regress_report_ext;
RESET relation_extend_pages;
RESET lwlock_shared_add;

-- Reading is for monitoring roles, the heavyweight lock statistics too
-- (1.0 let any role call their functions, and not pg_monitor read them);
-- (the statements' views: sql/unloaded.sql)
CREATE ROLE regress_report_reader;
SET ROLE regress_report_reader;
SELECT count(*) FROM flexlock_report();
SELECT count(*) FROM flexlock_hwlocks();
SELECT count(*) FROM flexlock_hwlock_backends();
SELECT count(*) FROM flexlock_hwlock_wait_histogram();
SELECT flexlock_statements_reset();
RESET ROLE;
GRANT pg_monitor TO regress_report_reader;
SET ROLE regress_report_reader;
SELECT count(*) >= 7 AS monitor_reads FROM flexlock_report(1);
SELECT count(*) >= 0 AS monitor_reads_hwlocks FROM flexlock_hwlocks;
SELECT count(*) >= 0 AS monitor_reads_hwlock_backends FROM flexlock_hwlock_backends;
SELECT count(*) >= 0 AS monitor_reads_hwlock_histogram FROM flexlock_hwlock_wait_histogram;
RESET ROLE;

DROP ROLE regress_report_reader;
DROP TABLE regress_report_t;
DROP EXTENSION flexlock;
DROP EXTENSION flexlock_inject;
DROP SCHEMA regress_inject;
