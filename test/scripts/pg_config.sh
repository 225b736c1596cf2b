#!/usr/bin/env bash
# Print the PostgreSQL 18 pg_config pg_dio builds against (nothing is installed).
. "$(dirname "$0")/common.sh"
find_pg_config
