/*-------------------------------------------------------------------------
 *
 * scan_readahead.c
 *	  Heap read-ahead for a scan that fetches heap tuples by TID in its
 *	  producer's order (PrefetchIndexScan's index order): the TID queue, the
 *	  look-ahead over it and the heap block sources.
 *
 * The producer (RaSetup.fetch) appends TIDs to a queue when the look-ahead
 * asks; each run of consecutive TIDs on the same heap block is a "group".
 * The look-ahead walks the queue ahead of the consumer and gets each group's
 * block on its way from one of the sources:
 *
 *	- a core read stream, whose callback is the look-ahead and which hands
 *	  the consumer the block's buffer at each group start (read-stream mode);
 *	- posix_fadvise advice, the consumer reading each block itself when it
 *	  gets there (self-read mode), neighbours advised together when TIDs
 *	  read further ahead want them (ra_deep_fill, ra_advise);
 *	- the OS page-cache probe (cachestat through a pg_dio stream's fds): a
 *	  cached block is read by the consumer, not sent to the stream or advised;
 *	- direct block images read by pg_dio's engine (ra_direct_block), used
 *	  only when they pass DirectSeqScan's rules.
 *
 * The consumer takes entries in queue order (ra_next_entry), with cur_buf
 * (or the held direct image) holding the block of each that needs one, and
 * finds the TID's visible tuple with ra_fetch_tuple.
 *
 * Look-ahead: the stream asks for more blocks only as its own distance grows
 * (it starts at one block and doubles when it has to wait for I/O), so an
 * ORDER BY ... LIMIT or a nestloop inner does not over-read.  Runs of TIDs
 * that need no block (all-visible, index-only) are capped per callback call;
 * at the cap the callback ends the stream, the consumer drains the queue,
 * resets the stream and doubles the cap.  Same-block TIDs are bounded by the
 * page.  A hard cap on queued TIDs bounds memory.  In self-read mode, once
 * it looks ahead, the producer is read further ahead than the look-ahead (a
 * bounded multiple of the TIDs looked at) so that neighbouring heap blocks
 * the scan will want are advised together (ra_deep_fill, ra_advise); the
 * consumer never takes a TID the look-ahead has not looked at.
 *
 * Why reading TIDs ahead is safe is the producer's to ensure (an MVCC
 * snapshot: see scan_prefetch_exec.c); without RaSetup.prefetch the
 * look-ahead takes one TID at a time.
 *
 * Lifetime: the consumer holds a pin on the current group's buffer (or the
 * direct image) until it moves to the next group; the user's slot
 * (RaSetup.slot) is cleared before an image it may point into is given back.
 * The queue lives in the memory context given to ra_init.  ra_reset resets
 * the stream first, then the queue.  On ERROR, pins and engine streams go
 * with the resource owner and memory with the query.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_readahead.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "common/hashfn.h"
#include "executor/instrument.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/aio.h"
#include "storage/bufmgr.h"
#include "storage/fd.h"
#include "storage/smgr.h"
#include "storage/read_stream.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/spccache.h"

#include "compat.h"
#include "diag.h"
#include "engine.h"
#include "safety.h"
#include "scan_feed.h"
#include "scan_readahead.h"

/* TIDs needing no block that one callback call may queue, at first and at most */
#define RA_MIN_RUN			32
#define RA_MAX_RUN			8192
/* hard cap on queued TIDs (memory) */
#define RA_MAX_QUEUED		262144
/*
 * TIDs read from the producer ahead of the look-ahead: at most, per TID
 * looked at, and the memory each may take: a queue entry (16 bytes) and an
 * entry of ra->ahead (12 bytes), each in a table that doubles as it grows.
 * Bounded by hash_mem (work_mem x hash_mem_multiplier) as a hash table of
 * core's: the defaults (8MB) allow RA_DEEP_MAX.
 */
#define RA_DEEP_MAX			131072
#define RA_DEEP_MULT		16
#define RA_DEEP_BYTES		56
/* no direct reads of relations larger than this (ra_direct_block's bitmap) */
#define RA_DIRECT_MAX_BLOCKS	((BlockNumber) 64 * 1024 * 1024)
/* a call of read_stream_next_buffer() longer than this counts as a wait */
#define RA_WAIT_US			20
/* consecutive steps to the next heap block that make a forward walk */
#define RA_FORWARD_RUN		3

/*
 * Heap blocks of the TIDs queued beyond the look-ahead (ra_deep_fill), with
 * how many queued TIDs want each, and whether it was advised already as part
 * of a neighbour's read (ra_advise).
 */
typedef struct RaAhead
{
	BlockNumber blk;
	uint32		count;
	bool		early;
	char		status;
} RaAhead;

#define SH_PREFIX		raahead
#define SH_ELEMENT_TYPE	RaAhead
#define SH_KEY_TYPE		BlockNumber
#define SH_KEY			blk
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE		static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static BlockNumber ra_stream_next_block(ReadStream *stream, void *private,
										void *per_buffer_data);

/* ======================================================================
 * The TID queue
 * ====================================================================== */

/* Room for one more entry at the tail; grows the ring when full. */
RaEntry *
ra_push(RaState *ra)
{
	if (ra->tail - ra->head == ra->qsize)
	{
		uint32		nsize = ra->qsize * 2;
		RaEntry    *nq = MemoryContextAlloc(GetMemoryChunkContext(ra->q),
											sizeof(RaEntry) * nsize);
		uint64		n = ra->tail - ra->head;

		for (uint64 i = 0; i < n; i++)
			nq[i] = *ra_entry(ra, ra->head + i);
		pfree(ra->q);
		ra->q = nq;
		ra->qsize = nsize;
		ra->examined -= ra->head;
		ra->head = 0;
		ra->tail = n;
	}
	return ra_entry(ra, ra->tail++);
}

