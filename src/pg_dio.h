/*-------------------------------------------------------------------------
 *
 * pg_dio.h
 *	  Declarations shared by pg_dio's source files: settings, the read
 *	  engine's interface and the per-backend statistics in shared memory.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/pg_dio.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_H
#define PG_DIO_H

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "common/relpath.h"
#include "executor/tuptable.h"
#include "nodes/pathnodes.h"
#include "nodes/plannodes.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/block.h"
#include "storage/bufpage.h"
#include "storage/relfilelocator.h"
#include "utils/rel.h"
#include "utils/timestamp.h"

/* ---------- settings (pg_dio.c) ---------- */

typedef enum DioFault
{
	DIO_FAULT_NONE,
	DIO_FAULT_EIO,
	DIO_FAULT_SHORT_READ,
	DIO_FAULT_RING_SETUP,
	DIO_FAULT_ODIRECT_EINVAL,
	DIO_FAULT_DELAY,
	DIO_FAULT_CORRUPT,
	DIO_FAULT_FSYNC,			/* pg_dio_evict's write-back fails (EIO) */
	DIO_FAULT_HANG,				/* reads wait on an empty pipe, uncancelled */
} DioFault;

extern PGDLLIMPORT int pg_dio_queue_depth;
extern PGDLLIMPORT int pg_dio_io_size_kb;
extern PGDLLIMPORT int pg_dio_max_io_memory_kb;
extern PGDLLIMPORT int pg_dio_inject_fault;
extern PGDLLIMPORT int pg_dio_inject_delay_ms;
extern PGDLLIMPORT bool pg_dio_enable_direct_scan;
extern PGDLLIMPORT int pg_dio_direct_scan_threshold;
extern PGDLLIMPORT bool pg_dio_os_cache_check;
extern PGDLLIMPORT bool pg_dio_enable_index_prefetch;
extern PGDLLIMPORT bool pg_dio_index_prefetch_advice;
extern PGDLLIMPORT bool pg_dio_index_direct_read;
extern PGDLLIMPORT bool pg_dio_index_prefetch_combine;

/* ---------- DirectSeqScan (scan_direct.c) ---------- */

extern void dio_scan_init(void);
extern Plan *dio_direct_substitute(PlannedStmt *stmt, Plan *plan, bool plain);
extern bool dio_block_resident(Relation rel, BlockNumber blk);
extern bool dio_direct_image_usable(Relation rel, Page page, BlockNumber blk);

/* ---------- PrefetchIndexScan (scan_prefetch.c) ---------- */

extern void dio_prefetch_init(void);
extern Plan *pf_substitute(PlannedStmt *stmt, Plan *plan, bool plain);
extern Size dio_prefetch_shmem_size(void);
extern void dio_prefetch_shmem_startup(void);

#define DIO_MAX_QUEUE_DEPTH		128
#define DIO_MIN_IO_SIZE_KB		(BLCKSZ / 1024)
#define DIO_MAX_IO_SIZE_KB		1024

/* start loading the cache line at 'addr' for reading (a hint, no fault) */
#if defined(__GNUC__) || defined(__clang__)
#define dio_cpu_prefetch(addr)	__builtin_prefetch(addr)
#else
#define dio_cpu_prefetch(addr)	((void) (addr))
#endif

/* ---------- the planner hook (scan_plan.c) ---------- */

extern void dio_plan_init(void);

/* ---------- narrow scan tuples (scan_narrow.c) ---------- */

/*
 * Column i of a narrow (virtual) scan slot is relation attribute
 * out_attno[i].  When every attribute before max_attno has a fixed length, a
 * tuple without nulls holds attribute out_attno[i] at cols[i].off from its
 * data start (for a varlena max_attno, at cols[i].off or the next multiple of
 * cols[i].alignby, depending on its header); other tuples are walked
 * attribute by attribute up to max_attno (att_out: the output column of each
 * attribute, or -1).
 */
typedef struct DioNarrowCol
{
	int32		off;			/* offset in a tuple without nulls, or -1 */
	int16		len;			/* attlen */
	bool		byval;			/* attbyval */
	uint8		alignby;		/* attalignby */
} DioNarrowCol;

typedef struct DioNarrow
{
	TupleDesc	desc;			/* the relation's */
	int			nout;
	AttrNumber *out_attno;
	DioNarrowCol *cols;			/* what the per-row store reads, together */
	AttrNumber	max_attno;
	bool		fixed_offsets;
	int16	   *att_out;
} DioNarrow;

extern List *dio_narrow_substitute(Index scanrelid, int natts, List **tlist,
								   List **quals);
extern void dio_narrow_init(DioNarrow *n, TupleDesc desc, List *scan_tlist);
extern void dio_narrow_deform(const DioNarrow *n, HeapTupleHeader tup,
							  Datum *values, bool *isnull);

/* May 'tup' take dio_narrow_store_fixed?  (No nulls, all columns present.) */
static pg_attribute_always_inline bool
dio_narrow_fixed_ok(const DioNarrow *n, HeapTupleHeader tup)
{
	return n->fixed_offsets && !(tup->t_infomask & HEAP_HASNULL) &&
		HeapTupleHeaderGetNatts(tup) >= n->max_attno;
}

/*
 * dio_narrow_store for a tuple that dio_narrow_fixed_ok, into a slot that
 * needs no clearing first (!TTS_SHOULDFREE): calls nothing, so that a per-row
 * path made of it needs no stack frame.
 */
