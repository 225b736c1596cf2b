/*-------------------------------------------------------------------------
 *
 * engine.h
 *	  pg_dio's read engine (io_engine.c): O_DIRECT reads of relation segment
 *	  files through a per-process io_uring ring into private aligned memory,
 *	  its settings and test-only faults, and the OS page-cache probe.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/engine.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_ENGINE_H
#define PG_DIO_ENGINE_H

#include "pgstat.h"
#include "storage/block.h"
#include "storage/relfilelocator.h"
#include "utils/rel.h"

#include "diag.h"

#define DIO_MAX_QUEUE_DEPTH		128
#define DIO_MIN_IO_SIZE_KB		(BLCKSZ / 1024)
#define DIO_MAX_IO_SIZE_KB		1024

/* pg_dio.inject_fault: test-only ways to make reads fail */
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

extern void dio_engine_define_settings(void);

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
extern bool dio_stream_head_done(DioStream *s);
extern void dio_stream_release(DioStream *s, DioRun *run);
extern void dio_stream_wait_stats(DioStream *s, uint64 *waits, uint64 *wait_us);
extern void dio_stream_inflight_stats(DioStream *s, uint64 *issued,
									  uint64 *inflight_sum);
extern void dio_stream_end(DioStream *s);
extern void dio_segment_path(RelFileLocator locator, ForkNumber fork,
							 BlockNumber segno, char *buf);

/* the OS page cache: which parts of a relation's files it holds */
extern bool dio_cachestat_available(void);
extern int64 dio_os_cached_bytes(int fd, off_t off, size_t len);
extern DioStream *dio_stream_begin_oscheck(Relation rel);
extern int	dio_stream_os_cached(DioStream *s, BlockNumber first, int nblocks);

#endif							/* PG_DIO_ENGINE_H */