static inline uint64
ra_blocks_read_now(void)
{
	return pgBufferUsage.shared_blks_read + pgBufferUsage.local_blks_read;
}

/*
 * When the node begins (not for EXPLAIN without ANALYZE): the queue, in
 * 'cxt', which lives as long as the scan; 'slot' is the one the user stores
 * tuples of the current block in.
 */
void
ra_init(RaState *ra, MemoryContext cxt, TupleTableSlot *slot)
{
	ra->slot = slot;
	ra->cur_buf = InvalidBuffer;
	ra->pending_buf = InvalidBuffer;
	ra->vmbuf = InvalidBuffer;
	ra->last_blk = InvalidBlockNumber;
	ra->run_cap = RA_MIN_RUN;
	ra->qsize = 64;
	ra->q = MemoryContextAlloc(cxt, sizeof(RaEntry) * ra->qsize);
}

/*
 * At the scan's first row: which sources it uses.  The read stream is begun
 * here, in read-stream mode.
 */
void
ra_start(RaState *ra, const RaSetup *setup)
{
	Relation	heap = setup->heap;

	ra->heap = heap;
	ra->read_only = setup->read_only;
	ra->fetch = setup->fetch;
	ra->take = setup->take;
	ra->arg = setup->arg;
	ra->prefetch = setup->prefetch;
	if (setup->queued)
		ra->capacity = ra_stream_capacity(heap);
	ra->timing = setup->timing;
	ra->advice = setup->advice && io_method == IOMETHOD_WORKER;

	/*
	 * With the advice (pg_dio.index_prefetch_advice), whatever io_method,
	 * read the heap blocks ourselves after advising them (see
	 * ra_look_ahead): at most the tablespace's I/O concurrency of advised
	 * blocks ahead, as many reads as the stream would have in flight, and at
	 * most the stream's capacity of blocks; then no stream is begun.  (Also
	 * with io_method=io_uring: the kernel reads the advised blocks, and
	 * neighbours combined, ahead; a read stream asks for one block at a time
	 * in index order.)  Not without read-ahead (no MVCC) or I/O concurrency.
	 */
	ra->self_max = get_tablespace_io_concurrency(heap->rd_rel->reltablespace);
	ra->selfread = setup->advice &&
		ra->prefetch && ra->self_max > 0 &&
		!RelationUsesLocalBuffers(heap);
	ra->combine = setup->combine;
	/* entries with copies: half of hash_mem for the TIDs, half for the copies */
	ra->deep_max = (uint32) Min(get_hash_memory_limit() / RA_DEEP_BYTES /
								(setup->copies ? 2 : 1), RA_DEEP_MAX);
	ra->deep_copy_max = get_hash_memory_limit() / 2;
	ra->self_ahead = 0;
	ra->self_ios = 0;
	ra->self_dist = 1;
	ra->fwd_last = InvalidBlockNumber;
	ra->fwd_run = 0;
	ra->topup_pending = false;

	/*
	 * Direct reads of the blocks it looks ahead at, in self-read mode: under
	 * DirectSeqScan's rule 1 (an MVCC snapshot, not SERIALIZABLE, whose
	 * per-tuple predicate locks need the buffer), where the user allows them
	 * (a plain SELECT: no row marks, no EvalPlanQual; not index-only, which
	 * reads only blocks that are not all-visible).
	 */
	ra->direct = setup->direct && ra->selfread &&
		!IsolationIsSerializable() && dio_stats_available();
	/* before any visibility-map bit it governs is read (ra_direct_block) */
	ra->lsn_bound = dio_image_lsn_bound(setup->snapshot);
	ra->feed = ra->selfread ? setup->feed : NULL;
	if (setup->queued && !ra->selfread)
		ra->stream = read_stream_begin_relation(READ_STREAM_DEFAULT, NULL,
												heap, MAIN_FORKNUM,
												ra_stream_next_block, ra, 0);
	if (ra->stream)
		dio_read_stream_enable_stats(ra->stream, &ra->iostats);
}

/* ======================================================================
 * Heap block sources: the OS page-cache probe, direct images, advice
 * ====================================================================== */

/*
 * Is the heap block in the OS page cache?  Asked with cachestat(2) on the
 * segment through a pg_dio stream's fds (opened lazily, closed at the end of
 * the scan, cleaned up by the resource owner on error).  False whenever it
 * cannot be known cheaply: no cachestat, temporary relation, pg_dio not
 * preloaded, no stream slot, pg_dio.os_cache_check off.
 */
static DioStream *
ra_engine_stream(RaState *ra)
{
	Relation	heap = ra->heap;

	if (ra->oscheck == NULL && !ra->engine_off)
	{
		if (!dio_stats_available() || RelationUsesLocalBuffers(heap) ||
			!dio_stream_slot_free())
			ra->engine_off = true;
		else
			ra->oscheck = dio_stream_begin_oscheck(heap);
	}
	return ra->oscheck;
}

