-- The queries of test/extensions/citus.sh, run through the coordinator with
-- pg_dio's scans off and then forced on on every node; the outputs must be
-- identical.  Each starts with a line "== NAME" (citus.sh counts them).
-- Every result is in a stated order; the writes go to the scratch table,
-- emptied first, so both runs start from the same rows.
SET client_min_messages = warning;
\pset null '(null)'

\echo == count
SELECT count(*) FROM orders;
\echo == count_lines
SELECT count(*), sum(qty), sum(price) FROM order_lines;
\echo == count_events
SELECT count(*) FROM events;
\echo == events_by_kind
SELECT kind, count(*), min(at), max(at) FROM events GROUP BY kind ORDER BY kind;
\echo == join_events
SELECT o.status, e.kind, count(*) FROM orders o JOIN events e ON e.order_id = o.id
WHERE o.customer_id BETWEEN 100 AND 300 GROUP BY 1, 2 ORDER BY 1, 2;
\echo == index_range
SELECT id, customer_id, amount, status FROM orders WHERE customer_id BETWEEN 1000 AND 1004 ORDER BY id;
\echo == index_range_date
SELECT count(*), sum(amount), min(id), max(id) FROM orders WHERE created BETWEEN '2024-02-01' AND '2024-02-03';
\echo == index_range_pkey
SELECT id, amount, note FROM orders WHERE id BETWEEN 150000 AND 150040 ORDER BY id;
\echo == index_only
SELECT count(*), sum(customer_id) FROM orders WHERE customer_id < 40;
\echo == in_list
SELECT id, status FROM orders WHERE customer_id = ANY (ARRAY[7, 77, 777, 4999]) ORDER BY id;
\echo == join_colocated
SELECT o.status, count(*), sum(l.qty * l.price) FROM orders o JOIN order_lines l ON l.order_id = o.id
WHERE o.customer_id BETWEEN 10 AND 60 GROUP BY o.status ORDER BY o.status;
\echo == join_colocated_full
SELECT count(*), sum(l.qty), sum(o.amount) FROM orders o JOIN order_lines l ON l.order_id = o.id WHERE o.status = 'paid';
\echo == join_reference
SELECT p.category, count(*), sum(l.qty) FROM order_lines l JOIN products p ON p.id = l.product_id
GROUP BY p.category ORDER BY p.category;
\echo == join_reference_index
SELECT l.order_id, l.line, p.name FROM order_lines l JOIN products p ON p.id = l.product_id
WHERE l.product_id IN (17, 18) AND l.order_id < 20000 ORDER BY 1, 2;
\echo == group_by
SELECT status, count(*), min(amount), max(amount), sum(amount) FROM orders GROUP BY status ORDER BY status;
\echo == group_by_distcol_having
SELECT order_id, sum(qty) FROM order_lines GROUP BY order_id HAVING sum(qty) >= 15 ORDER BY order_id LIMIT 20;
\echo == count_distinct
SELECT count(DISTINCT customer_id), count(DISTINCT created) FROM orders;
\echo == order_by_limit
SELECT id, amount FROM orders ORDER BY amount DESC, id LIMIT 15;
\echo == order_by_index_limit
SELECT id, created FROM orders ORDER BY created, id LIMIT 10;
\echo == order_by_pkey_limit
SELECT id, customer_id FROM orders WHERE id > 123456 ORDER BY id LIMIT 10;
\echo == router
SELECT * FROM orders WHERE id = 4242;
\echo == router_lines
SELECT * FROM order_lines WHERE order_id = 4242 ORDER BY line;
\echo == router_join
SELECT o.id, l.line, l.qty FROM orders o JOIN order_lines l ON l.order_id = o.id WHERE o.id = 99999 ORDER BY l.line;
\echo == subquery_pushdown
SELECT count(*), sum(t.total) FROM (SELECT order_id, sum(qty * price) AS total FROM order_lines GROUP BY order_id) t
WHERE t.total > 500;
\echo == subquery_in
SELECT count(*), sum(amount) FROM orders WHERE id IN (SELECT order_id FROM order_lines WHERE product_id = 17);
\echo == cte_recursive_planning
WITH top AS (SELECT customer_id, sum(amount) AS s FROM orders GROUP BY customer_id ORDER BY s DESC, customer_id LIMIT 5)
SELECT o.id, o.customer_id FROM orders o JOIN top USING (customer_id) ORDER BY o.id LIMIT 20;
\echo == window_pushdown
SELECT order_id, line, rank() OVER (PARTITION BY order_id ORDER BY price DESC, line) FROM order_lines
WHERE order_id BETWEEN 100 AND 105 ORDER BY 1, 2;
\echo == nulls
SELECT count(*), count(note), sum(length(note)) FROM orders WHERE note IS NULL OR length(note) > 40;
\echo == insert_select
TRUNCATE scratch;
INSERT INTO scratch SELECT * FROM orders WHERE customer_id BETWEEN 2000 AND 2200;
INSERT INTO scratch SELECT * FROM orders WHERE id BETWEEN 50001 AND 51000 ON CONFLICT (id) DO NOTHING;
SELECT count(*), sum(amount), min(id), max(id) FROM scratch;
\echo == insert_select_join
INSERT INTO scratch (id, customer_id, amount, status, created, note)
	SELECT o.id + 1000000, o.customer_id, sum(l.qty * l.price), 'lines', o.created, NULL
	FROM orders o JOIN order_lines l ON l.order_id = o.id WHERE o.customer_id BETWEEN 3000 AND 3010
	GROUP BY o.id, o.customer_id, o.created;
SELECT count(*), sum(amount) FROM scratch WHERE status = 'lines';
\echo == update
UPDATE scratch SET amount = amount + 1, note = 'updated' WHERE created BETWEEN '2024-03-01' AND '2024-03-10';
UPDATE scratch SET status = 'big' WHERE customer_id BETWEEN 2100 AND 2150 AND amount > 500;
UPDATE scratch SET amount = 0 WHERE id = 50500;
SELECT status, count(*), sum(amount), count(note) FILTER (WHERE note = 'updated') FROM scratch GROUP BY status ORDER BY status;
\echo == update_from_reference
UPDATE scratch s SET note = p.name FROM products p WHERE p.id = s.customer_id AND s.customer_id < 1000;
SELECT count(*) FROM scratch WHERE note LIKE 'product %';
\echo == delete
DELETE FROM scratch WHERE status = 'cancelled';
DELETE FROM scratch WHERE id BETWEEN 50100 AND 50200;
DELETE FROM scratch WHERE id IN (SELECT order_id FROM order_lines WHERE product_id = 500);
SELECT count(*), sum(amount) FROM scratch;
\echo == scratch_contents
SELECT md5(string_agg(id || ':' || customer_id || ':' || amount || ':' || status || ':' || created || ':' ||
	coalesce(note, '-'), ',' ORDER BY id)) FROM scratch;
