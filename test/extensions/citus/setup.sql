-- Distributed tables for test/extensions/citus.sh: orders, its lines and
-- events (without an index: its count(*) is a sequential scan, not an
-- index-only one), hash-distributed and co-located (8 shards over two
-- workers), a reference table, and a scratch table for the writes.  VACUUM sets the visibility
-- map, so DirectSeqScan reads the shards' blocks directly.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET citus.shard_count = 8;
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id int NOT NULL, amount numeric NOT NULL,
	status text NOT NULL, created date NOT NULL, note text);
SELECT create_distributed_table('orders', 'id');
CREATE TABLE order_lines (order_id bigint NOT NULL, line int NOT NULL, product_id int NOT NULL,
	qty int NOT NULL, price numeric NOT NULL, PRIMARY KEY (order_id, line));
SELECT create_distributed_table('order_lines', 'order_id', colocate_with => 'orders');
CREATE TABLE events (order_id bigint NOT NULL, kind text NOT NULL, at timestamptz NOT NULL);
SELECT create_distributed_table('events', 'order_id', colocate_with => 'orders');
CREATE TABLE products (id int PRIMARY KEY, name text NOT NULL, category text NOT NULL);
SELECT create_reference_table('products');
CREATE TABLE scratch (LIKE orders INCLUDING ALL);
SELECT create_distributed_table('scratch', 'id', colocate_with => 'orders');

INSERT INTO products SELECT g, 'product ' || g, 'cat' || (g % 10) FROM generate_series(1, 1000) g;
INSERT INTO orders
	SELECT g, (g * 7919) % 5000, (g % 997) + 0.5, (ARRAY['new', 'paid', 'shipped', 'cancelled'])[g % 4 + 1],
		date '2024-01-01' + (g / 600), CASE WHEN g % 10 = 0 THEN NULL ELSE repeat('x', g % 50) END
	FROM generate_series(1, 200000) g;
INSERT INTO order_lines
	SELECT o, l, (o * 31 + l) % 1000 + 1, (o + l) % 5 + 1, ((o * l) % 100) + 0.25
	FROM generate_series(1, 200000) o, generate_series(1, 3) l;
INSERT INTO events
	SELECT g % 200000 + 1, (ARRAY['viewed', 'paid', 'shipped'])[g % 3 + 1], timestamptz '2024-01-01 00:00+00' + g * interval '1 minute'
	FROM generate_series(1, 300000) g;
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_created ON orders (created);
CREATE INDEX order_lines_product ON order_lines (product_id);
VACUUM ANALYZE orders;
VACUUM ANALYZE order_lines;
VACUUM ANALYZE products;
VACUUM ANALYZE events;
