-- Random-key inserts: clients spread over the b-tree leaves.
\set k random(1, 1000000000)
INSERT INTO random_ins VALUES (:k, 1);
