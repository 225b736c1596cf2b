/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  The differences between the PostgreSQL versions pg_dio builds against
 *	  (18 and 19), in one place: the code elsewhere uses these names only.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_COMPAT_H
#define PG_DIO_COMPAT_H

#include "access/amapi.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "optimizer/planner.h"
#include "storage/buf_internals.h"

/* planner_hook: 19 passes the EXPLAIN state being planned for, if any */
#if PG_VERSION_NUM >= 190000
#define DIO_PLANNER_PARAMS	Query *parse, const char *query_string, \
	int cursorOptions, ParamListInfo boundParams, ExplainState *es
#define DIO_PLANNER_ARGS	parse, query_string, cursorOptions, boundParams, es
#else
#define DIO_PLANNER_PARAMS	Query *parse, const char *query_string, \
	int cursorOptions, ParamListInfo boundParams
#define DIO_PLANNER_ARGS	parse, query_string, cursorOptions, boundParams
#endif

/*
 * Data checksums: 19 can turn them on and off while the server runs, and
 * verifies them only while they are fully on; asked right before verifying.
 */
#if PG_VERSION_NUM >= 190000
#define dio_checksums_verify()	DataChecksumsNeedVerify()
#else
#define dio_checksums_verify()	DataChecksumsEnabled()
#endif

/*
 * Scans: 19 tells the table AM whether the query modifies the relation
 * (SO_HINT_REL_READ_ONLY), and its page pruning may set the visibility map,
 * with the scan's pinned VM buffer.
 */
#if PG_VERSION_NUM >= 190000
#define dio_scan_read_only(ss)	ScanRelIsReadOnly(ss)
#define dio_index_beginscan(heap, index, snapshot, instr, nkeys, read_only) \
	index_beginscan(heap, index, snapshot, instr, nkeys, 0, \
					(read_only) ? SO_HINT_REL_READ_ONLY : SO_NONE)
#define dio_heap_page_prune_opt(rel, buf, vmbuf, read_only) \
	heap_page_prune_opt(rel, buf, vmbuf, read_only)
#define dio_parallelscan_startblock_init(rel, work, pscan) \
	table_block_parallelscan_startblock_init(rel, work, pscan, \
											 InvalidBlockNumber, InvalidBlockNumber)
#else
#define dio_scan_read_only(ss)	((void) (ss), false)
#define dio_index_beginscan(heap, index, snapshot, instr, nkeys, read_only) \
	index_beginscan(heap, index, snapshot, instr, nkeys, 0)
#define dio_heap_page_prune_opt(rel, buf, vmbuf, read_only) \
	heap_page_prune_opt(rel, buf)
#define dio_parallelscan_startblock_init(rel, work, pscan) \
	table_block_parallelscan_startblock_init(rel, work, pscan)
#endif

/* A plan node's instrumentation: 19 splits it from the generic one. */
#if PG_VERSION_NUM >= 190000
typedef NodeInstrumentation DioNodeInstr;
#define DIO_INSTR_NEED_TIMER(i)	((i)->instr.need_timer)
#else
typedef Instrumentation DioNodeInstr;
#define DIO_INSTR_NEED_TIMER(i)	((i)->need_timer)
#endif

/* Buffer header state: 64 bits in 19, and UnlockBufHdr no longer takes it. */
#if PG_VERSION_NUM >= 190000
typedef uint64 DioBufState;
#define dio_buf_state(desc)		pg_atomic_read_u64(&(desc)->state)
#define dio_unlock_buf_hdr(desc, state)	UnlockBufHdr(desc)
#else
typedef uint32 DioBufState;
#define dio_buf_state(desc)		pg_atomic_read_u32(&(desc)->state)
#define dio_unlock_buf_hdr(desc, state)	UnlockBufHdr(desc, state)
#endif

/* An index AM's routine: a copy to free in 18, a cached one in 19. */
#if PG_VERSION_NUM >= 190000
#define dio_free_amroutine(am)	((void) (am))
#else
#define dio_free_amroutine(am)	pfree((void *) (am))
#endif

/*
 * EXPLAIN (IO), new in 19: a scan's prefetch and I/O figures, and read
 * streams that collect them.  18 has neither; there the struct is pg_dio's
 * own, with the same fields, and is never printed.
 */
#include "commands/explain_state.h"
#if PG_VERSION_NUM >= 190000
#include "executor/instrument_node.h"
#include "storage/read_stream.h"
typedef IOStats DioIOStats;
#define dio_read_stream_enable_stats(stream, stats) read_stream_enable_stats(stream, stats)
#define dio_explain_io(es)		((es)->io)
#else
typedef struct DioIOStats
{
	uint64		prefetch_count;
	uint64		distance_sum;
	int16		distance_max;
	int16		distance_capacity;
	uint64		wait_count;
	uint64		io_count;
	uint64		io_nblocks;
	uint64		io_in_progress;
} DioIOStats;
#define dio_read_stream_enable_stats(stream, stats) ((void) (stream), (void) (stats))
#define dio_explain_io(es)		((void) (es), false)
#endif

/* Drop a statistics entry: 19 adds missing_ok to pgstat_drop_entry. */
#if PG_VERSION_NUM >= 190000
#define dio_pgstat_drop_entry(kind, dboid, objid) \
	pgstat_drop_entry(kind, dboid, objid, true)
#else
#define dio_pgstat_drop_entry(kind, dboid, objid) \
	pgstat_drop_entry_ext(kind, dboid, objid, true)
#endif

/* (diag_explain.c) */
extern void dio_explain_io_stats(ExplainState *es, const DioIOStats *s);

#endif							/* PG_DIO_COMPAT_H */
