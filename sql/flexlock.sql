--
-- The flexlock extension: objects, counters, reset, privileges, bad input.
-- Assertions are relations between counters, not numbers, so the output does
-- not depend on the machine.
--
CREATE EXTENSION flexlock;
-- The test functions (flexlock_test_*) are the test module's
-- (t/modules/flexlock_inject), in a schema of their own: flexlock before
-- 1.5 had functions of the same names, which now say they moved.
CREATE SCHEMA regress_inject;
CREATE EXTENSION flexlock_inject SCHEMA regress_inject;

-- Views and their columns
SELECT table_name, string_agg(column_name, ', ' ORDER BY ordinal_position) AS columns
  FROM information_schema.columns
 WHERE table_schema = 'public' AND table_name LIKE 'flexlock%'
 GROUP BY table_name ORDER BY table_name;

SHOW lock_stats_timing;

-- Every built-in tranche and individual lock has a row, once.
SELECT count(*) > 50 AS many_tranches,
       count(*) = count(DISTINCT tranche_id) AS one_row_per_id
  FROM flexlock_lwlocks;
SELECT tranche FROM flexlock_lwlocks
 WHERE tranche IN ('ProcArray', 'WALWrite', 'XidGen', 'BufferContent',
                   'BufferMapping', 'WALInsert', 'LockManager')
 ORDER BY tranche;

-- Work, then the counters relate as they must.
SELECT flexlock_reset() <= now() + interval '1 minute' AS reset_done;
CREATE TABLE regress_flexlock (id int PRIMARY KEY, v text)
  WITH (autovacuum_enabled = off);
INSERT INTO regress_flexlock SELECT g, 'x' FROM generate_series(1, 5000) g;
SELECT count(*) FROM regress_flexlock WHERE id <= 100;

SELECT sum(waits) <= sum(acquire_shared + acquire_exclusive + wait_until_free) AS waits_le_acquires,
       sum(dequeue_self) <= sum(acquire_shared + acquire_exclusive + wait_until_free) AS dequeues_le_acquires,
       bool_and(waits = block_shared + block_exclusive + block_wait_until_free) AS waits_are_blocks,
       bool_and(stats_reset IS NOT NULL) AS reset_time_shown
  FROM flexlock_lwlocks;
-- DDL and inserts take these exclusively, snapshots take ProcArray shared.
SELECT tranche, acquire_exclusive > 0 AS exclusive_taken
  FROM flexlock_lwlocks
 WHERE tranche IN ('XidGen', 'WALInsert', 'BufferContent')
 ORDER BY tranche;
SELECT acquire_shared > 0 AS procarray_shared_taken
  FROM flexlock_lwlocks WHERE tranche = 'ProcArray';
SELECT acquire_exclusive >= 5000 AS one_exclusive_buffer_lock_per_row
  FROM flexlock_lwlocks WHERE tranche = 'BufferContent';

-- Every row inserted above wrote a WAL record under an insertion lock, and
-- only buckets of existing locks were used: with wal_insert_locks = N < 8,
-- buckets N..7 stay empty (a server that ignored the setting would spread
-- its processes over 8 locks).
SELECT sum(value) >= 5000 AS one_insertion_lock_per_row,
       bool_and(value = 0 OR substr(counter, 10)::int < current_setting('wal_insert_locks')::int)
       AS only_existing_locks_used
  FROM flexlock_counters
 WHERE family = 'walinsert' AND counter LIKE 'acquires\_%';
SELECT sum(value) FILTER (WHERE counter LIKE 'waits\_%') <=
       sum(value) FILTER (WHERE counter LIKE 'acquires\_%') AS waits_le_acquires,
       sum(value) FILTER (WHERE counter = 'waitfinish_scans') <=
       sum(value) FILTER (WHERE counter = 'waitfinish_calls') AS scans_le_calls
  FROM flexlock_counters WHERE family = 'walinsert';
-- A checkpoint takes all insertion locks at once.
CHECKPOINT;
SELECT value >= 1 AS exclusive_all_counted
  FROM flexlock_counters WHERE family = 'walinsert' AND counter = 'exclusive_all';

-- This backend's own counters
SELECT count(*) > 0 AS my_rows,
       bool_and(backend_type = 'client backend') AS client_backend,
       sum(acquire_exclusive) FILTER (WHERE tranche = 'BufferContent') >= 5000 AS my_buffer_locks
  FROM flexlock_backends(pg_backend_pid());
SELECT count(DISTINCT pid) >= 1 AS live_processes FROM flexlock_backends;

