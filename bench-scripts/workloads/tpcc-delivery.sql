-- TPC-C Delivery (4% of the mix): for each of the warehouse's 10 districts
-- in order, the oldest undelivered order leaves new_order, gets its carrier
-- and its lines' delivery date, and its customer's balance grows by the
-- lines' amounts (a district with none is skipped, as TPC-C allows; so is
-- one whose oldest order a concurrent Delivery took first).  One statement
-- per district, all in one transaction, districts in order so that two
-- Deliveries of a warehouse do not deadlock.  :scale: warehouses.
\set w_id random(1, :scale)
\set carrier random(1, 10)
BEGIN;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 1
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 1)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 2
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 2)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 3
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 3)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 4
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 4)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 5
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 5)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 6
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 6)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 7
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 7)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 8
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 8)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 9
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 9)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
WITH no AS (
  DELETE FROM new_order
   WHERE no_w_id = :w_id AND no_d_id = 10
     AND no_o_id = (SELECT min(no_o_id) FROM new_order WHERE no_w_id = :w_id AND no_d_id = 10)
  RETURNING no_w_id, no_d_id, no_o_id),
o AS (
  UPDATE orders SET o_carrier_id = :carrier FROM no
   WHERE o_w_id = no_w_id AND o_d_id = no_d_id AND o_id = no_o_id
  RETURNING o_w_id, o_d_id, o_c_id),
ol AS (
  UPDATE order_line SET ol_delivery_d = now() FROM no
   WHERE ol_w_id = no_w_id AND ol_d_id = no_d_id AND ol_o_id = no_o_id
  RETURNING ol_amount)
UPDATE customer
   SET c_balance = c_balance + (SELECT coalesce(sum(ol_amount), 0) FROM ol), c_delivery_cnt = c_delivery_cnt + 1
  FROM o
 WHERE c_w_id = o.o_w_id AND c_d_id = o.o_d_id AND c_id = o.o_c_id;
COMMIT;
