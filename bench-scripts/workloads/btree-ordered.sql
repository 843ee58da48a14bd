-- Ordered inserts: every client inserts at the rightmost b-tree leaf.
INSERT INTO ordered_ins (v) VALUES (1);
