-- TPC-C Stock-Level (4% of the mix, read-only): how many of the items of a
-- district's last 20 orders have stock below a threshold of 10..20.
-- :scale: warehouses.
\set w_id random(1, :scale)
\set d_id random(1, 10)
\set threshold random(10, 20)
BEGIN;
SELECT count(DISTINCT s_i_id)
  FROM district
  JOIN order_line ON ol_w_id = d_w_id AND ol_d_id = d_id
                 AND ol_o_id >= d_next_o_id - 20 AND ol_o_id < d_next_o_id
  JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id
 WHERE d_w_id = :w_id AND d_id = :d_id AND s_quantity < :threshold;
COMMIT;
