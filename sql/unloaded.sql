--
-- What needs the library preloaded (shared_preload_libraries), on a server
-- that does not preload it: make check's sql suite runs this, `make
-- installcheck` does not (a server of make server preloads flexlock).
--

-- EXPLAIN's option LOCKS exists once the library is loaded
-- (sql/explain.sql), not before (CREATE EXTENSION loads it)
EXPLAIN (ANALYZE, LOCKS) SELECT 1;

CREATE EXTENSION flexlock;

-- flexlock 1.3: statements are tracked only with the library preloaded
-- (t/020_statements.pl): here the report has no section for them, and the
-- views say what is missing.
SELECT flexlock_statements_tracking() AS tracking;
SELECT count(*) AS statement_rows FROM flexlock_report() WHERE section = 'statements';
SELECT * FROM flexlock_statements;
SELECT * FROM flexlock_statements_info;

-- the statements' views (1.4) are everyone's, as pg_stat_statements' are:
-- a role without pg_monitor gets as far as the library's complaint; their
-- reset is the superuser's
CREATE ROLE regress_unloaded_reader;
SET ROLE regress_unloaded_reader;
SELECT count(*) FROM flexlock_statements;
SELECT count(*) FROM flexlock_statement_locks;
SELECT count(*) FROM flexlock_statements_info;
SELECT flexlock_statements_reset();
RESET ROLE;
DROP ROLE regress_unloaded_reader;
DROP EXTENSION flexlock;
