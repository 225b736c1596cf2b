/*-------------------------------------------------------------------------
 *
 * scan_direct.c
 *	  DirectSeqScan: a sequential scan that reads all-visible, non-resident
 *	  heap blocks with O_DIRECT through pg_dio's read engine and every other
 *	  block through the buffer manager.
 *
 * Why a block read this way is a correct view for the scan's snapshot (see
 * docs/design.md): every change to a heap page is made in a shared buffer and
 * a dirty buffer is written out before its mapping is removed, so a block that
 * is not resident when we submit its read has on disk every change made before
 * that moment -- among them every change our snapshot can see.  If the image
 * we read has PD_ALL_VISIBLE set, each of its tuples is visible to every
 * snapshot that is or will be running (our xmin holds back VACUUM), so every
 * normal line pointer is a visible tuple.  Changes made after the check are
 * invisible to our snapshot anyway; a write of the same block that races with
 * our read can tear the image, which the checksum catches, and we check again
 * that the block is not resident once the read completed.
 *
 * So a block is read directly only if (1) the snapshot is an MVCC snapshot and
 * the transaction is not SERIALIZABLE, (2) the
 * visibility map says all-visible, (3) the block is not in shared buffers
 * (a buffer mapping lookup under the partition lock, or, once the scan has
 * made enough lookups, one sweep over the buffer descriptors, see
 * ds_sweep_resident); and its image is used only
 * if (4) it passes page verification (PageIsVerified's test, verify.c) and
 * has PD_ALL_VISIBLE (and, without data checksums, the block is still not
 * resident; for a snapshot taken during recovery, its LSN is no newer than
 * the replay position read before the block's visibility-map bit, and
 * residency is looked up per block, after that bit).  Everything else goes
 * through the buffer manager: a core read stream (with a bulk-read strategy
 * where core's heap scan of the relation would use one),
 * and page-at-a-time visibility checks as core's heap scan makes them (hint
 * bits, serializable conflict checks).  Chunks of 8 MB that are mostly in
 * shared buffers or in the OS page cache are read that way as a whole.
 * Serial scans return tuples in block order.
 *
 * Lifetime: the engine owns the memory of direct reads; a run stays "held"
 * while tuples of its pages may still be referenced by the scan slot, and is
 * released only when the scan moves past it (the slot is cleared first).
 * Tuples of buffered pages point into a buffer we keep pinned until the scan
 * moves past the page (again clearing the slot first).  The same holds for
 * the by-reference values of a narrow scan tuple (a virtual slot holding
 * only the columns the plan needs), which point into the page too.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_direct.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/parallel.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_am_d.h"
#include "catalog/pg_class_d.h"
#include "commands/explain.h"
#include "commands/explain_format.h"
#include "executor/execScan.h"
#include "executor/executor.h"
#include "executor/nodeCustom.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "nodes/extensible.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/optimizer.h"
#include "optimizer/restrictinfo.h"
#include "pgstat.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/read_stream.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "compat.h"
#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_direct.h"
#include "scan_narrow.h"

/* start loading the cache line at 'addr' for reading (a hint, no fault) */
#if defined(__GNUC__) || defined(__clang__)
#define dio_cpu_prefetch(addr)	__builtin_prefetch(addr)
#else
#define dio_cpu_prefetch(addr)	((void) (addr))
#endif

static const char *const dio_scan_reason_names[DIO_SR_COUNT] = {
	"resident", "not all-visible", "isolation", "verification", "I/O fallback", "OS-cached"
};

/*
 * OS page-cache residency is checked per chunk of this many blocks (8 MB),
 * each within one segment file (one cachestat call on one fd)
 */
#define DIO_CACHE_CHUNK		1024
StaticAssertDecl(RELSEG_SIZE % DIO_CACHE_CHUNK == 0,
				 "an OS-cache chunk must lie within one segment file");

typedef struct DioScanCounters
{
	uint64		direct_blocks;
	uint64		reads;
	uint64		read_bytes;
	uint64		waits;
	uint64		wait_us;
	uint64		issued;			/* reads that reached the kernel ... */
	uint64		inflight_sum;	/* ... summed in-flight counts at their submission */
	uint64		buffered[DIO_SR_COUNT];
	uint64		os_cached_chunks;
	/* EXPLAIN (IO): direct blocks taken, and the blocks read ahead of each */
	uint64		pf_count;
	uint64		pf_dist_sum;
	uint32		pf_dist_max;
	uint32		pf_capacity;	/* requests x blocks a request */
	DioIOStats	buffered_io;	/* the buffered read stream's */
} DioScanCounters;

/* parallel scans: in the DSM */
typedef struct DioScanShared
{
	ParallelBlockTableScanDescData pscan;
	int			nworkers;
	DioScanCounters workers[FLEXIBLE_ARRAY_MEMBER];
} DioScanShared;

/*
 * Rows of the current page to start loading into the CPU's caches while one
 * is being returned: none (a direct image that was just checksummed is in
 * them); the next row's header (a page just copied into shared buffers is
 * in the last-level cache); or the start of the row DIO_ROW_AHEAD rows on (a
 * page that sat in shared buffers, or a direct image without checksums, is
 * in memory only).
 */
typedef enum DioRowPrefetch
{
	DIO_RP_NONE,
	DIO_RP_HEADER,
	DIO_RP_ROWS,
} DioRowPrefetch;

#define DIO_ROW_AHEAD		3
/* the part of a row that is loaded (deforming reads it from its start) */
#define DIO_ROW_PREFETCH_BYTES 256
/* x86-64's and arm64's cache line; PG_CACHE_LINE_SIZE is an upper bound */
#define DIO_CPU_LINE		64

/* a stretch of blocks, in scan order, still to be returned */
typedef struct DioSegment
{
	bool		direct;
	bool		resident;		/* buffered, found in shared buffers */
	BlockNumber start;
	BlockNumber nblocks;
} DioSegment;

#define DIO_SEGQ_SIZE		256
/* buffered stretches are long: each one restarts the heap scan's read stream */
#define DIO_MAX_BUFFERED_RUN 65536

/*
 * A parallel scan takes blocks from the shared pool only so far ahead of what
 * it returns: queued buffered blocks at most this many (2 MB; direct ones are
 * bounded by the engine's queue).  Otherwise the process that starts first
 * claims most of a warm table before the others are running, and at the end
 * one process still works through a long queue while the others are idle.
 */
#define DIO_PARALLEL_BUFFERED_AHEAD 256

/*
 * What the node does with the next row of the current page without further
 * ado: nothing (quals or a projection to evaluate, EvalPlanQual), return it
 * (ds_proc_row), or return an empty row (ds_proc_empty; count(*): no
 * column wanted).
 */
#define DIO_SHORT_NONE		0
#define DIO_SHORT_ROW		1
#define DIO_SHORT_EMPTY		2