-- A contended spinlock acquisition made up before the reset below: its
-- site is listed now, and not after the reset.
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_old', 1, 0) IS NOT NULL AS called;
SELECT contended FROM flexlock_spinlocks WHERE site = 'flexlock_test_site_old';

-- Reset brings the counters back near zero.
SELECT flexlock_reset() IS NOT NULL AS reset_done;
SELECT acquire_exclusive < 500 AS buffer_locks_near_zero
  FROM flexlock_lwlocks WHERE tranche = 'BufferContent';
SELECT coalesce(sum(acquire_exclusive) FILTER (WHERE tranche = 'BufferContent'), 0) < 500
       AS my_buffer_locks_near_zero
  FROM flexlock_backends(pg_backend_pid());

-- Spinlocks and counter families (a contended acquisition made up at a
-- site of its own, 10 spins and 3 delays, so that the view has a row)
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_check', 10, 3) IS NOT NULL AS called;
SELECT count(*) FILTER (WHERE site = 'flexlock_test_site_check') AS made_up_site,
       count(*) FILTER (WHERE site = 'flexlock_test_site_old') AS site_before_reset,
       bool_and(spins >= contended) AS spins_ge_contended,
       bool_and(contended > 0) AS only_contended_sites
  FROM flexlock_spinlocks;
SELECT family, counter, kind FROM flexlock_counters ORDER BY family, counter;

-- Spinlock counting by call site.  finish_spin_delay() runs with the
-- spinlock held, so a site this process has not met before is attributed
-- later, where no spinlock is held (its next latch wait, or a read of the
-- statistics by the process itself): false first, true once met.
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_a', 10, 3) AS attributed_at_once;
SELECT contended, spins, delays FROM flexlock_spinlocks WHERE site = 'flexlock_test_site_a';
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_a', 5, 1000000) AS attributed_at_once;
SELECT contended, spins, delays FROM flexlock_spinlocks WHERE site = 'flexlock_test_site_a';
-- Several new sites between two flush points, each counted once read.
SELECT bool_or(regress_inject.flexlock_test_spin_delay('flexlock_test_site_' || i, i, 0)) AS any_at_once
  FROM generate_series(1, 5) i;
SELECT site, contended, spins FROM flexlock_spinlocks
  WHERE site ~ '^flexlock_test_site_[0-9]$' ORDER BY site;
-- The most sleeps in one acquisition (no real one comes near a million).
SELECT value FROM flexlock_counters WHERE family = 'spinlock' AND counter = 'max_delays';
-- A reset starts the maxima afresh: the old maximum is gone, and a smaller
-- one set since is shown.
SELECT flexlock_reset() IS NOT NULL AS reset_done;
SELECT value < 1000000 AS max_rebased
  FROM flexlock_counters WHERE family = 'spinlock' AND counter = 'max_delays';