static bool
ra_block_os_cached(RaState *ra, BlockNumber blk)
{
	int			n;

	if (ra->oscheck_off)
		return false;
	if (!pg_dio_os_cache_check || !dio_cachestat_available() ||
		ra_engine_stream(ra) == NULL)
	{
		ra->oscheck_off = true;
		return false;
	}
	/*
	 * A cold scan finds little: then ask for every 16th block only (and send
	 * the others to the stream).  A scan of an OS-cached table finds nearly
	 * everything: then ask for every 8th only and take the others as cached
	 * (one that is not is read synchronously, as core's index scan reads
	 * every block).  Judged over windows of 32 checks.
	 */
	if (ra->os_skip > 0)
	{
		ra->os_skip--;
		return ra->os_dense;
	}
	n = dio_stream_os_cached(ra->oscheck, blk, 1);
	if (n < 0 || !dio_cachestat_available())
	{
		ra->oscheck_off = true;
		return false;
	}
	ra->os_found += (n > 0);
	if (++ra->os_checked == 32)
	{
		ra->os_sparse = ra->os_found * 4 < ra->os_checked;
		ra->os_dense = ra->os_found * 8 >= ra->os_checked * 7;
		ra->os_checked = ra->os_found = 0;
	}
	if (ra->os_sparse && n == 0)
		ra->os_skip = 15;
	else if (ra->os_dense && n > 0)
		ra->os_skip = 7;
	return n > 0;
}

/*
 * Read heap block 'blk' directly, bypassing shared buffers and the OS page
 * cache: submit an O_DIRECT read of it to pg_dio's engine if the scan may
 * (ra->direct, see ra_start), the visibility map says all-visible and the
 * block is not in shared buffers -- DirectSeqScan's rules 1-3
 * (docs/design.md): a block not resident at submission has
 * on disk every change our snapshot can see.  The consumer takes the image in
 * queue order (ra_direct_take) and uses it only if it passes rule 4, so that
 * every normal tuple on it is visible to us; otherwise it reads the block
 * through the buffer manager.  False (read it buffered) also when the engine
 * has no free request: at most the look-ahead's I/Os plus the held one.
 *
 * A block read directly is not in shared buffers afterwards, so a scan that
 * comes back to it would read it from the device again where a buffered
 * scan finds it there.  So each block is read directly at most once per scan
 * (ra->dseen), later visits read it through the buffer manager, and once a
 * quarter as many direct candidates are such visits as first ones (a range
 * whose rows share few blocks; judged from 64 on) the scan reads no more
 * blocks directly: at most about 1.25 times the reads of a buffered scan.  (The bench's 1%
 * random range comes back to ~10% of its blocks.)
 */
static bool
ra_direct_block(RaState *ra, BlockNumber blk)
{
	Relation	heap = ra->heap;
	uint64		bit;

	if (!ra->direct)
		return false;
	if (ra->dseen == NULL)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(heap);

		if (nblocks > RA_DIRECT_MAX_BLOCKS || !dio_stream_slot_free())
		{
			ra->direct = false;
			return false;
		}
		ra->dseen_nblocks = nblocks;
		ra->dseen = MemoryContextAllocZero(GetMemoryChunkContext(ra->q),
										   sizeof(uint64) * (nblocks / 64 + 1));
	}
	if (blk >= ra->dseen_nblocks)
		return false;			/* added since: left to the buffer manager */
	bit = UINT64CONST(1) << (blk % 64);
	if (ra->dseen[blk / 64] & bit)
	{
		if (++ra->dagain * 4 > ra->dfirst && ra->dfirst + ra->dagain >= 64)
			ra->direct = false;
		return false;
	}
	if (!VM_ALL_VISIBLE(heap, blk, &ra->vmbuf) || dio_block_resident(heap, blk))
		return false;
	if (ra->dstream == NULL)
	{
		if (!dio_stream_slot_free())
		{
			ra->direct = false;
			return false;
		}
		ra->dstream = dio_stream_begin(heap, MAIN_FORKNUM, ra->self_max + 1);
	}
	if (!dio_stream_can_submit(ra->dstream))
		return false;
	ra->dseen[blk / 64] |= bit;
	ra->dfirst++;
	dio_stream_submit(ra->dstream, blk, 1);
	return true;
}

/* Give the held direct image back (the scan slot may point into it). */
static void
ra_direct_release(RaState *ra)
{
	ExecClearTuple(ra->slot);
	if (ra->borrowed)
		dio_feed_untake(ra->feed);
	else
		dio_stream_release(ra->dstream, &ra->run);
	ra->have_run = false;
	ra->borrowed = false;
}

/*
 * The consumer arrived at a group start whose block ra_direct_block
 * submitted: take the image (waiting for it) and keep it as the current
 * group if it is usable.  False if the block must be read through the buffer
 * manager after all (I/O fault or failed check: counted, never an ERROR).
 */
static bool
ra_direct_take(RaState *ra, BlockNumber blk)
{
	Relation	heap = ra->heap;

	if (!dio_stream_next(ra->dstream, &ra->run) || ra->run.first != blk)
		elog(ERROR, "direct read of heap block %u out of step", blk);
	ra->have_run = true;
	if (ra->run.nvalid < 1 ||
		!dio_direct_image_usable(heap, (Page) ra->run.data, blk, ra->lsn_bound))
	{
		dio_stats_count_blocks(0, ra->run.nvalid < 1 ? ra->run.reason : DIO_FB_VERIFY, 1);
		ra->c.direct_fallback++;
		ra_direct_release(ra);
		return false;
	}
	dio_stats_count_blocks(1, DIO_FB_VERIFY, 0);
	ra->c.direct++;
	if (BufferIsValid(ra->cur_buf))
		ReleaseBuffer(ra->cur_buf);
	ra->cur_buf = InvalidBuffer;
	ra->dpage = (Page) ra->run.data;
	ra->dblk = blk;
	return true;
}