typedef struct DioScanState
{
	CustomScanState css;

	Relation	rel;
	Snapshot	snapshot;
	bool		direct_ok;		/* snapshot and isolation allow direct reads */
	bool		started;
	bool		opened;			/* first fetch done */
	bool		empty_tlist;	/* the plan wants no column */
	uint8		short_way;		/* DIO_SHORT_*: rows of a page without ExecScan */

	/* narrow scan tuple (custom_scan_tlist): the mapping, see scan_narrow.c */
	bool		narrow;
	DioNarrow	narrow_map;

	/* block source */
	BlockNumber nblocks;		/* serial: blocks at scan start */
	BlockNumber next;			/* serial: next block to classify */
	BlockNumber held_blk;		/* a block taken from the source, not yet queued */
	int			held_class;
	bool		exhausted;

	/* classification */
	Buffer		vmbuf;
	DioStream  *stream;
	int			max_run;
	bool		no_stream;		/* the engine had no stream for us */
	BlockNumber cache_chunk;	/* chunk whose OS-cache state we know */
	bool		chunk_cached;
	BlockNumber res_chunk;		/* chunk whose shared-buffer state we know */
	bool		chunk_resident;
	bool		res_swept;		/* res_bits say which of nblocks are resident */
	uint64		res_lookups;	/* buffer mapping lookups since the reset */
	uint64		res_sweep_after;	/* lookups before the sweep */
	BlockNumber res_cap;		/* blocks res_bits has room for */
	uint64	   *res_bits;		/* see ds_sweep_resident */
	bool		post_check;		/* re-check residency after the read */
	XLogRecPtr	lsn_bound;		/* newest usable image LSN (recovery only) */

	/*
	 * Segments queued, by absolute sequence number (slot = seq % size): the
	 * direct ones are already submitted.  The head segment is removed only
	 * once used up, so the buffered read stream's cursor never points at a
	 * slot that was reused.
	 */
	DioSegment	segq[DIO_SEGQ_SIZE];
	uint64		seg_first;
	int			seg_count;
	BlockNumber queued_buffered;	/* blocks of the queued buffered segments */

	/* current direct run and page */
	bool		have_run;
	DioRun		run;
	int			page_idx;
	int			run_direct;
	int			run_verify;
	Page		page;			/* page whose tuples we return, if any */
	DioRowPrefetch row_prefetch;	/* how to get rows into the CPU's caches */
	BlockNumber page_blk;
	HeapTupleData tuple;

	/* buffered blocks: a core read stream over them, page-at-a-time visibility */
	ReadStream *bstream;
	DioIOStats	bstats;			/* its figures for EXPLAIN (IO), PostgreSQL 19 */
	bool		bulkread;		/* a big relation: core's scan would use a ring */
	BufferAccessStrategy bstrategy;
	uint64		bq_seq;			/* read stream cursor: segment ... */
	BlockNumber bq_off;			/* ... and block within it */
	bool		buffered_active;	/* consuming the head (buffered) segment */
	BlockNumber bseg_next;
	BlockNumber bseg_end;
	BlockNumber single_blk;		/* a direct block to read again buffered */
	Buffer		cur_buf;		/* pinned page whose tuples we return */
	int			nvis;
	int			vis_idx;
	OffsetNumber vis[MaxHeapTuplesPerPage];
	bool		check_serializable;

	/* parallel */
	DioScanShared *shared;
	ParallelBlockTableScanWorkerData pwork;
	bool		pwork_ready;

	DioScanCounters counters;	/* this process */
	DioScanCounters workers_sum;	/* leader: copied at shutdown */
	DioScanCounters *worker_copy;	/* leader: per worker, for VERBOSE */
	int			nworkers_copied;
} DioScanState;

bool		pg_dio_enable_direct_scan = true;
/* pg_dio.resident_sweep: see ds_sweep_resident */
#define DIO_SWEEP_AUTO	0
#define DIO_SWEEP_ON	1
#define DIO_SWEEP_OFF	2
static int	pg_dio_resident_sweep = DIO_SWEEP_AUTO;

static const struct config_enum_entry dio_sweep_options[] = {
	{"auto", DIO_SWEEP_AUTO, false},
	{"on", DIO_SWEEP_ON, false},
	{"off", DIO_SWEEP_OFF, false},
	{NULL, 0, false}
};
int			pg_dio_direct_scan_threshold = 2048;

static void ds_open_stream(DioScanState *st);
static void ds_close_stream(DioScanState *st);
static DioScanCounters ds_current_counters(DioScanState *st);
static Node *ds_create_scan_state(CustomScan *cscan);
static void ds_begin_scan(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *ds_exec_scan(CustomScanState *node);
static TupleTableSlot *ds_proc_row(PlanState *ps);
static TupleTableSlot *ds_proc_empty(PlanState *ps);
static void ds_end_scan(CustomScanState *node);
static void ds_rescan(CustomScanState *node);
static Size ds_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
static void ds_initialize_dsm(CustomScanState *node, ParallelContext *pcxt,
							  void *coordinate);
static void ds_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								void *coordinate);
static void ds_initialize_worker(CustomScanState *node, shm_toc *toc,
								 void *coordinate);
static void ds_shutdown_scan(CustomScanState *node);
static void ds_explain_scan(CustomScanState *node, List *ancestors,
							ExplainState *es);

static const CustomScanMethods dio_scan_methods = {
	.CustomName = "DirectSeqScan",
	.CreateCustomScanState = ds_create_scan_state,
};

static const CustomExecMethods dio_exec_methods = {
	.CustomName = "DirectSeqScan",
	.BeginCustomScan = ds_begin_scan,
	.ExecCustomScan = ds_exec_scan,
	.EndCustomScan = ds_end_scan,
	.ReScanCustomScan = ds_rescan,
	.EstimateDSMCustomScan = ds_estimate_dsm,
	.InitializeDSMCustomScan = ds_initialize_dsm,
	.ReInitializeDSMCustomScan = ds_reinitialize_dsm,
	.InitializeWorkerCustomScan = ds_initialize_worker,
	.ShutdownCustomScan = ds_shutdown_scan,
	.ExplainCustomScan = ds_explain_scan,
};

/* ======================================================================
 * Planner
 * ====================================================================== */

/*
 * A DirectSeqScan in place of core's finished SeqScan 'plan' (after
 * setrefs.c) of a plain SELECT ('plain': no row marks, no modifying CTE:
 * rows that UPDATE, DELETE, MERGE or SELECT FOR UPDATE/SHARE act on, and
 * EvalPlanQual rechecks, are never read directly), or NULL where it does not
 * apply: relations other than permanent heap tables and materialized views,
 * and relations of which less than pg_dio.direct_scan_threshold is read:
 * 'fraction' of it, the planner's estimate (below 1 under a Limit).  The node
 * keeps the plan's fields (costs, target list, filter, parallel awareness,
 * plan_node_id); its scan tuple is narrow where that saves work
 * (scan_narrow.c).
 */
Plan *
dio_direct_substitute(PlannedStmt *stmt, Plan *plan, bool plain, double fraction,
					  const DioPlanSettings *set)
{
	Scan	   *scan = (Scan *) plan;
	RangeTblEntry *rte = rt_fetch(scan->scanrelid, stmt->rtable);
	CustomScan *cscan;
	Relation	rel;
	BlockNumber nblocks;
	int			natts;

	if (!set->enable_direct_scan || !plain || !dio_stats_available())
		return NULL;
	if (rte->rtekind != RTE_RELATION || rte->inh ||
		(rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_MATVIEW))
		return NULL;
	if (get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP ||
		get_rel_relam(rte->relid) != HEAP_TABLE_AM_OID)
		return NULL;
	/* the planner holds a lock on every relation of the plan */
	rel = table_open(rte->relid, NoLock);
	nblocks = RelationGetNumberOfBlocks(rel);
	natts = RelationGetNumberOfAttributes(rel);
	table_close(rel, NoLock);
	if ((double) nblocks * fraction < (double) set->direct_scan_threshold)
		return NULL;

	cscan = makeNode(CustomScan);
	cscan->scan = *scan;
	cscan->scan.plan.type = T_CustomScan;
	cscan->flags = 0;
	cscan->custom_plans = NIL;
	cscan->custom_exprs = NIL;
	cscan->custom_private = NIL;
	cscan->custom_scan_tlist =
		dio_narrow_substitute(scan->scanrelid, natts,
							  &cscan->scan.plan.targetlist, &cscan->scan.plan.qual);
	cscan->custom_relids = bms_make_singleton(scan->scanrelid);
	cscan->methods = &dio_scan_methods;
	return &cscan->scan.plan;
}

/* ======================================================================
 * Executor: classification
 * ====================================================================== */

