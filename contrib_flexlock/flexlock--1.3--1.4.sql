/* contrib_flexlock/flexlock--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION flexlock UPDATE TO '1.4'" to load this file. \quit

-- Issue 41: flexlock_statements shaped like pg_stat_statements
--
-- Times are named *_time, in milliseconds; a failed statement's call is
-- counted (failed_calls) beside its lock events; stats_since per entry;
-- locks named as pg_stat_activity's wait_event_type and wait_event; the
-- info view's dealloc and stats_reset; flexlock_statements_reset(userid,
-- dbid, queryid); everyone reads the views, and sees the query ids of
-- other roles' statements only as a member of pg_read_all_stats.

DROP VIEW flexlock_statements;
DROP FUNCTION flexlock_statements();
DROP VIEW flexlock_statement_locks;
DROP FUNCTION flexlock_statement_locks();
DROP VIEW flexlock_statements_info;
DROP FUNCTION flexlock_statements_info();

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

-- pg_stat_statements' privileges: everyone reads, superusers reset
GRANT SELECT ON flexlock_statements, flexlock_statement_locks, flexlock_statements_info TO PUBLIC;
REVOKE ALL ON FUNCTION flexlock_statements_reset(oid, oid, int8) FROM PUBLIC;

--
-- flexlock_report(): the section "statements" reads the columns of 1.4.
--
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