/*
 * The consumer arrived at a group start that it would read itself: take
 * the feed's image of the block if it has a usable one (scan_feed.c).
 */
static bool
ra_feed_take(RaState *ra, BlockNumber blk)
{
	Page		page = dio_feed_take(ra->feed, blk);

	if (page == NULL)
		return false;
	ra->c.direct++;
	if (BufferIsValid(ra->cur_buf))
		ReleaseBuffer(ra->cur_buf);
	ra->cur_buf = InvalidBuffer;
	ra->have_run = true;
	ra->borrowed = true;
	ra->dpage = page;
	ra->dblk = blk;
	return true;
}

/*
 * The visible tuple of 'tid' on the held direct image, into ra->tup: what
 * heap_hot_search_buffer finds on an all-visible page, where every normal
 * tuple is visible, so the first one the chain reaches is it: the TID's own
 * tuple, or the one its redirect points to.  A heap-only tuple reached
 * without a redirect is not one an index entry points to (its slot was
 * reused): nothing.
 */
static bool
ra_direct_fetch(RaState *ra, ItemPointer tid)
{
	Page		page = ra->dpage;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	bool		redirected = false;
	ItemId		lp;
	HeapTupleHeader htup;

	if (off < FirstOffsetNumber || off > maxoff)
		return false;
	lp = PageGetItemId(page, off);
	if (ItemIdIsRedirected(lp))
	{
		off = ItemIdGetRedirect(lp);
		redirected = true;
		if (off < FirstOffsetNumber || off > maxoff)
			return false;
		lp = PageGetItemId(page, off);
	}
	if (!ItemIdIsNormal(lp))
		return false;
	htup = (HeapTupleHeader) PageGetItem(page, lp);
	if (!redirected && HeapTupleHeaderIsHeapOnly(htup))
		return false;
	ra->tup.t_data = htup;
	ra->tup.t_len = ItemIdGetLength(lp);
	ItemPointerSet(&ra->tup.t_self, ra->dblk, off);
	ra->tup.t_tableOid = RelationGetRelid(ra->heap);
	return true;
}

/* ======================================================================
 * The look-ahead
 * ====================================================================== */

/*
 * Self-read mode: read the producer (the index) further ahead than the
 * look-ahead, so that ra_advise can see which blocks near the one it
 * advises the scan will want later and have the kernel read them with it, in
 * one request, as a bitmap heap scan's read stream combines neighbouring
 * blocks.  At most
 * RA_DEEP_MULT TIDs ahead per TID looked at so far, so the producer is read
 * ahead of demand by a bounded factor (a LIMIT stops it early), and at most
 * ra->deep_max (hash_mem).  The heap blocks still go to the kernel only as
 * the look-ahead reaches them (or a neighbour of theirs).
 *
 * Only while the scan looks ahead (it has had to read), has advised blocks
 * it has not reached yet and finds few blocks in the OS page cache: a range
 * the OS page cache holds gains nothing from it.  Not while the scan may
 * read blocks directly (pg_dio.index_direct_read): those would be advised as
 * neighbours instead.
 */
static void
ra_deep_fill(RaState *ra)
{
	uint64		looked;
	uint64		want;

	if (ra->self_dist <= 1 || ra->self_ios == 0 || ra->done ||
		ra->os_dense || ra->direct || !ra->combine)
		return;
	if (ra->ahead == NULL)
		ra->ahead = raahead_create(GetMemoryChunkContext(ra->q), 1024, NULL);
	looked = ra->c.tids - (ra->tail - ra->examined);
	want = Min(looked * RA_DEEP_MULT, ra->deep_max);
	while (ra->tail - ra->examined < want && ra->tail - ra->head < RA_MAX_QUEUED)
	{
		RaEntry    *e;

		CHECK_FOR_INTERRUPTS();
		/* the producer's copies (index-only data) count against hash_mem too */
		if (ra->copy_bytes > ra->deep_copy_max)
			break;
		if ((e = ra->fetch(ra->arg)) == NULL)
			break;
		/* one more queued TID wants its block (ra_ahead_forget: one fewer) */
		if (e->flags & RA_NEED_HEAP)
		{
			bool		found;
			RaAhead    *a = raahead_insert(ra->ahead,
										   ItemPointerGetBlockNumber(&e->tid), &found);

			if (!found)
			{
				a->count = 0;
				a->early = false;
			}
			a->count++;
			e->flags |= RA_COUNTED;
		}
	}
}

/*
 * The look-ahead passes a TID counted in ra->ahead: one fewer wants its
 * block.  True if the block was advised already with a neighbour's read.
 */
static bool
ra_ahead_forget(RaState *ra, BlockNumber blk)
{
	RaAhead    *a = raahead_lookup(ra->ahead, blk);
	bool		early;

	if (unlikely(a == NULL || a->count == 0))
		elog(ERROR, "index prefetch lost count of heap block %u", blk);
	early = a->early;
	if (--a->count == 0)
		raahead_delete_item(ra->ahead, a);
	return early;
}

/* Is 'blk' wanted by a TID queued beyond the look-ahead and not advised yet? */
static bool
ra_ahead_take(RaState *ra, BlockNumber blk)
{
	RaAhead    *a = raahead_lookup(ra->ahead, blk);

	if (a == NULL || a->early ||
		dio_block_resident(ra->heap, blk))
		return false;
	a->early = true;
	return true;
}