/*
 * Which blocks of the relation are in shared buffers?  Looking each block up
 * in the buffer mapping table costs a few cache misses, so once a scan has
 * made as many lookups as would pay for it, it reads the buffer descriptors
 * once instead and keeps a bitmap of the relation's resident blocks.
 *
 * Once is enough: the check needs to come after our snapshot was taken and
 * before the read, not right before it.  A change our snapshot sees was made
 * in a shared buffer before the snapshot; that buffer stays mapped until it
 * has been written out.  So if the sweep, which runs after the snapshot, does
 * not find the block, the disk had every such change by the time the sweep
 * looked at that descriptor, and any later image -- the same, or a newer one
 * written after the sweep -- holds them too (the header comment: an untorn
 * all-visible image, older or newer than the check, is a correct view).
 * The descriptors are read without locks, as core's DropRelationBuffers
 * prechecks them: a tag changing under us can only (a) name our block
 * spuriously, which sends it to the buffer manager, or (b) hide a buffer that
 * is just being given our block, whose contents come from disk and so are no
 * newer than what we read (a buffer must be valid before it can be dirtied,
 * and its tag was set, behind the locks the change took, before our snapshot).
 *
 * A sweep reads all NBuffers descriptors, one cache line each, in order (~6
 * ns apiece); a lookup costs ~200 ns with shared buffers full.  So the sweep
 * comes after NBuffers / 32 lookups: a warm scan, whose chunks are judged
 * from 16 blocks each and read buffered as a whole, rarely gets there.  Not
 * for relations of more than DIO_SWEEP_MAX_BLOCKS blocks (the bitmap would
 * take more than 8 MB); blocks past nblocks (the relation grew) are looked
 * up.
 */
#define DIO_SWEEP_LOOKUP_SHARE 32
#define DIO_SWEEP_MAX_BLOCKS ((BlockNumber) 64 * 1024 * 1024)

static void
ds_sweep_resident(DioScanState *st)
{
	RelFileLocator rloc = st->rel->rd_locator;
	BlockNumber nbits = st->nblocks;
	size_t		words = (nbits + 63) / 64;

	if (st->res_bits == NULL || st->res_cap < nbits)
	{
		if (st->res_bits != NULL)
			pfree(st->res_bits);
		st->res_bits = MemoryContextAlloc(GetMemoryChunkContext(st),
										  Max(words, 1) * sizeof(uint64));
		st->res_cap = nbits;
	}
	memset(st->res_bits, 0, words * sizeof(uint64));

	for (int i = 0; i < NBuffers; i++)
	{
		BufferDesc *hdr = GetBufferDescriptor(i);
		BlockNumber blk;

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (!(dio_buf_state(hdr) & BM_TAG_VALID) ||
			!BufTagMatchesRelFileLocator(&hdr->tag, &rloc) ||
			BufTagGetForkNum(&hdr->tag) != MAIN_FORKNUM)
			continue;
		blk = hdr->tag.blockNum;
		if (blk < nbits)
			st->res_bits[blk / 64] |= UINT64CONST(1) << (blk % 64);
	}
	st->res_swept = true;
}

/*
 * Forget what the last sweep saw (first fetch, rescan, after nblocks is
 * read) and decide how many lookups come before the next one: none (on; the
 * sweep is made now), NBuffers / 32 (auto), or all of them (off, or too many
 * blocks for the bitmap).
 */
static void
ds_resident_reset(DioScanState *st)
{
	st->res_swept = false;
	st->res_lookups = 0;
	/* before any visibility-map bit it governs is read */
	st->lsn_bound = dio_image_lsn_bound(st->snapshot);

	/*
	 * A snapshot taken during recovery needs each block's residency checked
	 * after its visibility-map bit (see dio_image_lsn_bound): no sweep.
	 */
	if (pg_dio_resident_sweep == DIO_SWEEP_OFF || st->nblocks > DIO_SWEEP_MAX_BLOCKS ||
		st->snapshot->takenDuringRecovery)
		st->res_sweep_after = PG_UINT64_MAX;
	else if (pg_dio_resident_sweep == DIO_SWEEP_ON)
		st->res_sweep_after = 0;
	else
		st->res_sweep_after = (uint64) NBuffers / DIO_SWEEP_LOOKUP_SHARE;
	if (st->direct_ok && st->res_sweep_after == 0)
		ds_sweep_resident(st);
}

/* Was 'blk' in shared buffers when we looked (the sweep, or now)? */
static bool
ds_block_resident_seen(DioScanState *st, BlockNumber blk)
{
	if (!st->res_swept)
	{
		if (st->res_lookups++ < st->res_sweep_after)
			return dio_block_resident(st->rel, blk);
		ds_sweep_resident(st);
	}
	if (blk >= st->nblocks)
		return dio_block_resident(st->rel, blk);
	return (st->res_bits[blk / 64] >> (blk % 64)) & 1;
}

/*
 * Is the chunk of 'blk' mostly in the OS page cache?  Then core's buffered
 * path reads it at memory speed (and verifies its checksums in the I/O
 * workers, off this backend's CPU): direct reads would only be slower.
 */
static bool
ds_chunk_os_cached(DioScanState *st, BlockNumber blk)
{
	BlockNumber chunk = blk / DIO_CACHE_CHUNK;

	if (chunk != st->cache_chunk)
	{
		BlockNumber first = chunk * DIO_CACHE_CHUNK;
		BlockNumber end = Max(st->nblocks, blk + 1);
		int			n = (int) Min((BlockNumber) DIO_CACHE_CHUNK, end - first);
		int			cached = dio_stream_os_cached(st->stream, first, n);

		st->cache_chunk = chunk;
		st->chunk_cached = (cached >= 0 && cached * 2 >= n);
		if (st->chunk_cached)
			st->counters.os_cached_chunks++;
	}
	return st->chunk_cached;
}

/*
 * Is the chunk of 'blk' (mostly) in shared buffers?  Judged from its first
 * DIO_RESIDENT_SAMPLE blocks when the scan enters it.  Then the whole chunk is
 * read buffered without looking at each block: always correct, and a warm
 * table costs no more per block than core's scan.
 */
#define DIO_RESIDENT_SAMPLE 16

static bool
ds_chunk_resident(DioScanState *st, BlockNumber blk)
{
	BlockNumber chunk = blk / DIO_CACHE_CHUNK;

	if (chunk != st->res_chunk)
	{
		BlockNumber first = chunk * DIO_CACHE_CHUNK;
		BlockNumber end = Min(first + DIO_RESIDENT_SAMPLE, Max(st->nblocks, blk + 1));
		int			resident = 0;

		for (BlockNumber b = first; b < end; b++)
			resident += ds_block_resident_seen(st, b) ? 1 : 0;
		st->res_chunk = chunk;
		st->chunk_resident = (resident * 4 >= (int) (end - first) * 3);
	}
	return st->chunk_resident;
}

/* -1: read directly; otherwise the DioScanReason for the buffer manager */
static int
ds_classify(DioScanState *st, BlockNumber blk)
{
	if (!st->direct_ok)
		return DIO_SR_ISOLATION;
	if (st->stream == NULL)
		return DIO_SR_IO;		/* no engine stream to be had */
	if (ds_chunk_resident(st, blk))
		return DIO_SR_RESIDENT;
	if (!VM_ALL_VISIBLE(st->rel, blk, &st->vmbuf))
		return DIO_SR_NOT_ALL_VISIBLE;
	/* (per chunk, before the buffer mapping lookup each block would cost) */
	if (pg_dio_os_cache_check && ds_chunk_os_cached(st, blk))
		return DIO_SR_OS_CACHED;
	if (ds_block_resident_seen(st, blk))
		return DIO_SR_RESIDENT;
	return -1;
}

/* Next block this process scans, in order; InvalidBlockNumber at the end. */
static BlockNumber
ds_source_next(DioScanState *st, int *cls)
{
	BlockNumber blk;

	if (st->held_blk != InvalidBlockNumber)
	{
		blk = st->held_blk;
		*cls = st->held_class;
		st->held_blk = InvalidBlockNumber;
		return blk;
	}
	if (st->exhausted)
		return InvalidBlockNumber;

	if (st->shared != NULL)
	{
		if (!st->pwork_ready)
		{
			dio_parallelscan_startblock_init(st->rel, &st->pwork,
											 &st->shared->pscan);
			st->pwork_ready = true;
		}
		blk = table_block_parallelscan_nextpage(st->rel, &st->pwork,
												&st->shared->pscan);
	}
	else
		blk = st->next < st->nblocks ? st->next++ : InvalidBlockNumber;

	if (blk == InvalidBlockNumber)
	{
		st->exhausted = true;
		return blk;
	}
	*cls = ds_classify(st, blk);
	if (*cls >= 0)
		st->counters.buffered[*cls]++;
	return blk;
}