-- (whether this is attributed at once depends on the cache: the five sites
-- above may have taken site_a's entry)
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_a', 1, 500000) IS NOT NULL AS called;
SELECT value FROM flexlock_counters WHERE family = 'spinlock' AND counter = 'max_delays';
-- A process that exits leaves its maximum behind (retired) until the next reset.
\c -
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_b', 1, 700000) AS attributed_at_once;
\c -
-- (the previous backend's exit may still be under way: wait up to 10 s)
DO $$
BEGIN
  FOR i IN 1..1000 LOOP
    EXIT WHEN (SELECT value FROM flexlock_counters
               WHERE family = 'spinlock' AND counter = 'max_delays') = 700000;
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;
SELECT value FROM flexlock_counters WHERE family = 'spinlock' AND counter = 'max_delays';
SELECT flexlock_reset() IS NOT NULL AS reset_done;
SELECT value < 500000 AS retired_max_rebased
  FROM flexlock_counters WHERE family = 'spinlock' AND counter = 'max_delays';
-- Bad input
SELECT regress_inject.flexlock_test_spin_delay('', 1, 0);
SELECT regress_inject.flexlock_test_spin_delay(repeat('x', 48), 1, 0);
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_a', 0, 0);
SELECT regress_inject.flexlock_test_spin_delay('flexlock_test_site_a', 1, -1);

-- The lock variants of this build (their current settings depend on the
-- variant config the suite runs with).
SELECT name, guc, stock_setting, current_setting IS NOT NULL AS has_setting
  FROM flexlock_variants ORDER BY name;


-- Heavyweight locks.  A simple SELECT by primary key locks the table and
-- its index in AccessShareLock: through the fast path with lock_fastpath
-- on, in the shared lock table with it off.  This process's own counters,
-- read before and after; a read alone (the control) counts the lock the
-- read itself takes, and is subtracted.
CREATE FUNCTION regress_hw(OUT fp int8, OUT st int8) AS $$
  SELECT coalesce(sum(fastpath), 0), coalesce(sum(shared_table), 0)
    FROM flexlock_hwlock_backends(pg_backend_pid())
   WHERE locktype = 'relation' AND mode = 'AccessShareLock'
$$ LANGUAGE sql;
SET lock_fastpath = on;
SELECT count(*) FROM regress_flexlock WHERE id = 1;  -- caches warm
SELECT * FROM regress_hw() \gset r0_
SELECT * FROM regress_hw() \gset r1_
SELECT count(*) FROM regress_flexlock WHERE id = 1;
SELECT * FROM regress_hw() \gset r2_
SELECT (:r2_fp - :r1_fp) - (:r1_fp - :r0_fp) AS select_fastpath,
       (:r2_st - :r1_st) - (:r1_st - :r0_st) AS select_shared_table;
-- the same number of relation locks shows in pg_locks, all fast-path
BEGIN;
SELECT count(*) FROM regress_flexlock WHERE id = 1;
SELECT count(*) AS relation_locks, count(*) FILTER (WHERE fastpath) AS fastpath_locks
  FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'relation'
   AND relation IN ('regress_flexlock'::regclass, 'regress_flexlock_pkey'::regclass);
COMMIT;
SET lock_fastpath = off;
SELECT * FROM regress_hw() \gset r0_
SELECT * FROM regress_hw() \gset r1_
SELECT count(*) FROM regress_flexlock WHERE id = 1;
SELECT * FROM regress_hw() \gset r2_
SELECT (:r2_fp - :r1_fp) AS fastpath_while_off,
       (:r2_st - :r1_st) - (:r1_st - :r0_st) AS select_shared_table;
BEGIN;
SELECT count(*) FROM regress_flexlock WHERE id = 1;
SELECT count(*) AS relation_locks, count(*) FILTER (WHERE fastpath) AS fastpath_locks
  FROM pg_locks
 WHERE pid = pg_backend_pid() AND locktype = 'relation'
   AND relation IN ('regress_flexlock'::regclass, 'regress_flexlock_pkey'::regclass);
COMMIT;
-- More relations in one transaction than fast-path slots: some go to the
-- shared table because the slots are full.
SET lock_fastpath = on;
SELECT sum(fastpath_full) AS full0 FROM flexlock_hwlock_backends(pg_backend_pid()) \gset
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXECUTE format('CREATE TEMP TABLE regress_fp_%s ()', i);
  END LOOP;
END
$$;
BEGIN;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXECUTE format('SELECT * FROM regress_fp_%s', i);
  END LOOP;
END
$$;
COMMIT;
SELECT sum(fastpath_full) > coalesce(:'full0'::int8, 0) AS fastpath_slots_exhausted
  FROM flexlock_hwlock_backends(pg_backend_pid());
RESET lock_fastpath;
DO $$
BEGIN
  FOR i IN 1..300 LOOP
    EXECUTE format('DROP TABLE regress_fp_%s', i);
  END LOOP;
END
$$;
-- Sums over processes are at least this process's counts; shares are in [0, 1].
SELECT bool_and(fastpath_share BETWEEN 0 AND 1) AS shares_in_range,
       bool_and(waits >= deadlock_checks OR deadlock_checks = 0) AS checks_only_while_waiting
  FROM flexlock_hwlocks;
SELECT locktype, mode FROM flexlock_hwlocks
 WHERE locktype = 'relation' AND mode = 'AccessShareLock';

-- Relation extension: with relation_extend_pages = N > 0 every extension
-- adds N pages; with 0 a COPY extends by several pages at a time.  The
-- counters are of all processes, and others (autovacuum) extend too, by
-- their own setting: what is exact is the table's own growth (only this
-- session extends it); the counters must hold at least its extensions and
-- pages.  (t/011 checks the counters exactly, on a server of its own.)
CREATE TABLE regress_extend (a int, b text DEFAULT 'some padding text')
  WITH (autovacuum_enabled = off);
CREATE FUNCTION regress_extend_counts(OUT blocks int8, OUT ext int8, OUT pages int8) AS $$
  SELECT pg_relation_size('regress_extend') / 8192,
         max(value) FILTER (WHERE counter = 'extensions'),
         max(value) FILTER (WHERE counter = 'pages')
    FROM flexlock_counters WHERE family = 'extend'
$$ LANGUAGE sql;
SET relation_extend_pages = 1;
SELECT * FROM regress_extend_counts() \gset e0_
COPY regress_extend (a) FROM PROGRAM 'seq 1 20000';
SELECT * FROM regress_extend_counts() \gset e1_
SELECT :e1_blocks - :e0_blocks >= 80 AS many_pages,
       :e1_ext - :e0_ext >= :e1_blocks - :e0_blocks AS one_extension_per_page;
SET relation_extend_pages = 8;
SELECT * FROM regress_extend_counts() \gset e0_
COPY regress_extend (a) FROM PROGRAM 'seq 1 20000';
SELECT * FROM regress_extend_counts() \gset e1_
SELECT :e1_blocks > :e0_blocks AND (:e1_blocks - :e0_blocks) % 8 = 0 AS grew_by_eights,
       :e1_ext - :e0_ext >= (:e1_blocks - :e0_blocks) / 8
         AND :e1_pages - :e0_pages >= :e1_blocks - :e0_blocks AS counted;
SET relation_extend_pages = 0;
SELECT * FROM regress_extend_counts() \gset e0_
COPY regress_extend (a) FROM PROGRAM 'seq 1 20000';
SELECT * FROM regress_extend_counts() \gset e1_
SELECT :e1_pages - :e0_pages > :e1_ext - :e0_ext AS bulk_extension;
RESET relation_extend_pages;
SELECT count(*) FROM regress_extend;
DROP TABLE regress_extend;

-- LWLocks under a spinlock: the lwspin counters move if and only if the
-- server runs with lwlock_implementation = spinlock.
SELECT (sum(value) FILTER (WHERE counter = 'mutex_acquires') > 0) =
       (current_setting('lwlock_implementation') = 'spinlock') AS lwspin_iff_spinlock,
       sum(value) FILTER (WHERE counter = 'mutex_contended') <=
       sum(value) FILTER (WHERE counter = 'mutex_acquires') AS contended_le_acquires
  FROM flexlock_counters WHERE family = 'lwspin';

-- Bad values of the variant GUCs are refused with the usual messages.
SET btree_leaf_exclusive_descent = maybe;
ALTER SYSTEM SET procarray_group_clear = sometimes;
SET procarray_group_clear = off;
SET wal_insert_locks = 8;
ALTER SYSTEM SET wal_insert_locks = 0;
ALTER SYSTEM SET wal_insert_locks = 3;
ALTER SYSTEM SET wal_insert_locks = 256;
SET lwlock_shared_add = sometimes;
ALTER SYSTEM SET wal_flush_wait = sometimes;
SET wal_flush_wait = lsn;
ALTER SYSTEM SET wal_insert_reservation = lockfree;
SET wal_insert_reservation = atomic;
ALTER SYSTEM SET wal_buffer_init = atomic;
SET wal_buffer_init = lockfree;
ALTER SYSTEM SET lwlock_implementation = sometimes;
SET lwlock_implementation = spinlock;
ALTER SYSTEM SET clock_sweep = lockfree;
SET clock_sweep = spinlock;
SET lock_fastpath = sometimes;
SET relation_extend_pages = -1;
SET relation_extend_pages = 65;
SET relation_extend_pages = '1MB';

-- Bad input
SELECT * FROM flexlock_backends(-1);
SELECT * FROM flexlock_backends(0);

-- Privileges: pg_monitor reads, PUBLIC cannot; reset and timing are for superusers.
CREATE ROLE regress_flexlock_reader;
SET ROLE regress_flexlock_reader;
SELECT count(*) FROM flexlock_lwlocks;
SELECT count(*) FROM flexlock_backends();
SELECT flexlock_reset();
RESET ROLE;
GRANT pg_monitor TO regress_flexlock_reader;
SET ROLE regress_flexlock_reader;
SELECT count(*) > 0 AS monitor_reads FROM flexlock_lwlocks;
SELECT count(*) > 0 AS monitor_reads_backends FROM flexlock_backends();
SELECT count(*) > 0 AS monitor_reads_counters FROM flexlock_counters;
SELECT flexlock_reset();
SET lock_stats_timing = off;
RESET ROLE;

-- lock_stats_timing off: sleeps still counted, time not (checked in t/).
SET lock_stats_timing = off;
SHOW lock_stats_timing;
RESET lock_stats_timing;

DROP TABLE regress_flexlock;
DROP FUNCTION regress_hw, regress_extend_counts;
DROP ROLE regress_flexlock_reader;
DROP EXTENSION flexlock;
DROP EXTENSION flexlock_inject;
DROP SCHEMA regress_inject;
