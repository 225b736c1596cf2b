/*-------------------------------------------------------------------------
 *
 * diag.h
 *	  pg_dio's diagnostics: the per-process statistics in shared memory
 *	  (diag_stats.c) and the SQL views over them (diag_views.c).  EXPLAIN
 *	  (IO) output (diag_explain.c) is declared in compat.h, beside the
 *	  version-dependent struct it prints.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/diag.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_DIAG_H
#define PG_DIO_DIAG_H

#include "port/atomics.h"
#include "storage/block.h"
#include "storage/relfilelocator.h"
#include "utils/timestamp.h"

/* Why a block was read through the buffer manager instead of directly. */
typedef enum DioFallback
{
	DIO_FB_IO_ERROR,			/* EIO, end of file, any other read error */
	DIO_FB_NO_URING,			/* io_uring unavailable (ENOSYS, EPERM, ...) */
	DIO_FB_NO_ODIRECT,			/* O_DIRECT refused (EINVAL) */
	DIO_FB_NO_FD,				/* out of file descriptors */
	DIO_FB_VERIFY,				/* the page read failed verification */
	DIO_FB_NO_MEMORY,			/* pg_dio.max_io_memory reached */
} DioFallback;

#define DIO_NUM_FALLBACK (DIO_FB_NO_MEMORY + 1)

extern const char *const dio_fallback_names[DIO_NUM_FALLBACK];

/* Why a pg_dio scan read a block through the buffer manager. */
typedef enum DioScanReason
{
	DIO_SR_RESIDENT,			/* in shared buffers */
	DIO_SR_NOT_ALL_VISIBLE,		/* visibility map bit not set */
	DIO_SR_ISOLATION,			/* snapshot or isolation level */
	DIO_SR_VERIFY,				/* direct image failed a check */
	DIO_SR_IO,					/* the engine could not read it */
	DIO_SR_OS_CACHED,			/* its chunk is in the OS page cache */
} DioScanReason;

#define DIO_SR_COUNT (DIO_SR_OS_CACHED + 1)

/* latency: bucket i counts reads of [2^i, 2^(i+1)) us, bucket 0 also < 1 us */
#define DIO_LAT_BUCKETS		25
/* size: bucket i counts reads of [8kB * 2^i, 8kB * 2^(i+1)) bytes */
#define DIO_SIZE_BUCKETS	8
/* in-flight registry entries per process */
#define DIO_MAX_INFLIGHT	256

typedef struct DioCounters
{
	uint64		reads_submitted;
	uint64		reads_completed;
	uint64		bytes_read;
	uint64		blocks_direct;
	uint64		blocks_fallback[DIO_NUM_FALLBACK];
	uint64		errors;
	uint64		short_reads;
	uint64		submit_calls;
	uint64		wait_calls;
	uint64		wait_time_us;
	uint64		lat_sum_us;		/* the latencies of lat_hist's reads, summed */
	uint64		bytes_requested;	/* the lengths of size_hist's reads, summed */
	uint64		max_inflight;
	uint64		lat_hist[DIO_LAT_BUCKETS];
	uint64		size_hist[DIO_SIZE_BUCKETS];
} DioCounters;

typedef struct DioInflight
{
	bool		used;
	RelFileLocator locator;
	ForkNumber	fork;
	BlockNumber first;
	int32		nblocks;
	uint32		bytes;
	TimestampTz submitted;
	int64		query_id;		/* the issuer's top-level query ID; 0: none */
} DioInflight;

/*
 * One slot per PGPROC (MyProcNumber).  Only the owning process writes it,
 * inside a changecount section; readers copy it and retry until they saw an
 * even, unchanged count.
 */
typedef struct DioBackendSlot
{
	uint32		changecount;
	int			pid;			/* 0: slot not in use */
	Oid			userid;
	uint64		reset_gen;		/* last cluster reset this slot applied */
	DioCounters c;
	int			ninflight;
	uint64		io_memory;		/* bytes of I/O buffers mapped now */
	DioInflight inflight[DIO_MAX_INFLIGHT];
} DioBackendSlot;

extern DioBackendSlot *dio_my_slot;

/*
 * What this process's statements read, since it started (only grows; a
 * reset does not touch it): diag_statements.c charges each statement the
 * change over its execution.  Charged where the matching cluster counters
 * are (direct blocks, fallbacks, reads, bytes, waits) or, for a scan's
 * figures, when the scan ends.
 */
typedef struct DioStmtCounters
{
	uint64		direct_blocks;
	uint64		direct_reads;
	uint64		direct_bytes;
	uint64		buffered[DIO_SR_COUNT]; /* DirectSeqScan, by reason */
	uint64		fallback[DIO_NUM_FALLBACK];
	uint64		pf_requested;	/* PrefetchIndexScan heap blocks ... */
	uint64		pf_advised;
	uint64		pf_read;
	uint64		pf_os_cached;
	uint64		pf_wait_us;
	uint64		wait_us;		/* waiting for direct reads */
	uint64		read_us;		/* direct reads' latencies, summed */
} DioStmtCounters;

#define DIO_STMT_NCOUNTERS (sizeof(DioStmtCounters) / sizeof(uint64))

extern DioStmtCounters dio_stmt_io;

/* diag_statements.c: per-statement statistics */
extern void dio_stmt_init(void);
extern Size dio_stmt_shmem_size(void);
extern void dio_stmt_shmem_startup(void);

/* diag_stats.c: shared memory, the owner's writes */
extern void dio_stats_shmem_request(void);
extern void dio_stats_shmem_startup(void);
extern bool dio_stats_available(void);
extern void dio_stats_require(void);
extern void dio_stats_attach(void);
extern void dio_stats_begin_write(void);
extern void dio_stats_end_write(void);
extern int	dio_stats_lat_bucket(uint64 us);
extern int	dio_stats_size_bucket(uint64 bytes);
extern void dio_stats_count_blocks(uint64 ndirect, DioFallback reason,
								   uint64 nfallback);

/* diag_stats.c: readers (diag_views.c) */
extern int	dio_stats_nslots(void);
extern bool dio_stats_read_slot(int procno, DioBackendSlot *copy);
extern void dio_stats_cluster_totals(DioCounters *sum, int *inflight);
extern void dio_stats_reset(void);
extern TimestampTz dio_stats_reset_time(void);

#endif							/* PG_DIO_DIAG_H */
