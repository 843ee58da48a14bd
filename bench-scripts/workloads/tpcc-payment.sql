-- TPC-C Payment (43% of the mix): a payment of 1.00..5000.00 to the
-- warehouse and district year-to-date totals and from a customer's balance
-- (of a remote warehouse in 15% of them, where there are several); the
-- customer found by last name in 60% (the middle one by first name of the
-- three customers per name), else by NURand id; a history row.
-- Locks warehouse, then district, then customer.  :scale: warehouses.
\set w_id random(1, :scale)
\set d_id random(1, 10)
\set c_w_id :w_id
\set c_d_id :d_id
\if :scale > 1 and random(1, 100) <= 15
\set c_w_id random(1, :scale - 1)
\set c_w_id case when :c_w_id >= :w_id then :c_w_id + 1 else :c_w_id end
\set c_d_id random(1, 10)
\endif
\set amount random(100, 500000)
\set byname random(1, 100) <= 60
\set k ((random(0, 31) | random(0, 99)) + 19) % 100
\set c_id ((random(0, 127) | random(1, 300)) + 37) % 300 + 1
BEGIN;
UPDATE warehouse SET w_ytd = w_ytd + :amount / 100.0 WHERE w_id = :w_id;
UPDATE district SET d_ytd = d_ytd + :amount / 100.0 WHERE d_w_id = :w_id AND d_id = :d_id;
\if :byname
SELECT c_id FROM (
  SELECT c_id, row_number() OVER (ORDER BY c_first) AS rn, count(*) OVER () AS n
    FROM customer
   WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id
     AND c_last = (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k / 100 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k / 10 % 10 + 1]
              || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:k % 10 + 1]) AS c
 WHERE rn = (n + 1) / 2 \gset
\endif
UPDATE customer
   SET c_balance = c_balance - :amount / 100.0, c_ytd_payment = c_ytd_payment + :amount / 100.0,
       c_payment_cnt = c_payment_cnt + 1,
       c_data = CASE WHEN c_credit = 'BC'
                     THEN left(concat_ws(' ', c_id, c_d_id, c_w_id, :d_id, :w_id, :amount / 100.0, '|') || c_data, 500)
                     ELSE c_data END
 WHERE c_w_id = :c_w_id AND c_d_id = :c_d_id AND c_id = :c_id;
INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
SELECT :c_id, :c_d_id, :c_w_id, :d_id, :w_id, now(), :amount / 100.0, left(w_name || '    ' || d_name, 24)
  FROM warehouse, district WHERE w_id = :w_id AND d_w_id = :w_id AND d_id = :d_id;
COMMIT;