static void
ds_source_hold(DioScanState *st, BlockNumber blk, int cls)
{
	Assert(st->held_blk == InvalidBlockNumber);
	st->held_blk = blk;
	st->held_class = cls;
}

/*
 * Classify blocks ahead of the consumer and queue them as segments, submitting
 * the direct ones to the engine, until the queue or the engine is full.
 */
static void
ds_fill(DioScanState *st)
{
	if (st->stream == NULL && !st->no_stream && !st->exhausted)
		ds_open_stream(st);

	while (st->seg_count < DIO_SEGQ_SIZE)
	{
		int			cls;
		int			c2;
		BlockNumber first;
		BlockNumber n = 1;
		bool		direct;
		BlockNumber limit;
		DioSegment *seg;

		if (st->shared != NULL && st->queued_buffered >= DIO_PARALLEL_BUFFERED_AHEAD)
			break;
		first = ds_source_next(st, &cls);
		direct = (cls < 0);
		if (first == InvalidBlockNumber)
			break;
		if (direct && !dio_stream_can_submit(st->stream))
		{
			ds_source_hold(st, first, cls);
			break;
		}

		if (direct)
			limit = (BlockNumber) st->max_run;
		else if (st->shared != NULL)
			limit = DIO_PARALLEL_BUFFERED_AHEAD - st->queued_buffered;
		else
			limit = DIO_MAX_BUFFERED_RUN;
		while (n < limit)
		{
			BlockNumber b;

			/* a direct run never crosses a segment file boundary */
			if (direct && (first + n) % RELSEG_SIZE == 0)
				break;
			b = ds_source_next(st, &c2);
			if (b == InvalidBlockNumber)
				break;
			if (b != first + n || (c2 < 0) != direct ||
				(c2 == DIO_SR_RESIDENT) != (cls == DIO_SR_RESIDENT))
			{
				ds_source_hold(st, b, c2);
				break;
			}
			n++;
		}

		if (direct)
			dio_stream_submit(st->stream, first, (int) n);
		seg = &st->segq[(st->seg_first + st->seg_count) % DIO_SEGQ_SIZE];
		seg->direct = direct;
		seg->resident = (cls == DIO_SR_RESIDENT);
		seg->start = first;
		seg->nblocks = n;
		st->seg_count++;
		if (!direct)
			st->queued_buffered += n;
		CHECK_FOR_INTERRUPTS();
	}
}

/* ======================================================================
 * Executor: returning tuples
 * ====================================================================== */

/*
 * Read stream callback: the next block of a queued buffered segment, in scan
 * order; InvalidBlockNumber when none is known yet (the stream is reset when
 * more are queued).
 */
static BlockNumber
ds_buffered_next_block(ReadStream *stream, void *private, void *per_buffer_data)
{
	DioScanState *st = (DioScanState *) private;

	if (st->bq_seq < st->seg_first)
	{
		st->bq_seq = st->seg_first;
		st->bq_off = 0;
	}
	while (st->bq_seq < st->seg_first + st->seg_count)
	{
		DioSegment *seg = &st->segq[st->bq_seq % DIO_SEGQ_SIZE];

		if (!seg->direct && st->bq_off < seg->nblocks)
			return seg->start + st->bq_off++;
		st->bq_seq++;
		st->bq_off = 0;
	}
	return InvalidBlockNumber;
}

/* The next buffer of the buffered read stream, which must hold 'blk'. */
static Buffer
ds_buffered_next_buffer(DioScanState *st, BlockNumber blk)
{
	Buffer		buf;

	if (st->bstream == NULL)
	{
		st->bstream = read_stream_begin_relation(READ_STREAM_SEQUENTIAL | READ_STREAM_USE_BATCHING,
												 st->bstrategy,
												 st->rel, MAIN_FORKNUM,
												 ds_buffered_next_block, st, 0);
		dio_read_stream_enable_stats(st->bstream, &st->bstats);
	}
	buf = read_stream_next_buffer(st->bstream, NULL);
	if (buf == InvalidBuffer)
	{
		/* the callback had run out of queued blocks: resume it */
		read_stream_reset(st->bstream);
		buf = read_stream_next_buffer(st->bstream, NULL);
	}
	if (buf == InvalidBuffer || BufferGetBlockNumber(buf) != blk)
		elog(ERROR, "buffered read of block %u out of order", blk);
	return buf;
}

/*
 * The tuples of a page whose tuples are all visible (PD_ALL_VISIBLE, no
 * serializable checks to make): every normal line pointer.
 */
static void
ds_page_all_visible_tuples(DioScanState *st, Page page)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);

	st->nvis = 0;
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		if (ItemIdIsNormal(PageGetItemId(page, off)))
			st->vis[st->nvis++] = off;
}

/*
 * Make 'buf' (pinned) the current page: collect its visible tuples under a
 * share lock, as core's page-at-a-time scan does; they stay valid while the
 * pin is held.  'resident': it was found in shared buffers, not read now.
 */
static void
ds_buffered_page(DioScanState *st, Buffer buf, bool resident)
{
	Page		page;
	OffsetNumber maxoff;
	bool		all_visible;
	BlockNumber blk = BufferGetBlockNumber(buf);

	dio_heap_page_prune_opt(st->rel, buf, &st->vmbuf, true);
	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	maxoff = PageGetMaxOffsetNumber(page);
	all_visible = PageIsAllVisible(page) && !st->snapshot->takenDuringRecovery;
	st->nvis = 0;
	if (all_visible && !st->check_serializable)
	{
		/* nothing to check */
		ds_page_all_visible_tuples(st, page);
		maxoff = InvalidOffsetNumber;	/* skip the loop below */
	}
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleData tup;
		bool		valid;

		if (!ItemIdIsNormal(lp))
			continue;
		tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tup.t_len = ItemIdGetLength(lp);
		tup.t_tableOid = RelationGetRelid(st->rel);
		ItemPointerSet(&tup.t_self, blk, off);
		valid = all_visible || HeapTupleSatisfiesVisibility(&tup, st->snapshot, buf);
		if (st->check_serializable)
			HeapCheckForSerializableConflictOut(valid, st->rel, &tup, buf, st->snapshot);
		if (valid)
			st->vis[st->nvis++] = off;
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	st->cur_buf = buf;
	st->page = page;
	st->row_prefetch = resident ? DIO_RP_ROWS : DIO_RP_HEADER;
	st->page_blk = blk;
	st->vis_idx = 0;
}

/* Done with the current buffered page. */
static void
ds_buffered_release(DioScanState *st)
{
	ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
	ReleaseBuffer(st->cur_buf);
	st->cur_buf = InvalidBuffer;
	st->page = NULL;
	st->nvis = st->vis_idx = 0;
}

/* The current run is used up: count it and give its memory back. */
static void
ds_release_run(DioScanState *st)
{
	ExecClearTuple(st->css.ss.ss_ScanTupleSlot);
	dio_stats_count_blocks(st->run_direct, DIO_FB_VERIFY, st->run_verify);
	if (st->run.nvalid < st->run.nblocks)
		dio_stats_count_blocks(0, st->run.reason, st->run.nblocks - st->run.nvalid);
	dio_stream_release(st->stream, &st->run);
	st->have_run = false;
	if (st->cur_buf == InvalidBuffer)
	{
		/* a page of the run may still be current (rescan, end of scan) */
		st->page = NULL;
		st->nvis = st->vis_idx = 0;
	}
}