static pg_attribute_always_inline void
dio_narrow_store_fixed(const DioNarrow *n, HeapTupleHeader tup, TupleTableSlot *slot)
{
	Datum	   *values = slot->tts_values;
	bool	   *isnull = slot->tts_isnull;
	char	   *data = (char *) tup + tup->t_hoff;
	const DioNarrowCol *col = n->cols;

	for (int i = 0; i < n->nout; i++, col++)
	{
		int32		off_i = col->off;

		if (col->len == -1)
		{
			off_i = att_pointer_alignby(off_i, col->alignby, -1, data + off_i);
			values[i] = PointerGetDatum(data + off_i);
		}
		else
			values[i] = fetch_att(data + off_i, col->byval, col->len);
		isnull[i] = false;
	}
	slot->tts_nvalid = n->nout;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
}

/*
 * Store the narrow scan tuple's columns of heap tuple 'tup' in the virtual
 * scan slot; the caller sets tts_tid and tts_tableOid.  By-reference values
 * point into 'tup': see scan_narrow.c for how long it must stay.
 */
static pg_attribute_always_inline void
dio_narrow_store(const DioNarrow *n, HeapTupleHeader tup, TupleTableSlot *slot)
{
	if (unlikely(TTS_SHOULDFREE(slot)))
		ExecClearTuple(slot);
	if (likely(dio_narrow_fixed_ok(n, tup)))
		dio_narrow_store_fixed(n, tup, slot);
	else
	{
		dio_narrow_deform(n, tup, slot->tts_values, slot->tts_isnull);
		slot->tts_nvalid = n->nout;
		slot->tts_flags &= ~TTS_FLAG_EMPTY;
	}
}

/* ---------- why a block went through the buffer manager ---------- */

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

/* ---------- statistics in shared memory (diag_stats.c) ---------- */

/* latency: bucket i counts reads of [2^i, 2^(i+1)) us, bucket 0 also < 1 us */
#define DIO_LAT_BUCKETS		25
/* size: bucket i counts reads of [8kB * 2^i, 8kB * 2^(i+1)) bytes */
#define DIO_SIZE_BUCKETS	8
/* in-flight registry entries per backend */
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
} DioInflight;

/*
 * One slot per PGPROC (MyProcNumber).  Only the owning process writes it,
 * inside a changecount section; readers copy it and retry until they saw an
 * even, unchanged count.
 */
typedef struct DioBackendSlot
{
	volatile uint32 changecount;
	int			pid;			/* 0: slot not in use */
	Oid			userid;
	uint64		reset_gen;		/* last cluster reset this slot applied */
	DioCounters c;
	int			ninflight;
	uint64		io_memory;		/* bytes of I/O buffers mapped now */
	DioInflight inflight[DIO_MAX_INFLIGHT];
} DioBackendSlot;

extern DioBackendSlot *dio_my_slot;

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

/* read-side API for the SQL functions (diag_views.c) */
extern int	dio_stats_nslots(void);
extern bool dio_stats_read_slot(int procno, DioBackendSlot *copy);
extern void dio_stats_cluster_totals(DioCounters *sum, int *inflight);
extern void dio_stats_reset(void);
extern TimestampTz dio_stats_reset_time(void);

/* ---------- relation tools (tool_read.c) ---------- */

typedef enum DioPrivilege
{
	DIO_PRIV_SELECT,			/* SELECT on the relation */
	DIO_PRIV_OWNER,				/* owner, pg_maintain or superuser */
} DioPrivilege;

extern Relation dio_open_relation(Oid relid, const char *what, DioPrivilege priv,
								  bool heap_only);

/* ---------- the read engine (io_engine.c) ---------- */

typedef struct DioStream DioStream;

/* one completed read, as handed to the caller */
typedef struct DioRun
{
	BlockNumber first;			/* first block of the run */
	int			nblocks;		/* blocks requested */
	int			nvalid;			/* leading blocks read completely */
	DioFallback reason;			/* why blocks [nvalid, nblocks) were not */
	bool		issued;			/* the read reached the kernel */
	char	   *data;			/* page of block 'first', PG_IO_ALIGN_SIZE aligned */
	int			slot;			/* engine-private */
} DioRun;

extern bool dio_stream_slot_free(void);
extern DioStream *dio_stream_begin(Relation rel, ForkNumber fork, int depth);
extern void dio_stream_set_io_context(DioStream *s, IOContext context);
extern int	dio_stream_max_blocks(DioStream *s);
extern int	dio_stream_blocks_ahead(DioStream *s);
extern bool dio_stream_can_submit(DioStream *s);
extern void dio_stream_submit(DioStream *s, BlockNumber first, int nblocks);
extern void dio_submit_pending(void);
extern bool dio_stream_next(DioStream *s, DioRun *run);
extern void dio_stream_release(DioStream *s, DioRun *run);
extern int	dio_stream_os_cached(DioStream *s, BlockNumber first, int nblocks);
extern int64 dio_os_cached_bytes(int fd, off_t off, size_t len);
extern bool dio_cachestat_available(void);
extern void dio_stream_wait_stats(DioStream *s, uint64 *waits, uint64 *wait_us);
extern void dio_stream_inflight_stats(DioStream *s, uint64 *issued,
									  uint64 *inflight_sum);
extern void dio_stream_end(DioStream *s);
extern DioStream *dio_stream_begin_oscheck(Relation rel);
extern void dio_note_fallback(DioFallback reason, const char *detail);

/* ---------- page verification (verify.c, checksum_avx2.c) ---------- */

#if defined(__x86_64__) && defined(__GNUC__)
#define DIO_HAVE_AVX2_CHECKSUM 1
extern uint16 dio_checksum_page_avx2(char *page, BlockNumber blkno);
#endif
extern bool dio_page_verified(Page page, BlockNumber blkno, bool checksums,
							  bool *checksum_failure);

#endif							/* PG_DIO_H */