/*
 * Advise the kernel to read heap block 'blk' (self-read mode) unless it is
 * in shared buffers; false if it is.  With TIDs queued beyond the look-ahead
 * (ra_deep_fill), the blocks right before and after it that they want and
 * that are not in shared buffers are advised with it, up to io_combine_limit
 * blocks in one posix_fadvise: one larger request to the device instead of
 * several (fio, this VM, random reads at depth 16: 8 kB 58k IOPS, 16 kB
 * 52k).  Those blocks are read only because the scan will read them anyway;
 * when the look-ahead reaches them they are not advised again (RA_EARLY).
 */
static bool
ra_advise(RaState *ra, BlockNumber blk)
{
	Relation	heap = ra->heap;
	BlockNumber lo = blk;
	BlockNumber hi = blk;
	int			limit = Max(io_combine_limit, 1);
	RaAhead    *a;

	if (ra->ahead == NULL || (io_direct_flags & IO_DIRECT_DATA))
	{
		PrefetchBufferResult pr = PrefetchBuffer(heap, MAIN_FORKNUM, blk);

		if (BufferIsValid(pr.recent_buffer))
			return false;
		if (pr.initiated_io)
			ra->c.advised++;
		return true;
	}
	if (dio_block_resident(heap, blk))
		return false;
	while (hi - lo + 1 < (BlockNumber) limit && hi + 1 < MaxBlockNumber &&
		   ra_ahead_take(ra, hi + 1))
		hi++;
	while (hi - lo + 1 < (BlockNumber) limit && lo > 0 &&
		   ra_ahead_take(ra, lo - 1))
		lo--;
	if ((a = raahead_lookup(ra->ahead, blk)) != NULL)
		a->early = true;
	(void) smgrprefetch(RelationGetSmgr(heap), MAIN_FORKNUM, lo, hi - lo + 1);
	ra->c.advised += hi - lo + 1;
	ra->c.combined += hi - lo;
	return true;
}

/*
 * Self-read mode: no block goes to a read stream.  Once the scan looks ahead
 * (it had to read), each new block is advised unless the OS page cache has
 * it, and the consumer reads it itself when it gets there, as core's read
 * stream does with io_method=sync: the kernel reads ahead, and no I/O worker
 * round trip is paid per block.  As a read stream counts I/Os against the
 * I/O concurrency and blocks against its capacity, only a block that needs a
 * read (advised, or read directly) counts against the look-ahead wanted.
 * True when the look-ahead is full.
 */
static bool
ra_self_block(RaState *ra, RaEntry *e, BlockNumber blk, bool early)
{
	e->flags |= RA_GROUP_START | RA_SYNC;
	ra->last_blk = blk;
	ra->self_ahead++;
	if (ra->self_dist == 1)
		return true;
	if (early)
		e->flags |= RA_EARLY;	/* on its way with a neighbour */
	else if (ra_block_os_cached(ra, blk))
		e->flags |= RA_OS_CACHED;
	else if (ra_direct_block(ra, blk))
	{
		e->flags |= RA_DIRECT;
		ra->self_ios++;
	}
	else if (ra_advise(ra, blk))
	{
		/* posix_fadvise(WILLNEED), unless the block is in shared buffers */
		e->flags |= RA_ADVISED;
		ra->self_ios++;
	}
	return ra->self_ios >= ra->self_dist || ra->self_ahead >= (int) ra->capacity;
}

/*
 * The read stream's callback: queue TIDs until one needs a heap block other
 * than the last one handed out, and return that block.  Ends the stream at
 * the end of the index, at the cap on TIDs needing no block (index-only), at
 * the hard cap, and after every TID without MVCC (no read-ahead).
 */
static BlockNumber
ra_look_ahead(RaState *ra)
{
	BlockNumber result = InvalidBlockNumber;
	int			run = 0;

	if (ra->selfread)
		ra_deep_fill(ra);
	for (;;)
	{
		RaEntry    *e;
		BlockNumber blk;
		bool		early = false;

		if (ra->examined < ra->tail)
			e = ra_entry(ra, ra->examined++);	/* queued by the consumer */
		else
		{
			if (ra->done || run >= ra->run_cap ||
				ra->tail - ra->head >= RA_MAX_QUEUED ||
				(!ra->prefetch && ra->tail > ra->head))
				break;
			e = ra->fetch(ra->arg);
			if (e == NULL)
				break;
			ra->examined++;
		}
		if (!(e->flags & RA_NEED_HEAP))
		{
			run++;
			continue;
		}
		blk = ItemPointerGetBlockNumber(&e->tid);
		if (e->flags & RA_COUNTED)
		{
			e->flags &= ~RA_COUNTED;
			early = ra_ahead_forget(ra, blk);
		}
		if (blk == ra->last_blk)
			continue;			/* same block as the group before it */

		if (ra->selfread)
		{
			if (ra_self_block(ra, e, blk, early))
				break;
			continue;
		}

		/*
		 * Once the stream looks ahead (it had to wait for I/O), a block that
		 * is in the OS page cache is read by the consumer itself, as core's
		 * index scan reads it: a round trip to an I/O worker would cost more
		 * than the copy from the page cache.
		 */
		if (ra->groups_ahead > 1 && ra_block_os_cached(ra, blk))
		{
			e->flags |= RA_GROUP_START | RA_SYNC | RA_OS_CACHED;
			ra->last_blk = blk;
			run++;
			continue;
		}
		e->flags |= RA_GROUP_START;
		ra->last_blk = blk;
		ra->groups_ahead++;
		/*
		 * With io_method=worker each read is a round trip to an I/O worker;
		 * telling the kernel right away (posix_fadvise through core's
		 * PrefetchBuffer, which skips blocks in shared buffers) lets it read
		 * while the workers are busy.  Only once the stream looks ahead,
		 * which it does only after it had to wait for I/O.
		 */
		if (ra->advice && ra->groups_ahead > 1 &&
			PrefetchBuffer(ra->heap, MAIN_FORKNUM, blk).initiated_io)
			ra->c.advised++;
		result = blk;
		break;
	}
	/* direct reads go to the kernel now, not when the consumer gets there */
	if (ra->dstream != NULL)
		dio_submit_pending();
	return result;
}

