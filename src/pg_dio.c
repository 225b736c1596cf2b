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
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"

#include "pg_dio.h"

PG_MODULE_MAGIC_EXT(.name = "pg_dio",.version = PG_DIO_VERSION);

int			pg_dio_queue_depth = 16;
int			pg_dio_io_size_kb = 1024;
int			pg_dio_max_io_memory_kb = 256 * 1024;
int			pg_dio_inject_fault = DIO_FAULT_NONE;
int			pg_dio_inject_delay_ms = 200;

static const struct config_enum_entry dio_fault_options[] = {
	{"none", DIO_FAULT_NONE, false},
	{"eio", DIO_FAULT_EIO, false},
	{"short_read", DIO_FAULT_SHORT_READ, false},
	{"ring_setup", DIO_FAULT_RING_SETUP, false},
	{"odirect_einval", DIO_FAULT_ODIRECT_EINVAL, false},
	{"delay", DIO_FAULT_DELAY, false},
	{"corrupt", DIO_FAULT_CORRUPT, false},
	{"fsync", DIO_FAULT_FSYNC, false},
	{"hang", DIO_FAULT_HANG, false},
	{NULL, 0, false}
};

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
dio_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	dio_stats_shmem_request();
	RequestAddinShmemSpace(dio_prefetch_shmem_size());
}

static void
dio_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	dio_stats_shmem_startup();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dio_prefetch_shmem_startup();
	LWLockRelease(AddinShmemInitLock);
}

static bool
dio_check_io_size(int *newval, void **extra, GucSource source)
{
	if (*newval % (BLCKSZ / 1024) != 0)
	{
		GUC_check_errdetail("pg_dio.io_size must be a multiple of the block size (%dkB).",
							BLCKSZ / 1024);
		return false;
	}
	return true;
}

void
_PG_init(void)
{
	DefineCustomIntVariable("pg_dio.queue_depth",
							"Maximum number of direct reads in flight per read stream; the processes of a parallel DirectSeqScan share them.",
							"Each backend allocates queue_depth * io_size bytes of I/O memory on first use, rounded up to whole 2 MB huge pages.",
							&pg_dio_queue_depth,
							16, 1, DIO_MAX_QUEUE_DEPTH,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_dio.io_size",
							"Largest single direct read; runs of blocks are combined up to this size.",
							NULL,
							&pg_dio_io_size_kb,
							1024, DIO_MIN_IO_SIZE_KB, DIO_MAX_IO_SIZE_KB,
							PGC_USERSET, GUC_UNIT_KB,
							dio_check_io_size, NULL, NULL);

	DefineCustomIntVariable("pg_dio.max_io_memory",
							"Most I/O buffer memory one process maps for direct reads.",
							"A read stream that would exceed it gets fewer reads in flight, or reads through the buffer manager.",
							&pg_dio_max_io_memory_kb,
							256 * 1024, 2 * 1024, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_dio.inject_fault",
							 "Test only: makes the read engine fail in the given way.",
							 NULL,
							 &pg_dio_inject_fault,
							 DIO_FAULT_NONE, dio_fault_options,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_dio.inject_delay",
							"Test only: how long each read is held in flight under pg_dio.inject_fault = delay.",
							NULL,
							&pg_dio_inject_delay_ms,
							200, 1, 60000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);

	dio_scan_init();
	dio_prefetch_init();
	dio_plan_init();

	MarkGUCPrefixReserved("pg_dio");

	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = dio_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = dio_shmem_startup;
}
