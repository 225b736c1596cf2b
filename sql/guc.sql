--
-- guc: pg_dio's settings, their units, bounds and who may set them
--
SELECT name, setting, unit, min_val, max_val, boot_val, context, vartype
  FROM pg_settings WHERE name LIKE 'pg_dio.%' ORDER BY name;
-- the test-only fault injection settings are hidden from pg_settings and
-- SHOW ALL (and from postgresql.conf.sample), but can be shown and set
SELECT count(*) AS hidden_listed FROM pg_settings WHERE name LIKE 'pg_dio.inject%';
SET pg_dio.inject_fault = 'fsync';
SHOW pg_dio.inject_fault;
RESET pg_dio.inject_fault;

SHOW pg_dio.queue_depth;
SHOW pg_dio.io_size;
SHOW pg_dio.inject_fault;

-- units and bounds
SET pg_dio.io_size = '1MB';
SHOW pg_dio.io_size;
SET pg_dio.io_size = 64;
SHOW pg_dio.io_size;
SET pg_dio.io_size = '12kB';	-- not a multiple of the block size
SET pg_dio.io_size = '4kB';
SET pg_dio.io_size = '2MB';
SHOW pg_dio.io_size;
RESET pg_dio.io_size;
SET pg_dio.queue_depth = 0;
SET pg_dio.queue_depth = 129;
SET pg_dio.queue_depth = 128;
SHOW pg_dio.queue_depth;
RESET pg_dio.queue_depth;
SET pg_dio.inject_fault = 'bogus';
SELECT enumvals FROM pg_settings WHERE name = 'pg_dio.resident_sweep';
SET pg_dio.resident_sweep = 'sometimes';
SET pg_dio.inject_delay = 0;
SET pg_dio.inject_delay = '1s';
SHOW pg_dio.inject_delay;
RESET pg_dio.inject_delay;

-- the prefix is reserved
SET pg_dio.no_such_setting = 1;

-- the fault injection settings are superuser-only; the others are not
CREATE ROLE regress_dio_guc;
SET ROLE regress_dio_guc;
SET pg_dio.inject_fault = 'eio';
SET pg_dio.inject_delay = '1s';
SET pg_dio.io_size = '128kB';
SET pg_dio.queue_depth = 8;
SHOW pg_dio.io_size;
SHOW pg_dio.queue_depth;
RESET ROLE;
RESET ALL;
DROP ROLE regress_dio_guc;
