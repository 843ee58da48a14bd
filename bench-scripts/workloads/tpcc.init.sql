-- TPC-C-like schema and initial data for {scale} warehouses (the workload's
-- scale).  Scaled down by 10 from TPC-C so that 4 warehouses load in seconds
-- on 2 cores: 300 customers per district (TPC-C: 3000), 10000 items
-- (100000) and so 10000 stock rows per warehouse, 300 initial orders per
-- district (one per customer), the last 90 of them undelivered (in
-- new_order; TPC-C: 900 of 3000).  The ten districts per warehouse are as in
-- TPC-C.  c_last: the TPC-C syllables of (c_id - 1) % 100, three customers
-- per name and district (TPC-C's ratio).  Deterministic: setseed below.
SELECT setseed(0.002);

CREATE TABLE warehouse (
    w_id int NOT NULL, w_name varchar(10), w_street_1 varchar(20), w_street_2 varchar(20),
    w_city varchar(20), w_state char(2), w_zip char(9), w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (
    d_id int NOT NULL, d_w_id int NOT NULL, d_name varchar(10), d_street_1 varchar(20),
    d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9),
    d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int);
CREATE TABLE customer (
    c_id int NOT NULL, c_d_id int NOT NULL, c_w_id int NOT NULL, c_first varchar(16),
    c_middle char(2), c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20),
    c_city varchar(20), c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp,
    c_credit char(2), c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2),
    c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500));
CREATE TABLE history (
    h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int, h_date timestamp,
    h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE new_order (no_o_id int NOT NULL, no_d_id int NOT NULL, no_w_id int NOT NULL);
CREATE TABLE orders (
    o_id int NOT NULL, o_d_id int NOT NULL, o_w_id int NOT NULL, o_c_id int, o_entry_d timestamp,
    o_carrier_id int, o_ol_cnt int, o_all_local int);
CREATE TABLE order_line (
    ol_o_id int NOT NULL, ol_d_id int NOT NULL, ol_w_id int NOT NULL, ol_number int NOT NULL,
    ol_i_id int, ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int,
    ol_amount numeric(6,2), ol_dist_info char(24));
CREATE TABLE item (
    i_id int NOT NULL, i_im_id int, i_name varchar(24), i_price numeric(5,2), i_data varchar(50));
CREATE TABLE stock (
    s_i_id int NOT NULL, s_w_id int NOT NULL, s_quantity int,
    s_dist_01 char(24), s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
    s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24), s_dist_10 char(24),
    s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50));

-- filler text: md5 strings cut to TPC-C-like lengths
INSERT INTO item
SELECT i, 1 + (random() * 9999)::int, left(md5(random()::text), 14 + i % 11),
       (1 + random() * 99)::numeric(5,2),
       CASE WHEN random() < 0.1 THEN 'ORIGINAL' ELSE '' END || left(md5(random()::text) || md5(i::text), 26 + i % 17)
FROM generate_series(1, 10000) AS i;

INSERT INTO warehouse
SELECT w, 'W' || w, 'street one ' || w, 'street two ' || w, 'city ' || w, 'ST', lpad(w::text, 4, '0') || '11111',
       (random() * 0.2)::numeric(4,4), 300000.00
FROM generate_series(1, {scale}) AS w;

INSERT INTO district
SELECT d, w, 'D' || d || '-' || w, 'street one', 'street two', 'city ' || d, 'ST', lpad(d::text, 4, '0') || '11111',
       (random() * 0.2)::numeric(4,4), 30000.00, 301
FROM generate_series(1, {scale}) AS w, generate_series(1, 10) AS d;

INSERT INTO customer
SELECT c, d, w, left(md5(random()::text), 8 + c % 9), 'OE',
       (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[(c - 1) % 100 / 100 + 1]
       || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[(c - 1) % 100 / 10 % 10 + 1]
       || (ARRAY['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[(c - 1) % 10 + 1],
       'street one', 'street two', 'city ' || d, 'ST', lpad(c::text, 4, '0') || '11111',
       lpad((c * 7919)::text, 16, '0'), now(),
       CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000.00, (random() * 0.5)::numeric(4,4),
       -10.00, 10.00, 1, 0,
       left(repeat(md5(random()::text), 16), 300 + c % 201)
FROM generate_series(1, {scale}) AS w, generate_series(1, 10) AS d, generate_series(1, 300) AS c;

INSERT INTO history
SELECT c, d, w, d, w, now(), 10.00, left(md5(random()::text), 12 + c % 13)
FROM generate_series(1, {scale}) AS w, generate_series(1, 10) AS d, generate_series(1, 300) AS c;

-- o_c_id: a permutation of the customers per district (7 is prime to 300)
INSERT INTO orders
SELECT o, d, w, ((o - 1) * 7 + d) % 300 + 1, now(),
       CASE WHEN o <= 210 THEN 1 + (random() * 9)::int END, 5 + (o * 7 + d + w) % 11, 1
FROM generate_series(1, {scale}) AS w, generate_series(1, 10) AS d, generate_series(1, 300) AS o;

INSERT INTO new_order
SELECT o_id, o_d_id, o_w_id FROM orders WHERE o_id > 210;

INSERT INTO order_line
SELECT o_id, o_d_id, o_w_id, n, 1 + (random() * 9999)::int, o_w_id,
       CASE WHEN o_id <= 210 THEN o_entry_d END, 5,
       CASE WHEN o_id <= 210 THEN 0.00 ELSE (random() * 9999.99)::numeric(6,2) END,
       left(md5(random()::text), 24)
FROM orders, generate_series(1, o_ol_cnt) AS n;

INSERT INTO stock
SELECT i, w, 10 + (random() * 90)::int,
       left(md5(random()::text), 24), left(md5(random()::text), 24), left(md5(random()::text), 24),
       left(md5(random()::text), 24), left(md5(random()::text), 24), left(md5(random()::text), 24),
       left(md5(random()::text), 24), left(md5(random()::text), 24), left(md5(random()::text), 24),
       left(md5(random()::text), 24), 0, 0, 0,
       CASE WHEN random() < 0.1 THEN 'ORIGINAL' ELSE '' END || left(md5(random()::text) || md5(i::text), 26 + i % 17)
FROM generate_series(1, {scale}) AS w, generate_series(1, 10000) AS i;

ALTER TABLE warehouse ADD PRIMARY KEY (w_id);
ALTER TABLE district ADD PRIMARY KEY (d_w_id, d_id);
ALTER TABLE customer ADD PRIMARY KEY (c_w_id, c_d_id, c_id);
ALTER TABLE new_order ADD PRIMARY KEY (no_w_id, no_d_id, no_o_id);
ALTER TABLE orders ADD PRIMARY KEY (o_w_id, o_d_id, o_id);
ALTER TABLE order_line ADD PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number);
ALTER TABLE item ADD PRIMARY KEY (i_id);
ALTER TABLE stock ADD PRIMARY KEY (s_w_id, s_i_id);
CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first);
CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id);