static BlockNumber
ra_stream_next_block(ReadStream *stream, void *private, void *per_buffer_data)
{
	RaState    *ra = (RaState *) private;
	BlockNumber result;
	uint64		reads0 = ra_blocks_read_now();
	instr_time	t0;

	if (ra->timing)
		INSTR_TIME_SET_CURRENT(t0);

	result = ra_look_ahead(ra);
	if (result == InvalidBlockNumber)
	{
		ra->stream_ended = true;
		ra->last_blk = InvalidBlockNumber;
	}

	ra->cb_reads += ra_blocks_read_now() - reads0;
	if (ra->timing)
	{
		instr_time	t1;

		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		ra->cb_us += INSTR_TIME_GET_MICROSEC(t1);
	}
	return result;
}

/* A wait for a block of us microseconds counts when longer than RA_WAIT_US. */
static inline void
ra_count_wait(RaState *ra, int64 us)
{
	if (us > RA_WAIT_US)
	{
		ra->c.waits++;
		ra->c.wait_us += us;
	}
}

/*
 * read_stream_next_buffer() with the accounting: blocks it read (minus the
 * index and VM blocks our callback read meanwhile) and, with timing, how
 * long it waited.
 */
static Buffer
ra_stream_buffer(RaState *ra)
{
	uint64		reads0 = ra_blocks_read_now();
	uint64		cb_reads0 = ra->cb_reads;
	uint64		cb_us0 = ra->cb_us;
	instr_time	t0;
	Buffer		buf;

	if (ra->timing)
		INSTR_TIME_SET_CURRENT(t0);
	buf = read_stream_next_buffer(ra->stream, NULL);
	if (ra->timing)
	{
		instr_time	t1;

		INSTR_TIME_SET_CURRENT(t1);
		INSTR_TIME_SUBTRACT(t1, t0);
		ra_count_wait(ra, (int64) INSTR_TIME_GET_MICROSEC(t1) - (int64) (ra->cb_us - cb_us0));
	}
	ra->c.blocks_read += (ra_blocks_read_now() - reads0) - (ra->cb_reads - cb_reads0);
	return buf;
}

/* ======================================================================
 * The consumer
 * ====================================================================== */

static void ra_read_self(RaState *ra, RaEntry *e, BlockNumber blk, bool top_up);

/*
 * Self-read mode: top the look-ahead up after every block that leaves room
 * for another I/O, so that it stays at the I/O concurrency.  Not while the
 * look-ahead is one: then the next TID is taken when it is wanted.
 */
void
ra_top_up(RaState *ra)
{
	if (ra->self_dist > 1 && ra->self_ios < ra->self_dist &&
		(!ra->done || ra->examined < ra->tail))
		(void) ra_look_ahead(ra);
}

/*
 * The queue was empty and TIDs were queued (or are wanted): have them looked
 * at, by our look-ahead in self-read mode, else by the stream's callback as
 * the stream is asked for its next buffer (which belongs to the first group
 * start among them).
 */
void
ra_feed(RaState *ra)
{
	Buffer		buf;

	if (ra->selfread)
	{
		(void) ra_look_ahead(ra);
		return;
	}
	if (ra->stream_ended)
	{
		read_stream_reset(ra->stream);
		ra->stream_ended = false;
		ra->run_cap = Min(ra->run_cap * 2, RA_MAX_RUN);
		ra->c.restarts++;
	}
	buf = ra_stream_buffer(ra);
	if (BufferIsValid(buf))
		ra->pending_buf = buf;
}

/*
 * The consumer arrived at the heap page of a group start (ra->cur_buf):
 * prune it opportunistically, as core's index fetch does on each new page,
 * so that an update-heavy table gets the same HOT cleanup from our scans as
 * from core's.  The prune needs a cleanup lock: while the read stream still
 * pins the page for a later group it is skipped, as core's is whenever
 * another backend pins the page.
 */
static inline void
ra_arrive(RaState *ra)
{
	dio_heap_page_prune_opt(ra->heap, ra->cur_buf, &ra->vmbuf,
							ra->read_only);
}

/*
 * Self-read mode while not looking ahead: the TID the producer just read
 * (which needs its heap block) becomes the consumer's next entry, ra->cur,
 * with no queue entry and the producer's 'flags', and its block is read
 * unless it is the current one.  With !top_up, a look-ahead the read calls
 * for waits for the next ra_top_up (topup_pending): it would read the
 * producer on, past data the consumer is about to use.
 */
RaEntry *
ra_take_now(RaState *ra, ItemPointer tid, uint16 flags, bool top_up)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);

	ra->cur.tid = *tid;
	ra->cur.copy = NULL;
	ra->cur.flags = RA_NEED_HEAP | flags;
	if (blk != ra->last_blk || !BufferIsValid(ra->cur_buf))
	{
		ra->cur.flags |= RA_GROUP_START | RA_SYNC;
		ra->last_blk = blk;
		ra->self_ahead++;
		ra_read_self(ra, &ra->cur, blk, top_up);
	}
	return &ra->cur;
}

