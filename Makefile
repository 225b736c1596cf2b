# pg_dio: PGXS build.  PG_CONFIG may be given; otherwise the PostgreSQL 18
# found by test/scripts/pg_config.sh (PATH, then the project venv) is used.
#
#   make demo     set up, build, install, run the demo on a throwaway cluster
#   make test PG=19   the same suites against PostgreSQL 19 built from source
#                     (PG=18: 18.6 built from source, with liburing)
#   make test IO_METHOD=io_uring   the test clusters with that io_method
#   make test     set up, build, install, run every test suite
#   make stress   the same with a 5-minute differential stress run
#   make test-extensions   the suites of extensions users run beside pg_dio
#                 (TimescaleDB, Citus, pgvector, pg_hint_plan, contrib), pg_dio's
#                 scans off vs forced on, against 18.6 built from source
#   make bench    the benchmark suite (see test/bench/)
#   make cluster / make cluster-stop   a throwaway cluster for a human

EXTENSION  = pg_dio
EXTVERSION = $(shell sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" $(EXTENSION).control)
MODULE_big = pg_dio
OBJS       = $(patsubst %.c,%.o,$(wildcard src/*.c))
DATA       = src/pg_dio--1.0.sql
PGFILEDESC = "pg_dio - direct I/O reads, index prefetch and AIO diagnostics"

# pg_regress suites (sql/ + expected/), run by test/run_tests.sh against a
# throwaway cluster with pg_dio preloaded, and by `make installcheck` against
# a running server that preloads pg_dio (PGHOST, PGPORT, PGUSER: a
# superuser).  A suite that needs what a server may lack (a contrib module,
# data checksums, a kernel that heeds POSIX_FADV_WILLNEED, PostgreSQL 19)
# says so and stops.
# (nopreload needs a server without pg_dio: test/run_tests.sh only.)
REGRESS    = setup guc engine faults limits checksums views bad_input cancel segments direct_scan tools prefetch_scan prefetch_prune prefetch_selfread os_cache core_parity probe_prefetch explain_io io_timing statements

PG_CPPFLAGS += -DPG_DIO_VERSION=\"$(EXTVERSION)\" -Wall -Wextra \
	-Wno-unused-parameter  # PostgreSQL headers and callback signatures
ifeq ($(CI),true)
PG_CPPFLAGS += -Werror
endif
SHLIB_LINK += -luring

# PG=18 or PG=19: PostgreSQL built from source with liburing
# (test/scripts/build_pg.sh, cached outside the checkout) instead of the
# default, for every target below
ifdef PG
PG_CONFIG := $(shell test/scripts/build_pg.sh $(PG))
ifeq ($(PG_CONFIG),)
$(error no PostgreSQL $(PG) build: see test/scripts/build_pg.sh)
endif
export PG_CONFIG
export PG
endif
PG_CONFIG ?= $(shell test/scripts/pg_config.sh 2>/dev/null)
# IO_METHOD=worker|sync|io_uring: the io_method of the test clusters
ifdef IO_METHOD
export PG_DIO_IO_METHOD := $(IO_METHOD)
endif

ifneq ($(PG_CONFIG),)
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)
# objects built against another PostgreSQL (the test matrix builds against
# several) are removed first: nothing else tells make they are stale
PG_BUILT_FOR := $(shell cat .pg_config_used 2>/dev/null)
ifneq ($(PG_BUILT_FOR),$(realpath $(PG_CONFIG)))
$(shell rm -f $(OBJS) $(MODULE_big).so; echo '$(realpath $(PG_CONFIG))' > .pg_config_used)
endif
# The PyPI build of PostgreSQL was compiled with a newer gcc than Debian 12's:
# drop the warning options this compiler does not know.
CC_UNKNOWN_FLAGS := $(shell for f in -Wmissing-variable-declarations; do \
	echo 'int x;' | $(CC) $$f -x c -c -o /dev/null - 2>/dev/null || echo $$f; done)
override CFLAGS := $(filter-out $(CC_UNKNOWN_FLAGS),$(CFLAGS))
# PostgreSQL's checksum algorithm built for AVX2 (src/verify_avx2.c; used
# only on CPUs that have it), vectorized like core's own build of it
ifeq ($(shell uname -m),x86_64)
src/verify_avx2.o: override CFLAGS += -mavx2 -funroll-loops -ftree-vectorize
endif
# every object is rebuilt when the shared header changes (PGXS tracks header
# dependencies only in a server built with --enable-depend): its inline
# functions and struct layouts are compiled into each object, and one built
# against an older layout links without complaint
$(OBJS): $(wildcard src/*.h)
else
all install installcheck:
	@echo "pg_dio: no PostgreSQL 18 found; run 'make demo', 'make test' or test/setup.sh first" >&2; exit 1
endif

.PHONY: setup demo test test-extensions stress sanitize bench cluster cluster-stop

setup:
	test/setup.sh

demo: setup
	$(MAKE) PG_CONFIG=$$(test/scripts/pg_config.sh) install
	test/demo.sh

test: setup
	$(MAKE) PG_CONFIG=$$(test/scripts/pg_config.sh) install
	test/run_tests.sh $(REGRESS)

# EXTENSIONS: some of test/extensions/*.sh (all by default)
test-extensions: setup
	test/extensions/run.sh $(EXTENSIONS)

# the test suites with a long differential stress run (PG_DIO_STRESS_SECONDS)
stress: setup
	$(MAKE) PG_CONFIG=$$(test/scripts/pg_config.sh) install
	PG_DIO_STRESS_SECONDS=$${PG_DIO_STRESS_SECONDS:-300} test/run_tests.sh $(REGRESS)

# the pg_regress suites against pg_dio built with ASan + UBSan
sanitize: setup
	test/sanitize.sh

bench: setup
	$(MAKE) PG_CONFIG=$$(test/scripts/pg_config.sh) install
	test/bench/run.sh

cluster: setup
	$(MAKE) PG_CONFIG=$$(test/scripts/pg_config.sh) install
	@test/cluster.sh start manual

cluster-stop:
	@test/cluster.sh stop manual

# PGXN distribution: pg_dio-<version>.zip of the committed tree (HEAD), the
# version META.json's, made with git archive as PGXN bundles are
DISTVERSION = $(shell sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' META.json | head -n 1)
.PHONY: dist
dist:
	git archive --format zip --prefix=$(EXTENSION)-$(DISTVERSION)/ \
		--output $(EXTENSION)-$(DISTVERSION).zip HEAD
	@echo "$(EXTENSION)-$(DISTVERSION).zip"