/*
 * Store st->tuple (pointing into a page we keep alive) in the scan slot: what
 * ExecStoreHeapTuple(tuple, slot, false) does, without its two indirect calls
 * per row.  A slot an upper node materialized owns a copy: clear it properly.
 */
static inline TupleTableSlot *
ds_store_tuple(DioScanState *st, TupleTableSlot *slot, OffsetNumber off)
{
	HeapTupleTableSlot *hslot = (HeapTupleTableSlot *) slot;

	if (unlikely(TTS_SHOULDFREE(slot)))
		ExecClearTuple(slot);
	slot->tts_nvalid = 0;
	hslot->tuple = &st->tuple;
	hslot->off = 0;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	/* set, not copied from t_self: a wide load of fresh narrow stores stalls */
	ItemPointerSet(&slot->tts_tid, st->page_blk, off);
	slot->tts_tableOid = st->tuple.t_tableOid;
	return slot;
}

/*
 * Start loading rows ahead into the CPU's caches while this one is being
 * used, as st->row_prefetch says.  st->vis_idx is the next row's.
 */
static pg_attribute_always_inline void
ds_prefetch_next_row(DioScanState *st)
{
	if (st->row_prefetch == DIO_RP_HEADER && st->vis_idx < st->nvis)
		dio_cpu_prefetch(PageGetItem(st->page, PageGetItemId(st->page, st->vis[st->vis_idx])));
	else if (st->row_prefetch == DIO_RP_ROWS && st->vis_idx + DIO_ROW_AHEAD - 1 < st->nvis)
	{
		ItemId		lp = PageGetItemId(st->page, st->vis[st->vis_idx + DIO_ROW_AHEAD - 1]);
		const char *row = (const char *) PageGetItem(st->page, lp);
		uint32		len = Min(ItemIdGetLength(lp), DIO_ROW_PREFETCH_BYTES);

		for (uint32 off = 0; off < len; off += DIO_CPU_LINE)
			dio_cpu_prefetch(row + off);
		/* the row's last line, when it does not start on a line's first byte */
		dio_cpu_prefetch(row + len - 1);
	}
}

/*
 * The next row of the current page (direct image or pinned buffer), which has
 * one left.  A narrow scan tuple is filled from the tuple header alone;
 * st->tuple is what a heap-tuple scan slot points to.
 */
static pg_attribute_always_inline TupleTableSlot *
ds_emit_row(DioScanState *st, TupleTableSlot *slot)
{
	OffsetNumber off = st->vis[st->vis_idx++];
	ItemId		lp = PageGetItemId(st->page, off);
	HeapTupleHeader tup = (HeapTupleHeader) PageGetItem(st->page, lp);

	ds_prefetch_next_row(st);
	pgstat_count_heap_getnext(st->rel);
	if (st->narrow)
	{
		dio_narrow_store(&st->narrow_map, tup, slot);
		ItemPointerSet(&slot->tts_tid, st->page_blk, off);
		slot->tts_tableOid = st->tuple.t_tableOid;
		return slot;
	}
	st->tuple.t_data = tup;
	st->tuple.t_len = ItemIdGetLength(lp);
	ItemPointerSet(&st->tuple.t_self, st->page_blk, off);
	return ds_store_tuple(st, slot, off);
}

static pg_noinline TupleTableSlot *ds_scan_next_page(DioScanState *st,
													 TupleTableSlot *slot);

/*
 * The next row (the scan's access method).  Rows of the current page take
 * the short way; the page loop, with all its state, runs once per page.
 */
static inline TupleTableSlot *
ds_scan_next(ScanState *ss)
{
	DioScanState *st = (DioScanState *) ss;

	if (likely(st->vis_idx < st->nvis))
		return ds_emit_row(st, ss->ss_ScanTupleSlot);
	return ds_scan_next_page(st, ss->ss_ScanTupleSlot);
}

/*
 * The next page of the current direct run: its rows if the image may be
 * used (all-visible: every normal line pointer is a visible tuple), else the
 * block is read again through the buffer manager.
 */
static void
ds_run_next_page(DioScanState *st)
{
	int			i = st->page_idx++;
	BlockNumber blk = st->run.first + i;
	Page		page = (Page) (st->run.data + (size_t) i * BLCKSZ);

	if (i < st->run.nvalid && dio_direct_image_usable(st->rel, page, blk, st->lsn_bound))
	{
		st->counters.direct_blocks++;
		st->run_direct++;
		st->page = page;
		st->page_blk = blk;
		st->vis_idx = 0;
		/* its checksum, if any, has just read all of it */
		st->row_prefetch = st->post_check ? DIO_RP_ROWS : DIO_RP_NONE;
		ds_page_all_visible_tuples(st, page);
		return;
	}
	if (i < st->run.nvalid)
	{
		st->counters.buffered[DIO_SR_VERIFY]++;
		st->run_verify++;
	}
	else
		st->counters.buffered[DIO_SR_IO]++;
	st->single_blk = blk;
}

/*
 * Start on the next queued segment: a buffered one stays at the head of the
 * queue until used up (see seg_first); a direct one becomes the current run.
 * False at the end of the scan.
 */
static bool
ds_next_segment(DioScanState *st)
{
	DioSegment	seg;
	uint32		ahead;

	ds_fill(st);
	if (st->seg_count == 0)
		return false;
	seg = st->segq[st->seg_first % DIO_SEGQ_SIZE];
	if (!seg.direct)
	{
		st->buffered_active = true;
		st->bseg_next = seg.start;
		st->bseg_end = seg.start + seg.nblocks;
		return true;
	}
	st->seg_first++;
	st->seg_count--;
	if (!dio_stream_next(st->stream, &st->run))
		elog(ERROR, "direct read of block %u missing", seg.start);
	Assert(st->run.first == seg.start && st->run.nblocks == (int) seg.nblocks);
	st->have_run = true;
	st->page_idx = 0;
	st->run_direct = 0;
	st->run_verify = 0;

	/* blocks read ahead of these (EXPLAIN (IO)'s prefetch distance) */
	ahead = (uint32) dio_stream_blocks_ahead(st->stream);
	st->counters.pf_count += st->run.nblocks;
	st->counters.pf_dist_sum += (uint64) ahead * st->run.nblocks;
	st->counters.pf_dist_max = Max(st->counters.pf_dist_max, ahead);
	/* (pg_stat_io counts it when it completes, io_engine.c) */
	if (st->run.issued)
	{
		st->counters.reads++;
		st->counters.read_bytes += (uint64) st->run.nblocks * BLCKSZ;
	}
	return true;
}

/* Move on to the next page with a row and return that row, or end the scan. */
static pg_noinline TupleTableSlot *
ds_scan_next_page(DioScanState *st, TupleTableSlot *slot)
{
	for (;;)
	{
		/* 1. the rest of the current page */
		if (st->vis_idx < st->nvis)
			return ds_emit_row(st, slot);
		if (st->cur_buf != InvalidBuffer)
			ds_buffered_release(st);
		st->page = NULL;
		st->nvis = st->vis_idx = 0;

		CHECK_FOR_INTERRUPTS();

		/* a direct block that has to be read again, buffered */
		if (st->single_blk != InvalidBlockNumber)
		{
			Buffer		buf = ReadBufferExtended(st->rel, MAIN_FORKNUM, st->single_blk,
												 RBM_NORMAL, st->bstrategy);

			st->single_blk = InvalidBlockNumber;
			ds_buffered_page(st, buf, false);
			continue;
		}

		/* the next page of the buffered segment at the head */
		if (st->buffered_active)
		{
			if (st->bseg_next < st->bseg_end)
			{
				BlockNumber blk = st->bseg_next++;

				ds_buffered_page(st, ds_buffered_next_buffer(st, blk),
								 st->segq[st->seg_first % DIO_SEGQ_SIZE].resident);
				continue;
			}
			st->buffered_active = false;
			st->queued_buffered -= st->segq[st->seg_first % DIO_SEGQ_SIZE].nblocks;
			st->seg_first++;
			st->seg_count--;
		}

		/* 3. the next page of the current direct run */
		if (st->have_run)
		{
			if (st->page_idx < st->run.nblocks)
			{
				ds_run_next_page(st);
				continue;
			}
			ds_release_run(st);
		}

		/* 4. the next segment */
		if (!ds_next_segment(st))
		{
			ds_close_stream(st);
			return ExecClearTuple(slot);
		}
	}
}