/*
 * The next queued TID for the consumer, with ra->cur_buf holding its block
 * if it needs one; NULL at the end.  When nothing is queued, the stream is
 * asked for its next buffer, which makes the callback queue more TIDs (the
 * buffer belongs to the first group start among them).  In self-read mode
 * TIDs may be queued beyond what the look-ahead has looked at
 * (ra_deep_fill): the consumer takes none of those before the look-ahead has
 * marked it.
 */
RaEntry *
ra_next_entry(RaState *ra)
{
	while (ra->selfread && ra->head == ra->examined && ra->head < ra->tail)
		ra_feed(ra);
	while (ra->head == ra->tail)
	{
		if (ra->done)
			return NULL;
		/* nothing queued, so every block handed out has been consumed */
		Assert(ra->groups_ahead == 0 && !BufferIsValid(ra->pending_buf));

		/*
		 * Self-read mode while not looking ahead (no block needed a read
		 * lately): the producer's next TID straight, with no queue entry, and
		 * its block unless it is the current one, as core's index scan does
		 * (RaSetup.take).  The first block that needs a read starts the
		 * look-ahead.
		 */
		if (ra->selfread && ra->self_dist == 1 && ra->take != NULL)
			return ra->take(ra->arg);

		ra_feed(ra);
	}

	{
		/*
		 * Copy the entry out: taking the next buffer runs the callback, which
		 * may grow (move) the ring.
		 */
		RaEntry    *e = &ra->cur;

		*e = *ra_entry(ra, ra->head++);
		if (e->flags & RA_GROUP_START)
		{
			BlockNumber blk = ItemPointerGetBlockNumber(&e->tid);

			if (e->flags & RA_SYNC)
			{
				ra_read_self(ra, e, blk, true);
				return e;
			}
			if (BufferIsValid(ra->cur_buf))
				ReleaseBuffer(ra->cur_buf);
			ra->c.blocks++;
			ra->c.dist_sum += ra->groups_ahead;
			if ((uint64) ra->groups_ahead > ra->c.dist_max)
				ra->c.dist_max = ra->groups_ahead;
			if (BufferIsValid(ra->pending_buf))
			{
				ra->cur_buf = ra->pending_buf;
				ra->pending_buf = InvalidBuffer;
			}
			else
				ra->cur_buf = ra_stream_buffer(ra);
			ra->groups_ahead--;
			if (!BufferIsValid(ra->cur_buf) || BufferGetBlockNumber(ra->cur_buf) != blk)
				elog(ERROR, "index prefetch stream out of step at block %u", blk);
			ra_arrive(ra);
		}
		return e;
	}
}

/*
 * Does the consumer walk the heap forward through the OS page cache: is
 * 'blk' the RA_FORWARD_RUN-th block in a row right after the one read
 * before, with no direct reads?  The kernel reads such a walk ahead for the
 * consumer's own reads, as it does for core's index scan over an index in
 * the heap's order, and advice ahead of it, block by block, costs more than
 * it gains (TPC-H Q18's scans of lineitem_pkey).
 */
static bool
ra_forward_step(RaState *ra, BlockNumber blk)
{
	if (ra->direct)
		return false;
	if (BlockNumberIsValid(ra->fwd_last) && blk == ra->fwd_last + 1)
		ra->fwd_run = Min(ra->fwd_run + 1, RA_FORWARD_RUN);
	else if (blk != ra->fwd_last)
		ra->fwd_run = 0;
	ra->fwd_last = blk;
	return ra->fwd_run >= RA_FORWARD_RUN;
}

/*
 * The consumer reads a group start's block itself (RA_SYNC), in place of the
 * previous group's buffer: it is in the OS page cache, or self-read mode
 * advised it (or it is the first one).  In
 * self-read mode the look-ahead then doubles if the block had to be read,
 * shrinks by one if it was in shared buffers (as a read stream's distance
 * does) or the walk goes forward (ra_forward_step), and is topped up.
 */
static void
ra_read_self(RaState *ra, RaEntry *e, BlockNumber blk, bool top_up)
{
	uint64		reads0 = ra_blocks_read_now();
	uint64		reads;
	instr_time	t0;

	if (ra->timing)
		INSTR_TIME_SET_CURRENT(t0);
	if (ra->have_run)
		ra_direct_release(ra);
	if ((e->flags & RA_DIRECT) && ra_direct_take(ra, blk))
		reads = 1;
	else if (ra->feed != NULL && !(e->flags & RA_OS_CACHED) && ra_feed_take(ra, blk))
		reads = 0;				/* read ahead by the feeder: no wait of ours */
	else
	{
		ra->cur_buf = ReleaseAndReadBuffer(ra->cur_buf, ra->heap, blk);
		reads = ra_blocks_read_now() - reads0;
		ra_arrive(ra);
	}
	ra->c.blocks_read += reads;
	if (e->flags & RA_OS_CACHED)
		ra->c.sync_blocks++;
	else
	{
		ra->c.blocks++;
		if (ra->timing && reads > 0)
		{
			instr_time	t1;

			INSTR_TIME_SET_CURRENT(t1);
			INSTR_TIME_SUBTRACT(t1, t0);
			ra_count_wait(ra, (int64) INSTR_TIME_GET_MICROSEC(t1));
		}
	}
	if (!ra->selfread)
		return;

	if (!(e->flags & RA_OS_CACHED))
	{
		ra->c.dist_sum += ra->self_ahead;
		if ((uint64) ra->self_ahead > ra->c.dist_max)
			ra->c.dist_max = ra->self_ahead;
	}
	if (reads > 0)
		ra->c.io_inprog += Max(ra->self_ios, 1);
	ra->self_ahead--;
	if (e->flags & (RA_ADVISED | RA_DIRECT))
		ra->self_ios--;
	if (!ra_forward_step(ra, blk) && reads > 0)
		ra->self_dist = Min(ra->self_dist * 2, ra->self_max);
	else if (ra->self_dist > 1)
		ra->self_dist--;
	if (top_up)
		ra_top_up(ra);
	else
		ra->topup_pending = true;
}

