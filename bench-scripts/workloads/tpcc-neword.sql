-- TPC-C New-Order (45% of the mix): 5-15 order lines of NURand items from
-- the home warehouse (the first line from a remote one in about 10% of the
-- orders, where there are several warehouses; about 1% per line as TPC-C);
-- 1% of the orders name an unused item on their last line and roll back.
-- The district row is locked first (d_next_o_id), then the stock rows in
-- (warehouse, item) order, so that new orders do not deadlock each other.
-- :scale is the number of warehouses.
\set w_id random(1, :scale)
\set d_id random(1, 10)
\set c_id ((random(0, 127) | random(1, 300)) + 37) % 300 + 1
\set ol_cnt random(5, 15)
\set i1 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i2 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i3 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i4 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i5 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i6 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i7 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i8 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i9 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i10 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i11 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i12 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i13 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i14 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set i15 ((random(0, 1023) | random(1, 10000)) + 581) % 10000 + 1
\set rbk random(1, 100)
\set sw1 :w_id
\if :scale > 1 and random(1, 100) <= 10
\set sw1 random(1, :scale - 1)
\set sw1 case when :sw1 >= :w_id then :sw1 + 1 else :sw1 end
\endif
\set q random(0, 9)
BEGIN;
UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = :w_id AND d_id = :d_id
  RETURNING d_next_o_id - 1 AS o_id \gset
SELECT w_tax, d_tax, c_discount, c_last, c_credit
  FROM warehouse, district, customer
 WHERE w_id = :w_id AND d_w_id = :w_id AND d_id = :d_id
   AND c_w_id = :w_id AND c_d_id = :d_id AND c_id = :c_id;
INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
  VALUES (:o_id, :d_id, :w_id, :c_id, now(), NULL, :ol_cnt, CASE WHEN :sw1 = :w_id THEN 1 ELSE 0 END);
INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (:o_id, :d_id, :w_id);
SELECT count(*) FROM (
  SELECT 1 FROM stock
   WHERE (s_w_id, s_i_id) IN (SELECT CASE WHEN n = 1 THEN :sw1 ELSE :w_id END,
                                     CASE WHEN :rbk = 1 AND n = :ol_cnt THEN 10001 ELSE (ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[n] END
                                FROM generate_series(1, :ol_cnt) AS n)
   ORDER BY s_w_id, s_i_id FOR UPDATE) AS locked;
WITH l AS (
  SELECT n AS ol_number, CASE WHEN :rbk = 1 AND n = :ol_cnt THEN 10001 ELSE (ARRAY[:i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9, :i10, :i11, :i12, :i13, :i14, :i15]::int[])[n] END AS i_id,
         CASE WHEN n = 1 THEN :sw1 ELSE :w_id END AS supply_w_id, 1 + (:q + 7 * n) % 10 AS qty
    FROM generate_series(1, :ol_cnt) AS n),
q AS (SELECT supply_w_id, i_id, sum(qty)::int AS qty FROM l GROUP BY 1, 2),
s AS (
  UPDATE stock
     SET s_quantity = CASE WHEN s_quantity >= q.qty + 10 THEN s_quantity - q.qty ELSE s_quantity - q.qty + 91 END,
         s_ytd = s_ytd + q.qty, s_order_cnt = s_order_cnt + 1,
         s_remote_cnt = s_remote_cnt + CASE WHEN s_w_id = :w_id THEN 0 ELSE 1 END
    FROM q
   WHERE s_w_id = q.supply_w_id AND s_i_id = q.i_id
  RETURNING s_w_id, s_i_id, CASE :d_id WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 WHEN 10 THEN s_dist_10 END AS dist_info)
INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d,
                        ol_quantity, ol_amount, ol_dist_info)
SELECT :o_id, :d_id, :w_id, l.ol_number, l.i_id, l.supply_w_id, NULL, l.qty, l.qty * i.i_price, s.dist_info
  FROM l JOIN item i ON i.i_id = l.i_id
         JOIN s ON s.s_w_id = l.supply_w_id AND s.s_i_id = l.i_id;
\if :rbk = 1
ROLLBACK;
\else
COMMIT;
\endif
