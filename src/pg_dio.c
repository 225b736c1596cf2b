/*-------------------------------------------------------------------------
 *
 * pg_dio.c
 *	  Module entry point: settings, shared memory hooks.
 *
 * pg_dio must be loaded with shared_preload_libraries: its statistics live
 * in shared memory requested at postmaster start.  Loaded any other way it
 * only defines its settings, and its SQL functions raise an error.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/pg_dio.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/queryjumble.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_direct.h"
#include "scan_plan.h"
#include "scan_prefetch.h"
#include "scan_probe.h"

PG_MODULE_MAGIC_EXT(.name = "pg_dio",.version = PG_DIO_VERSION);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
dio_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	dio_stats_shmem_request();
	RequestAddinShmemSpace(dio_prefetch_shmem_size());
	RequestAddinShmemSpace(dio_stmt_shmem_size());
}

static void
dio_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	dio_stats_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dio_prefetch_shmem_startup();
	dio_stmt_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

void
_PG_init(void)
{
	dio_engine_define_settings();
	dio_safety_define_settings();
	dio_direct_init();
	dio_prefetch_init();
	dio_probe_init();
	dio_plan_init();
	dio_stmt_init();

	MarkGUCPrefixReserved("pg_dio");

	if (!process_shared_preload_libraries_in_progress)
		return;

	/* query IDs for pg_stat_aios and pg_dio_statements */
	EnableQueryId();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = dio_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = dio_shmem_startup;
}