/*
 * Forget everything queued (rescan): the stream is reset, direct reads are
 * reaped and the buffers released.  The producer frees its copies itself.
 */
void
ra_reset(RaState *ra)
{
	if (ra->stream)
		read_stream_reset(ra->stream);
	ExecClearTuple(ra->slot);
	if (ra->borrowed)
		ra_direct_release(ra);
	/* direct reads of forgotten entries: reaped (and the held one given back) */
	if (ra->dstream != NULL)
	{
		dio_stream_end(ra->dstream);
		ra->dstream = NULL;
		ra->have_run = false;
	}
	if (BufferIsValid(ra->cur_buf))
		ReleaseBuffer(ra->cur_buf);
	if (BufferIsValid(ra->pending_buf))
		ReleaseBuffer(ra->pending_buf);
	ra->cur_buf = InvalidBuffer;
	ra->pending_buf = InvalidBuffer;
	ra->copy_bytes = 0;
	ra->cur.copy = NULL;
	ra->head = ra->examined = ra->tail = 0;
	ra->run_cap = RA_MIN_RUN;
	ra->done = false;
	ra->stream_ended = false;
	ra->last_blk = InvalidBlockNumber;
	ra->groups_ahead = 0;
	ra->self_ahead = 0;
	ra->self_ios = 0;
	ra->self_dist = 1;
	ra->fwd_last = InvalidBlockNumber;
	ra->fwd_run = 0;
	ra->topup_pending = false;
	if (ra->ahead != NULL)
		raahead_reset(ra->ahead);
}

/*
 * The most blocks a read stream begun now on rel may hold pinned ahead of its
 * consumer: PG 19's EXPLAIN calls it the stream's capacity.  PG 18 keeps it
 * in the stream's private state, so it is worked out here from the same
 * inputs: the I/O concurrency of the relation's tablespace, io_combine_limit
 * (the stream keeps one combined read's worth more than max_ios reads), the
 * stream's int16 queue and the buffer manager's pin limit for this backend.
 */
uint32
ra_stream_capacity(Relation rel)
{
	int			max_ios;
	uint32		cap;

	if (IsCatalogRelation(rel))
		max_ios = effective_io_concurrency;
	else
		max_ios = get_tablespace_io_concurrency(rel->rd_rel->reltablespace);
	max_ios = Min(max_ios, PG_INT16_MAX);

	cap = (uint32) (max_ios + 1) * io_combine_limit;
	cap = Min(cap, (uint32) (PG_INT16_MAX - io_combine_limit));
	cap = Min(cap, RelationUsesLocalBuffers(rel) ? GetLocalPinLimit() : GetPinLimit());
	return Max(cap, 1);
}

/*
 * The tuple of 'tid' visible to 'snapshot', from its block (the held direct
 * image or cur_buf, where ra_next_entry left the consumer), into ra->tup;
 * 'tid' becomes the tuple's own TID, which may be further down its HOT
 * chain.  *all_dead: the whole chain is dead to everyone (buffers only).
 */
bool
ra_fetch_tuple(RaState *ra, ItemPointer tid, Snapshot snapshot, bool *all_dead)
{
	bool		found;

	if (ra->have_run)
	{
		/* a direct image (plain scans only) */
		if (unlikely(ra->dblk != ItemPointerGetBlockNumber(tid)))
			elog(ERROR, "index prefetch consumer out of step at block %u",
				 ItemPointerGetBlockNumber(tid));
		found = ra_direct_fetch(ra, tid);
	}
	else
	{
		/* heap_hot_search_buffer looks at the offset only: check the block */
		if (unlikely(!BufferIsValid(ra->cur_buf) ||
					 BufferGetBlockNumber(ra->cur_buf) != ItemPointerGetBlockNumber(tid)))
			elog(ERROR, "index prefetch consumer out of step at block %u",
				 ItemPointerGetBlockNumber(tid));
		LockBuffer(ra->cur_buf, BUFFER_LOCK_SHARE);
		found = heap_hot_search_buffer(tid, ra->heap, ra->cur_buf, snapshot,
									   &ra->tup, all_dead, true);
		LockBuffer(ra->cur_buf, BUFFER_LOCK_UNLOCK);
	}
	return found;
}

/* At the end of the node: the stream, the probe's fds, the queue, all pins. */
void
ra_end(RaState *ra)
{
	if (ra->stream)
	{
		read_stream_end(ra->stream);
		ra->stream = NULL;
	}
	if (ra->oscheck)
	{
		dio_stream_end(ra->oscheck);
		ra->oscheck = NULL;
	}
	ra_reset(ra);
	if (BufferIsValid(ra->vmbuf))
		ReleaseBuffer(ra->vmbuf);
	ra->vmbuf = InvalidBuffer;
}