static bool
ds_scan_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

/* ======================================================================
 * Executor: node callbacks
 * ====================================================================== */

static Node *
ds_create_scan_state(CustomScan *cscan)
{
	DioScanState *st = palloc0(sizeof(DioScanState));

	NodeSetTag(st, T_CustomScanState);
	st->css.methods = &dio_exec_methods;
	st->narrow = (cscan->custom_scan_tlist != NIL);
	st->css.slotOps = st->narrow ? &TTSOpsVirtual : &TTSOpsHeapTuple;
	return (Node *) st;
}

/* Reset the scan position (first fetch, rescan). */
static void
ds_scan_reset(DioScanState *st)
{
	if (st->cur_buf != InvalidBuffer)
		ds_buffered_release(st);
	st->page = NULL;
	st->nvis = st->vis_idx = 0;
	if (st->bstream != NULL)
		read_stream_reset(st->bstream);
	st->buffered_active = false;
	st->single_blk = InvalidBlockNumber;
	st->seg_first = st->seg_count = 0;
	st->queued_buffered = 0;
	st->bq_seq = 0;
	st->bq_off = 0;
	st->held_blk = InvalidBlockNumber;
	st->exhausted = false;
	st->next = 0;
	st->nblocks = RelationGetNumberOfBlocks(st->rel);
	st->pwork_ready = false;
	st->cache_chunk = InvalidBlockNumber;
	st->res_chunk = InvalidBlockNumber;
	ds_resident_reset(st);
}

/*
 * Reads in flight for this process: pg_dio.queue_depth, which the processes
 * of a parallel scan share (the workers planned, and the leader unless
 * parallel_leader_participation is off), each keeping at least 4 of them.
 * The reads land in memory the process then checksums and scans, so what
 * all of them have in flight together stays within the CPU's last-level
 * cache (docs/benchmarks.md has the measurements).  A leader left alone when
 * no worker could be launched keeps its share too.
 */
static int
ds_stream_depth(DioScanState *st)
{
	int			participants;

	if (st->shared == NULL)
		return pg_dio_queue_depth;
	participants = st->shared->nworkers + (parallel_leader_participation ? 1 : 0);
	if (participants <= 1)
		return pg_dio_queue_depth;
	return Max(Min(pg_dio_queue_depth, 4),
			   (pg_dio_queue_depth + participants - 1) / participants);
}

/*
 * The engine stream lives only while the scan has blocks left: opened at the
 * first fill, closed when the scan is exhausted, so that an Append over many
 * partitions holds one at a time.
 */
static void
ds_open_stream(DioScanState *st)
{
	Assert(st->stream == NULL);
	if (!dio_stream_slot_free())
	{
		st->no_stream = true;	/* every block goes buffered */
		return;
	}
	st->stream = dio_stream_begin(st->rel, MAIN_FORKNUM, ds_stream_depth(st));
	st->max_run = dio_stream_max_blocks(st->stream);
	st->counters.pf_capacity = Max(st->counters.pf_capacity,
								   (uint32) (ds_stream_depth(st) * st->max_run));
	if (st->bulkread)
		dio_stream_set_io_context(st->stream, IOCONTEXT_BULKREAD);
}

static void
ds_close_stream(DioScanState *st)
{
	if (st->have_run)
		ds_release_run(st);
	if (st->stream == NULL)
		return;
	st->counters = ds_current_counters(st);	/* keep the stream's waits */
	dio_stream_end(st->stream);
	st->stream = NULL;
}

/* First fetch. */
static void
ds_scan_open(DioScanState *st)
{
	/* a bulk-read ring where core's heap scan would use one (heapam's initscan) */
	st->bulkread = RelationGetNumberOfBlocks(st->rel) > (BlockNumber) NBuffers / 4;
	st->bstrategy = st->bulkread ? GetAccessStrategy(BAS_BULKREAD) : NULL;
	st->check_serializable = CheckForSerializableConflictOutNeeded(st->rel, st->snapshot);
	pgstat_count_heap_scan(st->rel);
	ds_scan_reset(st);
	st->opened = true;
}

static void
ds_begin_scan(CustomScanState *node, EState *estate, int eflags)
{
	DioScanState *st = (DioScanState *) node;

	st->rel = node->ss.ss_currentRelation;
	st->snapshot = estate->es_snapshot;
	st->vmbuf = InvalidBuffer;
	st->held_blk = InvalidBlockNumber;
	st->cur_buf = InvalidBuffer;
	st->single_blk = InvalidBlockNumber;
	st->tuple.t_tableOid = RelationGetRelid(st->rel);
	st->empty_tlist = (node->ss.ps.ps_ProjInfo != NULL &&
					   node->ss.ps.plan->targetlist == NIL &&
					   node->ss.ps.ps_ResultTupleSlot != NULL &&
					   node->ss.ps.ps_ResultTupleSlot->tts_tupleDescriptor->natts == 0);
	/* an EvalPlanQual EState is one from the start (EvalPlanQualStart) */
	st->short_way = DIO_SHORT_NONE;
	if (node->ss.ps.qual == NULL && estate->es_epq_active == NULL)
	{
		if (node->ss.ps.ps_ProjInfo == NULL)
			st->short_way = DIO_SHORT_ROW;
		else if (st->empty_tlist)
			st->short_way = DIO_SHORT_EMPTY;
	}

	/*
	 * Where a page's rows go straight out, the node's ExecProcNode is one of
	 * our own fronts instead of ExecCustomScan, which would only check for
	 * interrupts (the page loop does that once per page) and call
	 * ds_exec_scan, which then only takes over at the end of each page.
	 * ExecInitCustomScan calls us after it has set
	 * ExecProcNode and before ExecInitNode wraps it (ExecSetExecProcNode),
	 * so the wrapping, instrumentation included, sees ours.
	 */
	if (st->short_way == DIO_SHORT_ROW)
		node->ss.ps.ExecProcNode = ds_proc_row;
	else if (st->short_way == DIO_SHORT_EMPTY)
		node->ss.ps.ExecProcNode = ds_proc_empty;

	if (st->narrow)
		dio_narrow_init(&st->narrow_map, RelationGetDescr(st->rel),
						((CustomScan *) node->ss.ps.plan)->custom_scan_tlist);

	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;

	/*
	 * SERIALIZABLE needs core's relation predicate lock and per-tuple
	 * conflict checks on a locked buffer: take the lock, read buffered.
	 */
	st->direct_ok = IsMVCCSnapshot(st->snapshot) && !IsolationIsSerializable();
	if (IsolationIsSerializable())
		PredicateLockRelation(st->rel, st->snapshot);
	st->post_check = !dio_checksums_verify();
	st->started = true;
}

/*
 * The next row of a scan without columns and without quals (count(*)): the
 * parent sees only that a row is there, so the rows of the current page are
 * counted off without storing them anywhere.  The result slot holds an
 * empty virtual tuple from the first row to the last.
 */
static pg_attribute_always_inline TupleTableSlot *
ds_emit_empty_row(DioScanState *st)
{
	TupleTableSlot *res = st->css.ss.ps.ps_ResultTupleSlot;

	st->vis_idx++;
	pgstat_count_heap_getnext(st->rel);
	if (TTS_EMPTY(res))
		ExecStoreVirtualTuple(res);
	return res;
}

static TupleTableSlot *
ds_next_empty_row(DioScanState *st)
{
	TupleTableSlot *res = st->css.ss.ps.ps_ResultTupleSlot;

	if (st->vis_idx < st->nvis)
		return ds_emit_empty_row(st);

	/* the next page: its first row (TupIsNull evaluates twice) */
	{
		TupleTableSlot *slot = ds_scan_next(&st->css.ss);

		if (TupIsNull(slot))
			return ExecClearTuple(res);
	}
	if (TTS_EMPTY(res))
		ExecStoreVirtualTuple(res);
	return res;
}

