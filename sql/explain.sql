--
-- EXPLAIN (ANALYZE, LOCKS) (flexlock 1.3): the lock events of each plan
-- node.  Assertions are relations, not numbers, and hold under every
-- variant config.  The option exists once the library is loaded
-- (sql/unloaded.sql: not before).
--
LOAD 'flexlock';
CREATE TABLE regress_explain (id int PRIMARY KEY, v int);
INSERT INTO regress_explain SELECT g, g FROM generate_series(1, 1000) g;
VACUUM ANALYZE regress_explain;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

CREATE FUNCTION pg_temp.regress_plan(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
  p json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) ' || q INTO p;
  RETURN p -> 0 -> 'Plan';
END
$$;

-- An index scan takes the content and mapping locks of the buffers it
-- reads in shared mode, at its own node
SELECT p ->> 'Node Type' AS node,
       (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(p -> 'Locks') l
         WHERE l ->> 'Lock' = 'BufferContent' AND l ->> 'Mode' = 'shared') >= 2 AS content_shared,
       (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(p -> 'Locks') l
         WHERE l ->> 'Lock' = 'BufferMapping' AND l ->> 'Mode' = 'shared') >= 2 AS mapping_shared,
       (SELECT bool_and(l::jsonb ?& array['Lock Kind', 'Lock', 'Mode', 'Acquisitions', 'Sleeps', 'Sleep Time'])
          FROM json_array_elements(p -> 'Locks') l WHERE l ->> 'Lock Kind' = 'lwlock') AS lwlock_keys
  FROM pg_temp.regress_plan('SELECT v FROM regress_explain WHERE id = 42') p;

-- A node's figures include its children's, as BUFFERS does: a Limit over
-- the index scan shows at least what the scan shows
WITH p AS (SELECT pg_temp.regress_plan('SELECT v FROM regress_explain WHERE id > 10 ORDER BY id LIMIT 5') p),
n AS (
  SELECT p ->> 'Node Type' AS node, p -> 'Locks' AS locks FROM p
  UNION ALL
  SELECT c ->> 'Node Type', c -> 'Locks' FROM p, json_array_elements(p -> 'Plans') c)
SELECT node, (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(locks) l
               WHERE l ->> 'Lock' = 'BufferContent') > 0 AS content
  FROM n ORDER BY node;
SELECT (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(p -> 'Locks') l) >=
       (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(p -> 'Plans' -> 0 -> 'Locks') l)
       AS parent_includes_child
  FROM pg_temp.regress_plan('SELECT v FROM regress_explain WHERE id > 10 ORDER BY id LIMIT 5') p;

-- A node's own interval starts at its call: a nested loop's inner index
-- scan is called after its outer scan read buffers, and does not count them
-- (the join, reading none itself, shows exactly the sum of its children)
SET enable_hashjoin = off;
SET enable_mergejoin = off;
WITH p AS (SELECT pg_temp.regress_plan('SELECT a.v FROM regress_explain a JOIN regress_explain b ON b.id = a.v WHERE a.id <= 20') p),
n AS (
  SELECT 0 AS k, p ->> 'Node Type' AS node, p -> 'Locks' AS locks FROM p
  UNION ALL
  SELECT c.k, c.c ->> 'Node Type', c.c -> 'Locks' FROM p, json_array_elements(p -> 'Plans') WITH ORDINALITY c(c, k)),
a AS (
  SELECT k, node, (SELECT sum((l ->> 'Acquisitions')::int) FROM json_array_elements(locks) l
                    WHERE l ->> 'Lock' = 'BufferContent') AS content FROM n)
SELECT (SELECT node FROM a WHERE k = 0) AS node,
       (SELECT content FROM a WHERE k = 0) = (SELECT sum(content) FROM a WHERE k > 0) AS sum_of_children,
       (SELECT bool_and(content > 0) FROM a) AS each_reads;
RESET enable_hashjoin;
RESET enable_mergejoin;

-- An INSERT: its relation lock and transaction id at the ModifyTable node
SELECT p ->> 'Node Type' AS node,
       (SELECT string_agg(l ->> 'Lock' || ' ' || (l ->> 'Mode'), ', ' ORDER BY l ->> 'Lock', l ->> 'Mode')
          FROM json_array_elements(p -> 'Locks') l WHERE l ->> 'Lock Kind' = 'hwlock') AS hwlocks
  FROM pg_temp.regress_plan('INSERT INTO regress_explain VALUES (1001, 1)') p;

-- Text and YAML, and nothing without LOCKS
DO $$
DECLARE
  line text;
  n int := 0;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT v FROM regress_explain WHERE id = 42'
  LOOP
    IF line ~ '^\s+LWLocks: .*BufferContent shared=[1-9]' THEN
      n := n + 1;
    END IF;
  END LOOP;
  RAISE NOTICE 'text: % line(s) with BufferContent shared acquisitions', n;
  n := 0;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, LOCKS, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF, FORMAT YAML) SELECT v FROM regress_explain WHERE id = 42'
  LOOP
    IF line ~ '- Lock Kind: "lwlock"' THEN
      n := n + 1;
    END IF;
  END LOOP;
  RAISE NOTICE 'yaml: a list of locks: %', n > 0;
  n := 0;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT v FROM regress_explain WHERE id = 42'
  LOOP
    IF line ~ 'LWLocks|Locks' THEN
      n := n + 1;
    END IF;
  END LOOP;
  RAISE NOTICE 'without LOCKS: % lock line(s)', n;
END
$$;

-- Bad input
EXPLAIN (LOCKS) SELECT 1;
EXPLAIN (ANALYZE, LOCKS maybe) SELECT 1;
EXPLAIN (ANALYZE, LOCKS false, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) SELECT 1;

DROP TABLE regress_explain;
