-- TPC-C Order-Status (4% of the mix, read-only): a customer's balance (found
-- by last name in 60%, as in Payment, else by NURand id), its latest order
-- and that order's lines.  :scale: warehouses.
\set w_id random(1, :scale)
\set d_id random(1, 10)
\set byname random(1, 100) <= 60
\set k ((random(0, 31) | random(0, 99)) + 19) % 100
\set c_id ((random(0, 127) | random(1, 300)) + 37) % 300 + 1
BEGIN;
\if :byname
SELECT c_id FROM (
  SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, count(*) OVER () AS n
    FROM customer
   WHERE c_w_id = :w_id AND c_d_id = :d_id
     AND c_last = (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k / 100 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k / 10 % 10 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k % 10 + 1]) AS c
 WHERE rn = (n + 1) / 2 \gset
\endif
SELECT c_balance, c_first, c_middle, c_last FROM customer
 WHERE c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
SELECT o_id, o_entry_d, o_carrier_id FROM orders
 WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id
 ORDER BY o_id DESC LIMIT 1;
SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line
 WHERE ol_w_id = :w_id AND ol_d_id = :d_id
   AND ol_o_id = (SELECT max(o_id) FROM orders WHERE o_w_id = :w_id AND o_d_id = :d_id AND o_c_id = :c_id);
COMMIT;