/*
 * The next row (ExecCustomScan), and the fronts' way for everything but a
 * page's next row.  Like core's seq scan, one specialised loop per
 * combination of qual and projection, with our access method inlined.
 */
static pg_noinline TupleTableSlot *
ds_exec_scan(CustomScanState *node)
{
	DioScanState *st = (DioScanState *) node;
	EPQState   *epq = node->ss.ps.state->es_epq_active;
	ExprState  *qual = node->ss.ps.qual;
	ProjectionInfo *proj = node->ss.ps.ps_ProjInfo;

	if (!st->opened)
		ds_scan_open(st);

	/*
	 * With nothing to evaluate, rows go straight out: ExecScanExtended would
	 * reset the per-tuple memory for each row, which nothing here allocates
	 * in, and check for interrupts, which the page loop does per page.
	 */
	if (st->short_way == DIO_SHORT_ROW)
		return ds_scan_next(&node->ss);
	if (qual == NULL && proj == NULL)
		return ExecScanExtended(&node->ss, ds_scan_next, ds_scan_recheck, epq, NULL, NULL);

	/*
	 * No column wanted at all (count(*)): core's SeqScan gets a physical
	 * target list and projects nothing; a custom scan is always given the
	 * exact one, here empty.  Produce the empty row without running the
	 * projection.
	 */
	if (st->empty_tlist && qual == NULL)
		return ds_next_empty_row(st);
	if (st->empty_tlist)
	{
		TupleTableSlot *res = node->ss.ps.ps_ResultTupleSlot;
		TupleTableSlot *slot = ExecScanExtended(&node->ss, ds_scan_next, ds_scan_recheck,
												epq, qual, NULL);

		ExecClearTuple(res);
		if (TupIsNull(slot))
			return res;
		return ExecStoreVirtualTuple(res);
	}
	if (proj == NULL)
		return ExecScanExtended(&node->ss, ds_scan_next, ds_scan_recheck, epq, qual, NULL);
	if (qual == NULL)
		return ExecScanExtended(&node->ss, ds_scan_next, ds_scan_recheck, epq, NULL, proj);
	return ExecScanExtended(&node->ss, ds_scan_next, ds_scan_recheck, epq, qual, proj);
}

/*
 * The fronts that replace ExecCustomScan (see ds_begin_scan).
 *
 * A narrow row without nulls, into a slot that needs no clearing, of a
 * relation whose statistics entry is set up, goes out through code that calls
 * nothing, so it needs no stack frame (callee-saved registers pushed and
 * popped on every row); any other row, and the next page, through
 * ds_exec_scan.
 */
static TupleTableSlot *
ds_proc_row(PlanState *ps)
{
	DioScanState *st = (DioScanState *) ps;
	TupleTableSlot *slot = st->css.ss.ss_ScanTupleSlot;

	if (likely(st->vis_idx < st->nvis && st->narrow && !TTS_SHOULDFREE(slot) &&
			   st->rel->pgstat_info != NULL))
	{
		OffsetNumber off = st->vis[st->vis_idx];
		HeapTupleHeader tup = (HeapTupleHeader)
			PageGetItem(st->page, PageGetItemId(st->page, off));

		if (likely(dio_narrow_fixed_ok(&st->narrow_map, tup)))
		{
			st->vis_idx++;
			ds_prefetch_next_row(st);
			st->rel->pgstat_info->counts.tuples_returned++;	/* as pgstat_count_heap_getnext */
			dio_narrow_store_fixed(&st->narrow_map, tup, slot);
			ItemPointerSet(&slot->tts_tid, st->page_blk, off);
			slot->tts_tableOid = st->tuple.t_tableOid;
			return slot;
		}
	}
	return ds_exec_scan(&st->css);
}

static TupleTableSlot *
ds_proc_empty(PlanState *ps)
{
	DioScanState *st = (DioScanState *) ps;

	if (likely(st->vis_idx < st->nvis))
		return ds_emit_empty_row(st);
	return ds_exec_scan(&st->css);
}

static void
ds_end_scan(CustomScanState *node)
{
	DioScanState *st = (DioScanState *) node;

	/* this process's part of the statement's figures (rescans included) */
	for (int i = 0; i < DIO_SR_COUNT; i++)
		dio_stmt_io.buffered[i] += st->counters.buffered[i];
	memset(st->counters.buffered, 0, sizeof(st->counters.buffered));

	if (!st->started)
		return;
	ds_close_stream(st);
	if (st->cur_buf != InvalidBuffer)
		ds_buffered_release(st);
	if (st->bstream != NULL)
		read_stream_end(st->bstream);
	st->bstream = NULL;
	if (st->bstrategy != NULL)
		FreeAccessStrategy(st->bstrategy);
	st->bstrategy = NULL;
	if (BufferIsValid(st->vmbuf))
		ReleaseBuffer(st->vmbuf);
	st->vmbuf = InvalidBuffer;
	st->started = false;
}

static void
ds_rescan(CustomScanState *node)
{
	DioScanState *st = (DioScanState *) node;

	if (!st->started)
		return;
	/* reads queued for the old position are cancelled and dropped */
	ds_close_stream(st);
	if (st->opened)
		ds_scan_reset(st);
	ExecScanReScan(&node->ss);
}

/* ---------- parallel ---------- */

static Size
ds_estimate_dsm(CustomScanState *node, ParallelContext *pcxt)
{
	return add_size(offsetof(DioScanShared, workers),
					mul_size(pcxt->nworkers, sizeof(DioScanCounters)));
}

static void
ds_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	DioScanState *st = (DioScanState *) node;
	DioScanShared *shared = (DioScanShared *) coordinate;

	table_block_parallelscan_initialize(st->rel, (ParallelTableScanDesc) &shared->pscan);
	shared->nworkers = pcxt->nworkers;
	memset(shared->workers, 0, sizeof(DioScanCounters) * pcxt->nworkers);
	st->shared = shared;
	st->pwork_ready = false;
}

static void
ds_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate)
{
	DioScanState *st = (DioScanState *) node;
	DioScanShared *shared = (DioScanShared *) coordinate;

	table_block_parallelscan_reinitialize(st->rel, (ParallelTableScanDesc) &shared->pscan);
	memset(shared->workers, 0, sizeof(DioScanCounters) * shared->nworkers);
}

static void
ds_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate)
{
	DioScanState *st = (DioScanState *) node;

	st->shared = (DioScanShared *) coordinate;
	st->pwork_ready = false;
}

static void
ds_counters_add(DioScanCounters *dst, const DioScanCounters *src)
{
	dst->direct_blocks += src->direct_blocks;
	dst->reads += src->reads;
	dst->read_bytes += src->read_bytes;
	dst->waits += src->waits;
	dst->wait_us += src->wait_us;
	dst->issued += src->issued;
	dst->inflight_sum += src->inflight_sum;
	dst->os_cached_chunks += src->os_cached_chunks;
	for (int i = 0; i < DIO_SR_COUNT; i++)
		dst->buffered[i] += src->buffered[i];
	dst->pf_count += src->pf_count;
	dst->pf_dist_sum += src->pf_dist_sum;
	dst->pf_dist_max = Max(dst->pf_dist_max, src->pf_dist_max);
	dst->pf_capacity = Max(dst->pf_capacity, src->pf_capacity);
	dst->buffered_io.prefetch_count += src->buffered_io.prefetch_count;
	dst->buffered_io.distance_sum += src->buffered_io.distance_sum;
	dst->buffered_io.distance_max = Max(dst->buffered_io.distance_max,
										src->buffered_io.distance_max);
	dst->buffered_io.distance_capacity = Max(dst->buffered_io.distance_capacity,
											 src->buffered_io.distance_capacity);
	dst->buffered_io.wait_count += src->buffered_io.wait_count;
	dst->buffered_io.io_count += src->buffered_io.io_count;
	dst->buffered_io.io_nblocks += src->buffered_io.io_nblocks;
	dst->buffered_io.io_in_progress += src->buffered_io.io_in_progress;
}

/* Snapshot of this process's counters, including waits so far. */
static DioScanCounters
ds_current_counters(DioScanState *st)
{
	DioScanCounters c = st->counters;

	c.buffered_io = st->bstats;
	if (st->stream != NULL)
	{
		uint64		waits,
					wait_us,
					issued,
					inflight_sum;

		dio_stream_wait_stats(st->stream, &waits, &wait_us);
		c.waits += waits;
		c.wait_us += wait_us;
		dio_stream_inflight_stats(st->stream, &issued, &inflight_sum);
		c.issued += issued;
		c.inflight_sum += inflight_sum;
	}
	return c;
}

static void
ds_shutdown_scan(CustomScanState *node)
{
	DioScanState *st = (DioScanState *) node;

	if (st->shared == NULL)
		return;
	if (IsParallelWorker())
	{
		if (ParallelWorkerNumber >= 0 && ParallelWorkerNumber < st->shared->nworkers)
			st->shared->workers[ParallelWorkerNumber] = ds_current_counters(st);
		return;
	}
	/* leader: the DSM goes away before EXPLAIN prints */
	memset(&st->workers_sum, 0, sizeof(st->workers_sum));
	st->nworkers_copied = st->shared->nworkers;
	st->worker_copy = palloc(sizeof(DioScanCounters) * Max(1, st->nworkers_copied));
	for (int i = 0; i < st->nworkers_copied; i++)
	{
		st->worker_copy[i] = st->shared->workers[i];
		ds_counters_add(&st->workers_sum, &st->worker_copy[i]);
	}
}

/* ---------- EXPLAIN ---------- */

static void
ds_explain_counters(const DioScanCounters *c, ExplainState *es)
{
	uint64		buffered = 0;

	/* average reads in flight when one was submitted, itself included */
	double		inprogress = c->issued ? (double) c->inflight_sum / c->issued : 0.0;

	for (int i = 0; i < DIO_SR_COUNT; i++)
		buffered += c->buffered[i];

	if (es->format == EXPLAIN_FORMAT_TEXT)
	{
		ExplainIndentText(es);
		appendStringInfo(es->str, "Direct I/O: blocks=" UINT64_FORMAT " count=" UINT64_FORMAT
						 " waits=" UINT64_FORMAT " size=%.0fkB inprogress=%.2f wait time=%.3f ms\n",
						 c->direct_blocks, c->reads, c->waits,
						 c->reads ? (double) c->read_bytes / c->reads / 1024.0 : 0.0,
						 inprogress, (double) c->wait_us / 1000.0);
		ExplainIndentText(es);
		appendStringInfo(es->str, "Buffered: blocks=" UINT64_FORMAT, buffered);
		for (int i = 0; i < DIO_SR_COUNT; i++)
			if (c->buffered[i] > 0)
				appendStringInfo(es->str, " %s=" UINT64_FORMAT,
								 dio_scan_reason_names[i], c->buffered[i]);
		if (c->os_cached_chunks > 0)
			appendStringInfo(es->str, " (OS-cached chunks=" UINT64_FORMAT ")", c->os_cached_chunks);
		appendStringInfoChar(es->str, '\n');
	}
	else
	{
		ExplainPropertyUInteger("Direct Blocks", NULL, c->direct_blocks, es);
		ExplainPropertyUInteger("Direct Reads", NULL, c->reads, es);
		ExplainPropertyUInteger("Direct Read Bytes", NULL, c->read_bytes, es);
		ExplainPropertyUInteger("Direct Read Waits", NULL, c->waits, es);
		ExplainPropertyFloat("Direct Reads In Progress", NULL, inprogress, 2, es);
		ExplainPropertyFloat("Direct Read Wait Time", "ms", (double) c->wait_us / 1000.0, 3, es);
		ExplainPropertyUInteger("Buffered Blocks", NULL, buffered, es);
		ExplainPropertyUInteger("Buffered Resident", NULL, c->buffered[DIO_SR_RESIDENT], es);
		ExplainPropertyUInteger("Buffered Not All-Visible", NULL, c->buffered[DIO_SR_NOT_ALL_VISIBLE], es);
		ExplainPropertyUInteger("Buffered Isolation", NULL, c->buffered[DIO_SR_ISOLATION], es);
		ExplainPropertyUInteger("Buffered Verification", NULL, c->buffered[DIO_SR_VERIFY], es);
		ExplainPropertyUInteger("Buffered I/O Fallback", NULL, c->buffered[DIO_SR_IO], es);
		ExplainPropertyUInteger("Buffered OS-Cached", NULL, c->buffered[DIO_SR_OS_CACHED], es);
		ExplainPropertyUInteger("OS-Cached Chunks", NULL, c->os_cached_chunks, es);
	}
}

static void
ds_explain_scan(CustomScanState *node, List *ancestors, ExplainState *es)
{
	DioScanState *st = (DioScanState *) node;
	DioScanCounters total;

	if (!es->analyze)
		return;
	total = ds_current_counters(st);
	ds_counters_add(&total, &st->workers_sum);
	if (dio_explain_io(es))
	{
		/* as core's EXPLAIN (IO) of a Seq Scan: direct and buffered reads */
		DioIOStats	io = total.buffered_io;

		io.prefetch_count += total.pf_count;
		io.distance_sum += total.pf_dist_sum;
		io.distance_max = Max(io.distance_max, (int16) Min(total.pf_dist_max, PG_INT16_MAX));
		io.distance_capacity = Max(io.distance_capacity,
								   (int16) Min(total.pf_capacity, PG_INT16_MAX));
		io.wait_count += total.waits;
		io.io_count += total.issued;
		io.io_nblocks += total.read_bytes / BLCKSZ;
		io.io_in_progress += total.inflight_sum;
		dio_explain_io_stats(es, &io);
	}
	ds_explain_counters(&total, es);

	if (es->verbose && st->worker_copy != NULL)
	{
		for (int i = 0; i < st->nworkers_copied; i++)
		{
			if (es->format == EXPLAIN_FORMAT_TEXT)
			{
				ExplainIndentText(es);
				appendStringInfo(es->str, "Worker %d:\n", i);
				es->indent++;
				ds_explain_counters(&st->worker_copy[i], es);
				es->indent--;
			}
			else
			{
				char		label[32];

				snprintf(label, sizeof(label), "Worker %d", i);
				ExplainOpenGroup(label, label, true, es);
				ds_explain_counters(&st->worker_copy[i], es);
				ExplainCloseGroup(label, label, true, es);
			}
		}
	}
}

/* ======================================================================
 * Setup
 * ====================================================================== */

void
dio_direct_init(void)
{
	DefineCustomBoolVariable("pg_dio.enable_direct_scan",
							 "Enables DirectSeqScan in place of sequential scans of large heap tables.",
							 NULL,
							 &pg_dio_enable_direct_scan,
							 true,
							 PGC_USERSET, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("pg_dio.direct_scan_threshold",
							"Sets the smallest table that DirectSeqScan reads.",
							"The table's size, or under a Limit the part of it the planner expects the Limit to read.",
							&pg_dio_direct_scan_threshold,
							2048, 0, INT_MAX / 2,
							PGC_USERSET, GUC_UNIT_BLOCKS,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_dio.resident_sweep",
							 "Sets how DirectSeqScan finds the blocks that are in shared buffers.",
							 "One sweep over the buffer descriptors, or a lookup per block: auto sweeps once the scan has looked up as many blocks as 1/32 of shared_buffers' buffers; on sweeps when the scan starts; off always looks up.",
							 &pg_dio_resident_sweep,
							 DIO_SWEEP_AUTO, dio_sweep_options,
							 PGC_USERSET, GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	RegisterCustomScanMethods(&dio_scan_methods);
}
