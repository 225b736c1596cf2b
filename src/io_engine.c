/*-------------------------------------------------------------------------
 *
 * io_engine.c
 *	  pg_dio's read engine: O_DIRECT reads of relation segment files through
 *	  a per-process io_uring ring into private, aligned memory.
 *
 * A caller opens a stream on one relation fork, submits runs of consecutive
 * blocks (never across a segment boundary, at most io_size bytes) and takes
 * the completed runs back in submission order.  Blocks the engine could not
 * read -- io_uring or O_DIRECT unavailable, EIO, end of file, no fd -- are
 * reported with a reason; the caller reads those through the buffer manager.
 * The engine never raises an ERROR for an I/O fault.
 *
 * Lifetime rules:
 *	- The ring, the streams and every buffer the kernel may write into belong
 *	  to the engine (TopMemoryContext and anonymous mmap), never to executor
 *	  memory, which is freed before resource owners are released on abort.
 *	- A buffer whose read is in flight is never freed or reused until its
 *	  completion has been reaped.  Streams are registered with the current
 *	  resource owner; on abort its release callback cancels and reaps the
 *	  stream's reads (without raising errors or checking interrupts) before
 *	  the buffers and fds are given back.  A before_shmem_exit callback does
 *	  the same for every stream at process exit, then closes the ring.
 *	- If the ring itself fails in a way that leaves the state of reads
 *	  unknown, the engine marks itself broken and leaks the buffers instead
 *	  of risking the kernel writing into reused memory.
 *	- Segment files are opened O_RDONLY | O_DIRECT by the engine itself,
 *	  counted with AcquireExternalFD(), and closed only when no read on them
 *	  is pending.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/io_engine.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/fd.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/ipc.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "engine.h"

#if PG_O_DIRECT == 0
#error "pg_dio needs O_DIRECT"
#endif

#define DIO_MAX_STREAMS		64
#define DIO_MAX_SEGFDS		16
#define DIO_RING_ENTRIES	512
#define DIO_WAIT_TIMEOUT_MS 10
#define DIO_MAX_STALLS		4
/* how long an abort or exit waits for cancelled reads to complete */
#define DIO_DRAIN_TIMEOUT_MS 5000
/* io_uring_submit() retried on EAGAIN/EBUSY for at most this long */
#define DIO_SUBMIT_RETRY_MS 1000

/*
 * Reads in flight per backend, over all its streams.  Each read has at most
 * four completions pending (a linked delay timeout, the read, two cancels),
 * so the completion queue (twice the ring's entries) never overflows; and
 * the in-flight registry has an entry for each.
 */
#define DIO_MAX_BACKEND_READS	DIO_MAX_INFLIGHT
StaticAssertDecl(4 * DIO_MAX_BACKEND_READS <= 2 * DIO_RING_ENTRIES,
				 "the completion queue must hold every pending completion");

/* user_data: kind << 32 | stream << 16 | request */
#define DIO_UD_READ		0
#define DIO_UD_TIMEOUT	1
#define DIO_UD_CANCEL	2
#define DIO_UD(kind, stream, req) \
	(((uint64) (kind) << 32) | ((uint64) (stream) << 16) | (uint64) (req))

typedef enum DioReqState
{
	DIO_REQ_FREE,
	DIO_REQ_INFLIGHT,			/* owned by the kernel */
	DIO_REQ_DONE,				/* completed, not yet handed out */
	DIO_REQ_HELD,				/* handed to the caller */
} DioReqState;

typedef struct DioReq
{
	DioReqState state;
	BlockNumber first;
	int			nblocks;
	int			segfd;			/* index into the stream's fd cache */
	off_t		offset;			/* file offset of block 'first' */
	uint32		len;			/* bytes wanted */
	uint32		done;			/* bytes read so far (aligned) */
	int			stalls;			/* short reads without progress */
	bool		short_injected;
	bool		failed;
	bool		hang;			/* submitted under the hang fault: no cancel */
	DioFallback reason;
	int			reg;			/* in-flight registry entry, or -1 */
	instr_time	started;
	struct __kernel_timespec delay;
	char	   *buf;
	int			buf_index;		/* registered buffer index, or -1 */
} DioReq;

typedef struct DioSegFd
{
	BlockNumber segno;
	int			fd;
	int			pending;		/* reads in flight on it */
} DioSegFd;

struct DioStream
{
	bool		in_use;
	int			index;
	uint32		generation;
	RelFileLocator locator;
	ForkNumber	fork;
	ResourceOwner owner;

	/* buffers */
	bool		primary;		/* using the registered pool */
	char	   *mem;
	size_t		mem_size;
	int			nreqs;
	uint32		req_bytes;
	DioReq		reqs[DIO_MAX_QUEUE_DEPTH];

	/* requests in submission order */
	int			fifo[DIO_MAX_QUEUE_DEPTH];
	int			fifo_head;
	int			fifo_count;
	int			nheld;			/* runs handed out, not yet given back */
	int			ninflight;

	DioSegFd	fds[DIO_MAX_SEGFDS];
	int			nfds;

	uint64		waits;			/* times the consumer waited for a read */
	uint64		wait_us;		/* ... and how long */
	uint64		issued;			/* reads that reached the ring ... */
	uint64		inflight_sum;	/* ... and the sum over them of the stream's
								 * reads in flight right after each was queued */

	bool		prepared;		/* ring and buffers set up (first read) */
	bool		unusable;		/* every read fails with unusable_reason */
	DioFallback unusable_reason;
	bool		odirect_refused;
	bool		buffered;		/* cachestat only: fds without O_DIRECT */
	IOContext	io_context;		/* pg_stat_io's context of its reads */
};

/* the ring */
static struct io_uring dio_ring;
static int	dio_ring_state = 0;	/* 0 untried, 1 ok, -1 unavailable */
static bool dio_broken = false;
static int	dio_sq_pending = 0;	/* prepared SQEs not yet submitted */
static int	dio_total_inflight = 0;	/* reads owned by the kernel */
static int	dio_hang_pipe[2] = {-1, -1};	/* the hang fault's empty pipe */

/* the registered pool */
static char *dio_pool_mem = NULL;
static size_t dio_pool_size = 0;
static int	dio_pool_nreqs = 0;
static uint32 dio_pool_req_bytes = 0;
static int	dio_pool_nregistered = 0;	/* leading buffers registered */
static TimestampTz dio_pool_register_tried = 0;
static bool dio_pool_in_use = false;

/* I/O buffer memory mapped by this process (leaked buffers included) */
static size_t dio_io_mem_mapped = 0;

static DioStream *dio_streams[DIO_MAX_STREAMS];
static uint32 dio_stream_generation = 0;
static bool dio_engine_ready = false;
static uint32 dio_wait_event = 0;
static uint32 dio_wait_event_delay = 0;
static bool dio_fallback_logged[DIO_NUM_FALLBACK];

const char *const dio_fallback_names[DIO_NUM_FALLBACK] = {
	[DIO_FB_IO_ERROR] = "io_error",
	[DIO_FB_NO_URING] = "no_uring",
	[DIO_FB_NO_ODIRECT] = "no_odirect",
	[DIO_FB_NO_FD] = "no_fd",
	[DIO_FB_VERIFY] = "verify",
	[DIO_FB_NO_MEMORY] = "no_memory",
};

/* settings */
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

static bool
dio_check_io_size(int *newval, void **extra, GucSource source)
{
	if (*newval % (BLCKSZ / 1024) != 0)
	{
		GUC_check_errdetail("\"pg_dio.io_size\" must be a multiple of the block size (%d kB).",
							BLCKSZ / 1024);
		return false;
	}
	return true;
}

/* The engine's settings, the test-only faults among them (hidden). */
void
dio_engine_define_settings(void)
{
	DefineCustomIntVariable("pg_dio.queue_depth",
							"Sets the maximum number of direct reads in flight per read stream.",
							"The processes of a parallel DirectSeqScan share them. A process maps queue_depth * io_size bytes of I/O memory on first use, rounded up to whole 2 MB huge pages.",
							&pg_dio_queue_depth,
							16, 1, DIO_MAX_QUEUE_DEPTH,
							PGC_USERSET, 0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_dio.io_size",
							"Sets the size of the largest direct read.",
							"Runs of consecutive blocks are combined into reads of up to this size.",
							&pg_dio_io_size_kb,
							1024, DIO_MIN_IO_SIZE_KB, DIO_MAX_IO_SIZE_KB,
							PGC_USERSET, GUC_UNIT_KB,
							dio_check_io_size, NULL, NULL);

	DefineCustomIntVariable("pg_dio.max_io_memory",
							"Sets the maximum I/O buffer memory of direct reads per process.",
							"A read stream that would exceed it gets fewer reads in flight, or reads through the buffer manager.",
							&pg_dio_max_io_memory_kb,
							256 * 1024, 2 * 1024, MAX_KILOBYTES,
							PGC_USERSET, GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomEnumVariable("pg_dio.inject_fault",
							 "Makes direct reads fail in the given way (for tests only).",
							 NULL,
							 &pg_dio_inject_fault,
							 DIO_FAULT_NONE, dio_fault_options,
							 PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_dio.inject_delay",
							"Sets how long each direct read is held in flight under the delay fault (for tests only).",
							NULL,
							&pg_dio_inject_delay_ms,
							200, 1, 60000,
							PGC_SUSET, GUC_UNIT_MS | GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE,
							NULL, NULL, NULL);
}

static void dio_resowner_release(Datum res);
static char *dio_resowner_print(Datum res);

static const ResourceOwnerDesc dio_resowner_desc = {
	.name = "pg_dio read stream",
	.release_phase = RESOURCE_RELEASE_BEFORE_LOCKS,
	.release_priority = RELEASE_PRIO_FIRST,
	.ReleaseResource = dio_resowner_release,
	.DebugPrint = dio_resowner_print,
};

static void dio_engine_shutdown(int code, Datum arg);

/* How a stream is remembered by its resource owner: index and generation. */
static inline Datum
dio_stream_datum(DioStream *s)
{
	return Int64GetDatum(((int64) s->generation << 16) | s->index);
}
static void dio_stream_teardown(DioStream *s);

/*
 * True only the first time in this process that blocks fall back to the
 * buffer manager for 'reason': that one is logged, the later ones counted.
 */
static bool
dio_fallback_first(DioFallback reason)
{
	if (dio_fallback_logged[reason])
		return false;
	dio_fallback_logged[reason] = true;
	return true;
}

static int
dio_errmsg_fallback(void)
{
	return errmsg("direct reads are not possible, reading through the buffer manager instead");
}

static int
dio_errhint_fallback(DioFallback reason)
{
	return errhint("Later fallbacks of this kind (%s) in this process are counted in pg_stat_aio_backends, not logged.",
				   dio_fallback_names[reason]);
}

/* LOG the first fallback for 'reason' in this process; detail is errdetail() */
#define dio_log_fallback(reason, detail) \
	do { \
		if (dio_fallback_first(reason)) \
			ereport(LOG, (dio_errmsg_fallback(), (detail), \
						  dio_errhint_fallback(reason))); \
	} while (0)

static void
dio_engine_init(void)
{
	if (dio_engine_ready)
		return;
	/* stats first: its exit callback must run after ours (LIFO) */
	dio_stats_attach();
	before_shmem_exit(dio_engine_shutdown, (Datum) 0);
	dio_wait_event = WaitEventExtensionNew("PgDioRead");

	/*
	 * Under the test-only delay fault, waits are reported as an injection
	 * point, so isolation tests see the session as blocked while its reads
	 * are held in flight.
	 */
	dio_wait_event_delay = WaitEventInjectionPointNew("pg_dio_inject_delay");
	dio_engine_ready = true;
}

/* Create the ring with the cheapest flags this kernel accepts. */
static bool
dio_ring_ensure(void)
{
	static const unsigned flag_sets[] = {
#if defined(IORING_SETUP_SINGLE_ISSUER) && defined(IORING_SETUP_DEFER_TASKRUN)
		IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
#endif
#ifdef IORING_SETUP_COOP_TASKRUN
		IORING_SETUP_COOP_TASKRUN,
#endif
		0
	};
	int			ret = -ENOSYS;

	if (dio_ring_state != 0)
		return dio_ring_state > 0;

	for (size_t i = 0; i < lengthof(flag_sets); i++)
	{
		struct io_uring_params p;

		memset(&p, 0, sizeof(p));
		p.flags = flag_sets[i];
		ret = io_uring_queue_init_params(DIO_RING_ENTRIES, &dio_ring, &p);
		if (ret == 0)
			break;
		if (ret != -EINVAL)
			break;
	}
	if (ret == 0 && dio_ring.cq.ring_entries < 4 * DIO_MAX_BACKEND_READS)
	{
		io_uring_queue_exit(&dio_ring);
		ret = -ENOMEM;
	}
	if (ret == 0)
	{
		dio_ring_state = 1;
		return true;
	}

	dio_ring_state = -1;
	errno = -ret;
	if (ret == -EPERM)
		dio_log_fallback(DIO_FB_NO_URING,
						 errdetail("Could not create an io_uring ring: %m. /proc/sys/kernel/io_uring_disabled may forbid it."));
	else
		dio_log_fallback(DIO_FB_NO_URING,
						 errdetail("Could not create an io_uring ring: %m."));
	return false;
}

/*
 * Register as many leading buffers of the pool as the kernel takes.  Pinned
 * buffers are charged to RLIMIT_MEMLOCK, which all of the server account's
 * processes share, and an exited backend's ring gives its share back only
 * some time after the exit.  So take what fits now (halving on failure) and
 * try for the rest again at a later stream start; buffers beyond the
 * registered ones are read unregistered, which costs the kernel a page walk
 * per read and is otherwise the same.
 */
static void
dio_pool_register(void)
{
	struct iovec iov[DIO_MAX_QUEUE_DEPTH];
	TimestampTz now;

	if (dio_pool_nregistered == dio_pool_nreqs)
		return;
	now = GetCurrentTimestamp();
	if (dio_pool_register_tried != 0 &&
		!TimestampDifferenceExceeds(dio_pool_register_tried, now, 1000))
		return;
	dio_pool_register_tried = now;

	if (dio_pool_nregistered > 0)
		io_uring_unregister_buffers(&dio_ring);
	dio_pool_nregistered = 0;

	for (int i = 0; i < dio_pool_nreqs; i++)
	{
		iov[i].iov_base = dio_pool_mem + (size_t) i * dio_pool_req_bytes;
		iov[i].iov_len = dio_pool_req_bytes;
	}
	for (int n = dio_pool_nreqs; n > 0; n /= 2)
	{
		if (io_uring_register_buffers(&dio_ring, iov, n) == 0)
		{
			dio_pool_nregistered = n;
			break;
		}
	}
	if (dio_pool_nregistered < dio_pool_nreqs)
		elog(DEBUG1, "registered %d of %d I/O buffers within RLIMIT_MEMLOCK, the others are read unregistered",
			 dio_pool_nregistered, dio_pool_nreqs);
}

/* The per-backend view's io_memory. */
static void
dio_io_mem_report(void)
{
	if (dio_my_slot == NULL)
		return;
	dio_stats_begin_write();
	dio_my_slot->io_memory = dio_io_mem_mapped;
	dio_stats_end_write();
}

/* Requests of req_bytes that fit in 'avail' bytes once rounded to huge pages. */
static int
dio_reqs_fitting(size_t avail, uint32 req_bytes)
{
	size_t		n = TYPEALIGN_DOWN(2 * 1024 * 1024, avail) / req_bytes;

	return (int) Min(n, (size_t) DIO_MAX_QUEUE_DEPTH);
}

/* Bytes of I/O memory this process may still map (pg_dio.max_io_memory). */
static size_t
dio_io_mem_budget(void)
{
	size_t		limit = (size_t) pg_dio_max_io_memory_kb * 1024;

	return limit > dio_io_mem_mapped ? limit - dio_io_mem_mapped : 0;
}

/* Give back a mapping of dio_map_io_mem(). */
static void
dio_unmap_io_mem(char *mem, size_t size)
{
	munmap(mem, size);
	dio_io_mem_mapped -= size;
	dio_io_mem_report();
}

/*
 * Anonymous memory for reads, aligned to and advised onto transparent huge
 * pages where the kernel has them.  A 256 kB read into 4 kB pages is a
 * scatter list of 64 segments (and a 1 MB read exceeds virtio-blk's 254 and
 * is split in two); into a huge page it is one contiguous segment.  If no
 * huge page is free the kernel maps small pages: still correct.  *size is
 * rounded up to whole huge pages (a partial one at the end would be small
 * pages, and the reads into it several times slower); dio_unmap_io_mem()
 * releases the mapping.  Counted against pg_dio.max_io_memory.
 */
static char *
dio_map_io_mem(size_t *size_inout)
{
	const size_t huge = 2 * 1024 * 1024;
	size_t		size = TYPEALIGN(huge, *size_inout);
	size_t		len = size + huge;
	char	   *raw;
	char	   *mem;
	size_t		head;

	raw = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return NULL;
	mem = (char *) TYPEALIGN(huge, raw);
	head = mem - raw;
	if (head > 0)
		munmap(raw, head);
	munmap(mem + size, len - head - size);
#ifdef MADV_HUGEPAGE
	(void) madvise(mem, size, MADV_HUGEPAGE);
#endif
	*size_inout = size;
	dio_io_mem_mapped += size;
	dio_io_mem_report();
	return mem;
}

/*
 * (Re)build the pool for the current settings.  Only called when no stream
 * uses it, so no read can target it.
 */
static bool
dio_pool_prepare(int nreqs, uint32 req_bytes)
{
	size_t		size = (size_t) nreqs * req_bytes;
	char	   *mem;

	Assert(!dio_pool_in_use);
	if (dio_pool_mem == NULL || dio_pool_nreqs != nreqs ||
		dio_pool_req_bytes != req_bytes)
	{
		if (dio_pool_mem != NULL)
		{
			if (dio_pool_nregistered > 0)
				io_uring_unregister_buffers(&dio_ring);
			dio_unmap_io_mem(dio_pool_mem, dio_pool_size);
			dio_pool_mem = NULL;
			dio_pool_nregistered = 0;
		}

		mem = dio_map_io_mem(&size);
		if (mem == NULL)
			return false;
		dio_pool_mem = mem;
		dio_pool_size = size;
		dio_pool_nreqs = nreqs;
		dio_pool_req_bytes = req_bytes;
		dio_pool_register_tried = 0;
	}
	dio_pool_register();
	return true;
}

static DioStream *
dio_stream_alloc(void)
{
	for (int i = 0; i < DIO_MAX_STREAMS; i++)
	{
		if (dio_streams[i] == NULL)
		{
			dio_streams[i] = MemoryContextAllocZero(TopMemoryContext, sizeof(DioStream));
			dio_streams[i]->index = i;
		}
		if (!dio_streams[i]->in_use)
			return dio_streams[i];
	}
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("too many concurrent direct read streams"),
			 errdetail("A process can have at most %d.", DIO_MAX_STREAMS)));
	return NULL;				/* keep compiler quiet */
}

/*
 * Count the stream's reads in pg_stat_io under 'context' (IOCONTEXT_NORMAL
 * unless set): a sequential scan's, under IOCONTEXT_BULKREAD where core's
 * scan of the same relation would read through a bulk-read ring.
 */
void
dio_stream_set_io_context(DioStream *s, IOContext context)
{
	s->io_context = context;
}

/* Can dio_stream_begin() be called without running out of streams? */
bool
dio_stream_slot_free(void)
{
	for (int i = 0; i < DIO_MAX_STREAMS; i++)
		if (dio_streams[i] == NULL || !dio_streams[i]->in_use)
			return true;
	return false;
}

/*
 * Ring and buffers for a stream, at its first read: a scan that ends up
 * reading nothing directly (a warm table) never pays for them.  Within
 * pg_dio.max_io_memory the stream gets fewer requests than it asked for, or
 * none (its reads then fall back).
 */
static void
dio_stream_prepare(DioStream *s)
{
	uint32		req_bytes = s->req_bytes;
	bool		pool = !dio_pool_in_use;
	int			fit;

	s->prepared = true;
	if (dio_broken || !dio_ring_ensure())
	{
		s->unusable = true;
		s->unusable_reason = DIO_FB_NO_URING;
		return;
	}

	/*
	 * The pool is sized for the setting, so that a shallower stream (a
	 * process of a parallel scan) does not make it be rebuilt; a rebuild
	 * gives its current memory back first.  A nested stream gets private,
	 * unregistered buffers.
	 */
	if (pool)
		fit = Min(Max(s->nreqs, pg_dio_queue_depth),
				  dio_reqs_fitting(dio_io_mem_budget() +
								   (dio_pool_mem != NULL ? dio_pool_size : 0),
								   req_bytes));
	else
		fit = Min(s->nreqs, dio_reqs_fitting(dio_io_mem_budget(), req_bytes));
	if (fit == 0)
	{
		s->unusable = true;
		s->unusable_reason = DIO_FB_NO_MEMORY;
		dio_log_fallback(DIO_FB_NO_MEMORY,
						 errdetail("\"pg_dio.max_io_memory\" (%d kB) is taken by other read streams of this process.",
								   pg_dio_max_io_memory_kb));
		return;
	}

	if (pool && dio_pool_prepare(fit, req_bytes))
	{
		s->primary = true;
		dio_pool_in_use = true;
		s->mem = dio_pool_mem;
	}
	else if (!pool)
	{
		size_t		size = (size_t) fit * req_bytes;

		s->mem = dio_map_io_mem(&size);
		s->mem_size = size;
	}
	if (s->mem == NULL)
	{
		s->unusable = true;
		s->unusable_reason = DIO_FB_IO_ERROR;
		dio_log_fallback(DIO_FB_IO_ERROR,
						 errdetail("Could not map memory for I/O buffers."));
		return;
	}

	s->nreqs = Min(s->nreqs, fit);
	for (int i = 0; i < s->nreqs; i++)
	{
		DioReq	   *r = &s->reqs[i];

		r->buf = s->mem + (size_t) i * req_bytes;
		r->buf_index = (s->primary && i < dio_pool_nregistered) ? i : -1;
	}
}

/*
 * Open a stream on a fork of a permanent or unlogged relation, with at most
 * 'depth' reads in flight (0 or more than pg_dio.queue_depth: that setting).
 * Never fails for lack of io_uring or O_DIRECT: such a stream completes every
 * read at once with the reason, and the caller falls back.
 */
DioStream *
dio_stream_begin(Relation rel, ForkNumber fork, int depth)
{
	DioStream  *s;
	int			nreqs = (depth > 0 && depth < pg_dio_queue_depth) ? depth : pg_dio_queue_depth;
	uint32		req_bytes = (uint32) pg_dio_io_size_kb * 1024;

	Assert(!RelationUsesLocalBuffers(rel));
	dio_engine_init();

	ResourceOwnerEnlarge(CurrentResourceOwner);
	s = dio_stream_alloc();

	s->generation = ++dio_stream_generation;
	s->locator = rel->rd_locator;
	s->fork = fork;
	s->nreqs = nreqs;
	s->req_bytes = req_bytes;
	s->fifo_head = s->fifo_count = 0;
	s->nheld = 0;
	s->ninflight = 0;
	s->nfds = 0;
	s->waits = 0;
	s->wait_us = 0;
	s->issued = 0;
	s->inflight_sum = 0;
	s->unusable = false;
	s->odirect_refused = false;
	s->buffered = false;
	s->io_context = IOCONTEXT_NORMAL;
	s->primary = false;
	s->mem = NULL;
	s->mem_size = 0;

	s->prepared = false;
	for (int i = 0; i < nreqs; i++)
	{
		DioReq	   *r = &s->reqs[i];

		memset(r, 0, sizeof(*r));
		r->state = DIO_REQ_FREE;
		r->reg = -1;
		r->buf_index = -1;
	}
	if (pg_dio_inject_fault == DIO_FAULT_RING_SETUP)
	{
		s->unusable = true;
		s->unusable_reason = DIO_FB_NO_URING;
		s->prepared = true;
		dio_log_fallback(DIO_FB_NO_URING,
						 errdetail("io_uring setup failed (injected fault)."));
	}

	s->in_use = true;
	s->owner = CurrentResourceOwner;
	ResourceOwnerRemember(s->owner, dio_stream_datum(s), &dio_resowner_desc);
	return s;
}

int
dio_stream_max_blocks(DioStream *s)
{
	return s->req_bytes / BLCKSZ;
}

/*
 * Blocks of the stream's reads queued ahead of its consumer: in flight, or
 * done and not yet taken (EXPLAIN (IO)'s prefetch distance).
 */
int
dio_stream_blocks_ahead(DioStream *s)
{
	int			n = 0;

	for (int i = 0; i < s->fifo_count; i++)
		n += s->reqs[s->fifo[(s->fifo_head + i) % s->nreqs]].nblocks;
	return n;
}

/*
 * Is a request free?  (Runs the caller holds occupy theirs.)  While the
 * process has DIO_MAX_BACKEND_READS in flight, only a stream with nothing
 * queued may submit (dio_stream_submit then waits for room).
 */
bool
dio_stream_can_submit(DioStream *s)
{
	return s->fifo_count + s->nheld < s->nreqs &&
		(dio_total_inflight < DIO_MAX_BACKEND_READS || s->fifo_count == 0);
}

static void
dio_flush(void)
{
	int			ret;

	if (dio_sq_pending == 0)
		return;
	/* a kernel short of memory or with completions to flush says try again */
	for (int tries = 0;; tries++)
	{
		ret = io_uring_submit(&dio_ring);
		if ((ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) ||
			tries >= DIO_SUBMIT_RETRY_MS)
			break;
		if (ret != -EINTR)
			pg_usleep(1000L);
	}
	dio_stats_begin_write();
	dio_my_slot->c.submit_calls++;
	dio_stats_end_write();
	if (ret < 0)
	{
		/* the SQEs may or may not have been consumed: we cannot know */
		dio_broken = true;
		errno = -ret;
		ereport(LOG,
				(errmsg("could not submit direct reads: %m"),
				 errdetail("Direct reads are disabled in this process.")));
	}
	dio_sq_pending = 0;
}

static struct io_uring_sqe *
dio_get_sqe(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&dio_ring);

	if (sqe == NULL)
	{
		dio_flush();
		sqe = io_uring_get_sqe(&dio_ring);
	}
	return sqe;
}

/* Queue the (rest of the) read of request r. */
static void
dio_req_prep(DioStream *s, DioReq *r)
{
	int			slot = r - s->reqs;
	struct io_uring_sqe *sqe;
	int			fd = s->fds[r->segfd].fd;

	/* a linked pair must not straddle a submission */
	if (io_uring_sq_space_left(&dio_ring) < 2)
		dio_flush();

	if (pg_dio_inject_fault == DIO_FAULT_DELAY && pg_dio_inject_delay_ms > 0)
	{
		r->delay.tv_sec = pg_dio_inject_delay_ms / 1000;
		r->delay.tv_nsec = (long long) (pg_dio_inject_delay_ms % 1000) * 1000000;
		sqe = dio_get_sqe();
		io_uring_prep_timeout(sqe, &r->delay, 0, 0);
		sqe->flags |= IOSQE_IO_HARDLINK;
		io_uring_sqe_set_data64(sqe, DIO_UD(DIO_UD_TIMEOUT, s->index, slot));
		dio_sq_pending++;
	}

	sqe = dio_get_sqe();
	if (r->hang)
		io_uring_prep_read(sqe, dio_hang_pipe[0], r->buf, r->len, (uint64) -1);
	else if (r->buf_index >= 0)
		io_uring_prep_read_fixed(sqe, fd, r->buf + r->done, r->len - r->done,
								 r->offset + r->done, r->buf_index);
	else
		io_uring_prep_read(sqe, fd, r->buf + r->done, r->len - r->done,
						   r->offset + r->done);
	io_uring_sqe_set_data64(sqe, DIO_UD(DIO_UD_READ, s->index, slot));
	dio_sq_pending++;
}

/* The path of segment 'segno' of a permanent relation's fork, as md.c names it. */
void
dio_segment_path(RelFileLocator locator, ForkNumber fork, BlockNumber segno,
				 char *buf)
{
	RelPathStr	path = relpathperm(locator, fork);

	if (segno > 0)
		snprintf(buf, MAXPGPATH, "%s.%u", path.str, segno);
	else
		strlcpy(buf, path.str, MAXPGPATH);
}

/*
 * An entry of the stream's fd cache for a new segment file: a free one, a new
 * one, or one without pending reads (its fd closed); -1 if there is none.
 * Entries never move: in-flight requests refer to them by index.
 */
static int
dio_segfd_entry(DioStream *s)
{
	int			victim = -1;

	for (int i = 0; i < s->nfds && victim < 0; i++)
		if (s->fds[i].fd < 0)
			victim = i;
	if (victim < 0 && s->nfds < DIO_MAX_SEGFDS)
	{
		victim = s->nfds++;
		s->fds[victim].fd = -1;
	}
	for (int i = 0; i < s->nfds && victim < 0; i++)
		if (s->fds[i].pending == 0)
			victim = i;
	if (victim < 0)
		return -1;
	if (s->fds[victim].fd >= 0)
	{
		/* queued reads must reach the kernel before their fd is closed */
		dio_flush();
		close(s->fds[victim].fd);
		ReleaseExternalFD();
		s->fds[victim].fd = -1;
	}
	return victim;
}

/*
 * Return the index of the fd cache entry for segment 'segno', opening the
 * segment file O_DIRECT if needed; -1 with *reason set if we cannot.
 */
static int
dio_stream_segfd(DioStream *s, BlockNumber segno, DioFallback *reason)
{
	char		segpath[MAXPGPATH];
	int			fd;
	int			victim;

	for (int i = 0; i < s->nfds; i++)
		if (s->fds[i].fd >= 0 && s->fds[i].segno == segno)
			return i;

	if (!s->buffered &&
		(s->odirect_refused || pg_dio_inject_fault == DIO_FAULT_ODIRECT_EINVAL))
	{
		*reason = DIO_FB_NO_ODIRECT;
		if (!s->odirect_refused)
			dio_log_fallback(DIO_FB_NO_ODIRECT,
							 errdetail("O_DIRECT was refused (injected fault)."));
		s->odirect_refused = true;
		return -1;
	}

	victim = dio_segfd_entry(s);
	if (victim < 0)
	{
		*reason = DIO_FB_NO_FD;
		dio_log_fallback(DIO_FB_NO_FD,
						 errdetail("Too many segment files have reads in flight."));
		return -1;
	}
	s->fds[victim].pending = 0;

	if (!AcquireExternalFD())
	{
		*reason = DIO_FB_NO_FD;
		dio_log_fallback(DIO_FB_NO_FD,
						 errdetail("No file descriptor is free for a segment file."));
		return -1;
	}

	dio_segment_path(s->locator, s->fork, segno, segpath);

	fd = open(segpath, O_RDONLY | (s->buffered ? 0 : PG_O_DIRECT) | O_CLOEXEC);
	if (fd < 0)
	{
		int			save_errno = errno;

		ReleaseExternalFD();
		errno = save_errno;
		if (save_errno == EINVAL)
		{
			s->odirect_refused = true;
			*reason = DIO_FB_NO_ODIRECT;
			dio_log_fallback(DIO_FB_NO_ODIRECT,
							 errdetail("The file system refused O_DIRECT for file \"%s\".",
									   segpath));
		}
		else
		{
			*reason = (save_errno == EMFILE || save_errno == ENFILE) ?
				DIO_FB_NO_FD : DIO_FB_IO_ERROR;
			dio_log_fallback(*reason,
							 errdetail("Could not open file \"%s\": %m.", segpath));
		}
		return -1;
	}

	s->fds[victim].segno = segno;
	s->fds[victim].fd = fd;
	return victim;
}

/* Record a request's end in the stats; it no longer belongs to the kernel. */
static void
dio_req_finish(DioStream *s, DioReq *r, bool failed, DioFallback reason)
{
	instr_time	now;
	uint64		us;
	bool		was_inflight = (r->state == DIO_REQ_INFLIGHT);

	r->failed = failed;
	r->reason = reason;
	r->state = DIO_REQ_DONE;

	if (!was_inflight)
		return;

	s->ninflight--;
	dio_total_inflight--;
	s->fds[r->segfd].pending--;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, r->started);
	us = INSTR_TIME_GET_MICROSEC(now);

	/*
	 * pg_stat_io counts them as the relation reads they are; their time there
	 * is the time spent waiting for them (dio_wait_and_reap), as core's
	 */
	if (!failed && r->done > 0)
		pgstat_count_io_op(IOOBJECT_RELATION, s->io_context, IOOP_READ, 1, r->done);

	dio_stats_begin_write();
	dio_my_slot->c.reads_completed++;
	dio_my_slot->c.bytes_read += r->done;
	if (failed)
		dio_my_slot->c.errors++;
	dio_my_slot->c.lat_hist[dio_stats_lat_bucket(us)]++;
	dio_my_slot->c.lat_sum_us += us;
	dio_my_slot->c.size_hist[dio_stats_size_bucket(r->len)]++;
	dio_my_slot->c.bytes_requested += r->len;
	dio_stmt_io.direct_reads++;
	dio_stmt_io.direct_bytes += r->done;
	dio_stmt_io.read_us += us;
	if (r->reg >= 0)
	{
		dio_my_slot->inflight[r->reg].used = false;
		dio_my_slot->ninflight--;
		r->reg = -1;
	}
	dio_stats_end_write();
}

/* The injected faults that act on real completions: the result they make. */
static int
dio_inject_result(DioReq *r, int res)
{
	uint32		remaining = r->len - r->done;

	if (res > 0 && pg_dio_inject_fault == DIO_FAULT_EIO)
		return -EIO;
	if (res > 0 && pg_dio_inject_fault == DIO_FAULT_SHORT_READ &&
		!r->short_injected && (uint32) res == remaining &&
		remaining >= 2 * PG_IO_ALIGN_SIZE)
	{
		r->short_injected = true;
		return (remaining / 2) & ~(PG_IO_ALIGN_SIZE - 1);
	}
	return res;
}

/* A read that failed (res < 0) or hit the end of the file (res == 0). */
static void
dio_req_failed(DioStream *s, DioReq *r, int res)
{
	if (res == -EINVAL)
	{
		s->odirect_refused = true;
		dio_log_fallback(DIO_FB_NO_ODIRECT,
						 errdetail("A direct read was refused as invalid (EINVAL)."));
		dio_req_finish(s, r, true, DIO_FB_NO_ODIRECT);
		return;
	}
	if (res != -ECANCELED && dio_fallback_first(DIO_FB_IO_ERROR))
	{
		char		segpath[MAXPGPATH];
		long long	off = (long long) (r->offset + r->done);

		dio_segment_path(s->locator, s->fork, s->fds[r->segfd].segno, segpath);
		errno = -res;
		ereport(LOG,
				(dio_errmsg_fallback(),
				 res == 0 ?
				 errdetail("A direct read of file \"%s\" at offset %lld reached the end of the file.",
						   segpath, off) :
				 errdetail("Could not read file \"%s\" at offset %lld: %m.",
						   segpath, off),
				 dio_errhint_fallback(DIO_FB_IO_ERROR)));
	}
	dio_req_finish(s, r, true, DIO_FB_IO_ERROR);
}

/* A short read of 'res' bytes: keep what is aligned, read the rest again. */
static void
dio_req_short(DioStream *s, DioReq *r, int res)
{
	uint32		newdone = (r->done + res) & ~(PG_IO_ALIGN_SIZE - 1);

	dio_stats_begin_write();
	dio_my_slot->c.short_reads++;
	dio_stats_end_write();

	if (newdone <= r->done && ++r->stalls > DIO_MAX_STALLS)
	{
		dio_log_fallback(DIO_FB_IO_ERROR,
						 errdetail("A direct read made no progress."));
		dio_req_finish(s, r, true, DIO_FB_IO_ERROR);
		return;
	}
	r->done = Max(r->done, newdone);
	if (dio_broken)
		dio_req_finish(s, r, true, DIO_FB_IO_ERROR);
	else
		dio_req_prep(s, r);
}

/* Handle one completion.  Never raises an error. */
static void
dio_handle_cqe(uint64 ud, int res)
{
	DioStream  *s;
	DioReq	   *r;

	if ((ud >> 32) != DIO_UD_READ)
		return;					/* delay timeouts and cancels */

	s = dio_streams[(ud >> 16) & 0xFFFF];
	r = &s->reqs[ud & 0xFFFF];
	Assert(s->in_use && r->state == DIO_REQ_INFLIGHT);
	res = dio_inject_result(r, res);

	if ((res == -EINTR || res == -EAGAIN) && !dio_broken)
		dio_req_prep(s, r);		/* again */
	else if (res <= 0)
		dio_req_failed(s, r, (res == -EINTR || res == -EAGAIN) ? -EIO : res);
	else if ((uint32) res < r->len - r->done)
		dio_req_short(s, r, res);
	else
	{
		r->done = r->len;

		/*
		 * Damage the stored checksum of every page read.  The checksum of the
		 * contents is unchanged, so verification (with data checksums) fails
		 * for certain -- a flipped data byte would escape the 16-bit checksum
		 * once in 65536 pages.
		 */
		if (pg_dio_inject_fault == DIO_FAULT_CORRUPT)
			for (int i = 0; i < r->nblocks; i++)
				((PageHeader) (r->buf + (size_t) i * BLCKSZ))->pd_checksum ^= 0x5A5A;
		dio_req_finish(s, r, false, DIO_FB_IO_ERROR);
	}
}

/* Handle every completion that is in the completion queue. */
static void
dio_reap_ready(void)
{
	struct io_uring_cqe *cqe;
	unsigned	head;
	unsigned	n = 0;

	io_uring_for_each_cqe(&dio_ring, head, cqe)
	{
		dio_handle_cqe(io_uring_cqe_get_data64(cqe), cqe->res);
		n++;
	}
	io_uring_cq_advance(&dio_ring, n);
}

/*
 * Submit what is queued and handle the completions that are there, without
 * waiting (with DEFER_TASKRUN the kernel posts them only when asked).  The
 * ring must exist; never raises an error.
 */
static void
dio_submit_and_reap(void)
{
	dio_flush();
	if (dio_broken)
		return;
	(void) io_uring_get_events(&dio_ring);
	dio_reap_ready();
}

/*
 * Wait up to DIO_WAIT_TIMEOUT_MS for completions and handle all that are
 * there.  Never raises an error; returns false if the ring failed.
 * 'charge': the stream whose reads the backend waits for, or NULL for a wait
 * that is not a read's (draining after an error).  With track_io_timing, the
 * time spent submitting and waiting is its read time in pg_stat_io,
 * BufferUsage and pg_stat_database, as core counts the time spent starting
 * and waiting for its reads; the reads' own latencies, which overlap, go to
 * pg_dio's histograms only.
 */
static bool
dio_wait_and_reap(DioStream *charge, uint64 *waited_us)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = {0, DIO_WAIT_TIMEOUT_MS * 1000000LL};
	instr_time	start,
				end,
				io_start;
	int			ret;

	io_start = pgstat_prepare_io_time(track_io_timing && charge != NULL);
	dio_flush();
	if (dio_broken)
		return false;

	INSTR_TIME_SET_CURRENT(start);
	pgstat_report_wait_start(pg_dio_inject_fault == DIO_FAULT_DELAY ?
							 dio_wait_event_delay : dio_wait_event);
	ret = io_uring_wait_cqe_timeout(&dio_ring, &cqe, &ts);
	pgstat_report_wait_end();
	INSTR_TIME_SET_CURRENT(end);
	INSTR_TIME_SUBTRACT(end, start);

	if (waited_us)
		*waited_us = INSTR_TIME_GET_MICROSEC(end);
	if (charge != NULL)
	{
		pgstat_count_io_op_time(IOOBJECT_RELATION, charge->io_context, IOOP_READ,
								io_start, 0, 0);
		dio_stats_begin_write();
		dio_my_slot->c.wait_calls++;
		dio_my_slot->c.wait_time_us += INSTR_TIME_GET_MICROSEC(end);
		dio_stmt_io.wait_us += INSTR_TIME_GET_MICROSEC(end);
		dio_stats_end_write();
	}

	if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN)
	{
		dio_broken = true;
		errno = -ret;
		ereport(LOG,
				(errmsg("could not wait for direct reads: %m"),
				 errdetail("Direct reads are disabled in this process.")));
		return false;
	}

	dio_reap_ready();
	return true;
}

/*
 * Wait until this process has fewer than DIO_MAX_BACKEND_READS reads in
 * flight (other streams' reads complete on their own).
 */
static void
dio_wait_for_room(DioStream *s)
{
	while (!dio_broken && dio_total_inflight >= DIO_MAX_BACKEND_READS)
	{
		if (!dio_wait_and_reap(s, NULL))
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("io_uring failed while direct reads were in flight")));
		CHECK_FOR_INTERRUPTS();
	}
}

/* Count a read that goes to the kernel and list it in the in-flight registry. */
static void
dio_req_register(DioStream *s, DioReq *r)
{
	dio_stats_begin_write();
	dio_my_slot->c.reads_submitted++;
	if ((uint64) dio_total_inflight > dio_my_slot->c.max_inflight)
		dio_my_slot->c.max_inflight = dio_total_inflight;
	r->reg = -1;
	for (int i = 0; i < DIO_MAX_INFLIGHT; i++)
	{
		DioInflight *e = &dio_my_slot->inflight[i];

		if (!e->used)
		{
			e->used = true;
			e->locator = s->locator;
			e->fork = s->fork;
			e->first = r->first;
			e->nblocks = r->nblocks;
			e->bytes = r->len;
			e->submitted = GetCurrentTimestamp();
			e->query_id = pgstat_get_my_query_id();
			dio_my_slot->ninflight++;
			r->reg = i;
			break;
		}
	}
	dio_stats_end_write();
}

/*
 * Queue the read of blocks [first, first + nblocks), all in one segment and
 * at most dio_stream_max_blocks().  Requires dio_stream_can_submit().
 */
void
dio_stream_submit(DioStream *s, BlockNumber first, int nblocks)
{
	DioReq	   *r = NULL;
	int			slot;
	DioFallback reason = DIO_FB_IO_ERROR;
	BlockNumber segno = first / RELSEG_SIZE;

	Assert(!s->buffered);
	if (!dio_stream_can_submit(s) || nblocks <= 0 ||
		nblocks > dio_stream_max_blocks(s) ||
		(first + nblocks - 1) / RELSEG_SIZE != segno)
		elog(ERROR, "invalid direct read request (%u, %d)", first, nblocks);

	if (!s->prepared)
		dio_stream_prepare(s);
	if (!s->unusable)
		dio_wait_for_room(s);

	for (slot = 0; slot < s->nreqs; slot++)
		if (s->reqs[slot].state == DIO_REQ_FREE)
		{
			r = &s->reqs[slot];
			break;
		}
	Assert(r != NULL);

	r->first = first;
	r->nblocks = nblocks;
	r->len = (uint32) nblocks * BLCKSZ;
	r->done = 0;
	r->stalls = 0;
	r->short_injected = false;
	r->offset = (off_t) (first % RELSEG_SIZE) * BLCKSZ;
	r->segfd = -1;
	r->hang = false;
	s->fifo[(s->fifo_head + s->fifo_count) % s->nreqs] = slot;
	s->fifo_count++;

	if (s->unusable)
		reason = s->unusable_reason;
	else if (dio_broken)
		reason = DIO_FB_NO_URING;
	else
		r->segfd = dio_stream_segfd(s, segno, &reason);

	if (r->segfd < 0)
	{
		r->state = DIO_REQ_DONE;
		r->failed = true;
		r->reason = reason;
		return;
	}

	if (pg_dio_inject_fault == DIO_FAULT_HANG)
		r->hang = dio_hang_pipe[0] >= 0 || pipe(dio_hang_pipe) == 0;
	r->state = DIO_REQ_INFLIGHT;
	s->fds[r->segfd].pending++;
	s->ninflight++;
	dio_total_inflight++;
	s->issued++;
	s->inflight_sum += s->ninflight;
	INSTR_TIME_SET_CURRENT(r->started);
	dio_req_register(s, r);
	dio_req_prep(s, r);
}

/*
 * Send the reads queued so far to the kernel now, for a caller that queues
 * reads ahead of other work (dio_stream_next would send them only when it
 * is next called).
 */
void
dio_submit_pending(void)
{
	if (!dio_broken)
		dio_flush();
}

/*
 * Hand out the oldest submitted read once it has completed.  Waits (and
 * stays cancellable) while it is in flight.  Returns false if nothing is
 * pending.  The caller gives the run back with dio_stream_release().
 */
bool
dio_stream_next(DioStream *s, DioRun *run)
{
	DioReq	   *r;
	int			slot;

	if (s->fifo_count == 0)
		return false;
	slot = s->fifo[s->fifo_head];
	r = &s->reqs[slot];

	/*
	 * Reads queued since the last call (the caller refilled what it gave
	 * back) go to the kernel now, not at the next wait: otherwise the device
	 * idles by as many reads as the caller consumes without waiting.  Take
	 * in the completions that are there on the way.
	 */
	if (dio_sq_pending > 0 && !dio_broken)
	{
		instr_time	io_start = pgstat_prepare_io_time(track_io_timing);

		dio_submit_and_reap();
		pgstat_count_io_op_time(IOOBJECT_RELATION, s->io_context, IOOP_READ,
								io_start, 0, 0);
	}

	while (r->state == DIO_REQ_INFLIGHT)
	{
		uint64		us = 0;
		bool		ok = dio_wait_and_reap(s, &us);

		s->waits++;
		s->wait_us += us;
		if (!ok)
		{
			/*
			 * The ring failed: we no longer know what the kernel does with
			 * this stream's buffers.  Give them up for good.
			 */
			ereport(ERROR,
					(errcode(ERRCODE_IO_ERROR),
					 errmsg("io_uring failed while direct reads were in flight")));
		}
		CHECK_FOR_INTERRUPTS();
	}

	s->fifo_head = (s->fifo_head + 1) % s->nreqs;
	s->fifo_count--;
	s->nheld++;
	r->state = DIO_REQ_HELD;

	run->first = r->first;
	run->nblocks = r->nblocks;
	run->nvalid = r->failed ? (int) (r->done / BLCKSZ) : r->nblocks;
	run->reason = r->reason;
	run->issued = (r->segfd >= 0);
	run->data = r->buf;
	run->slot = slot;
	return true;
}

/*
 * Has the oldest submitted read completed?  Takes in the completions that
 * are there on the way, without waiting.  False if nothing is pending.
 */
bool
dio_stream_head_done(DioStream *s)
{
	DioReq	   *r;

	if (s->fifo_count == 0)
		return false;
	r = &s->reqs[s->fifo[s->fifo_head]];
	if (r->state == DIO_REQ_INFLIGHT && !dio_broken)
		dio_submit_and_reap();
	return r->state != DIO_REQ_INFLIGHT;
}

/*
 * Page-cache residency of a range of a segment file: cachestat(2) where the
 * kernel has it (6.5+), mincore(2) over a temporary mapping otherwise.
 */
#ifndef __NR_cachestat
#if defined(__x86_64__) || defined(__aarch64__)
#define __NR_cachestat 451
#endif
#endif

struct dio_cachestat_range
{
	uint64		off;
	uint64		len;
};

struct dio_cachestat
{
	uint64		nr_cache;
	uint64		nr_dirty;
	uint64		nr_writeback;
	uint64		nr_evicted;
	uint64		nr_recently_evicted;
};

static bool dio_have_cachestat = true;

/* Can we ask the kernel cheaply (cachestat(2)) what is in the page cache? */
bool
dio_cachestat_available(void)
{
#ifdef __NR_cachestat
	return dio_have_cachestat;
#else
	return false;
#endif
}

/* Bytes of [off, off + len) of fd in the OS page cache, or -1 if unknown. */
int64
dio_os_cached_bytes(int fd, off_t off, size_t len)
{
	long		pagesize = sysconf(_SC_PAGESIZE);
	void	   *map;
	unsigned char *vec;
	size_t		npages;
	int64		cached = 0;

	if (len == 0)
		return 0;
#ifdef __NR_cachestat
	if (dio_have_cachestat)
	{
		struct dio_cachestat_range range = {(uint64) off, (uint64) len};
		struct dio_cachestat cs;

		if (syscall(__NR_cachestat, fd, &range, &cs, 0) == 0)
			return (int64) cs.nr_cache * pagesize;
		if (errno == ENOSYS)
			dio_have_cachestat = false;
		else
			return -1;
	}
#endif
	npages = (len + pagesize - 1) / pagesize;
	map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
	if (map == MAP_FAILED)
		return -1;
	vec = palloc(npages);
	if (mincore(map, len, vec) == 0)
	{
		for (size_t i = 0; i < npages; i++)
			cached += (vec[i] & 1) ? pagesize : 0;
	}
	else
		cached = -1;
	pfree(vec);
	munmap(map, len);
	return cached;
}

/*
 * How many of blocks [first, first + nblocks) (one segment) are in the OS
 * page cache?  -1 if that cannot be told.
 */
int
dio_stream_os_cached(DioStream *s, BlockNumber first, int nblocks)
{
	DioFallback reason;
	int			segfd;
	int64		bytes;

	if (s->unusable || dio_broken)
		return -1;
	segfd = dio_stream_segfd(s, first / RELSEG_SIZE, &reason);
	if (segfd < 0)
		return -1;
	bytes = dio_os_cached_bytes(s->fds[segfd].fd, (off_t) (first % RELSEG_SIZE) * BLCKSZ,
							 (size_t) nblocks * BLCKSZ);
	return bytes < 0 ? -1 : (int) (bytes / BLCKSZ);
}

/*
 * Open a stream on the main fork only to ask the OS page cache about it
 * (dio_stream_os_cached): its segment files are opened without O_DIRECT, and
 * it never reads.
 */
DioStream *
dio_stream_begin_oscheck(Relation rel)
{
	DioStream  *s = dio_stream_begin(rel, MAIN_FORKNUM, 0);

	s->buffered = true;
	return s;
}

/* How often, and how long, the stream's consumer waited for reads. */
void
dio_stream_wait_stats(DioStream *s, uint64 *waits, uint64 *wait_us)
{
	*waits = s->waits;
	*wait_us = s->wait_us;
}

/*
 * Reads of the stream that reached the ring, and the sum over them of the
 * stream's reads in flight (not yet reaped) when each was queued, itself
 * included: inflight_sum / issued is the average queue depth the stream kept.
 */
void
dio_stream_inflight_stats(DioStream *s, uint64 *issued, uint64 *inflight_sum)
{
	*issued = s->issued;
	*inflight_sum = s->inflight_sum;
}

void
dio_stream_release(DioStream *s, DioRun *run)
{
	DioReq	   *r = &s->reqs[run->slot];

	Assert(r->state == DIO_REQ_HELD);
	r->state = DIO_REQ_FREE;
	s->nheld--;
}

/*
 * Cancel and reap every read of the stream.  Runs in abort and exit paths:
 * no ERROR, no interrupt processing.  Returns false if the ring failed and
 * reads may still be owned by the kernel.
 */
static bool
dio_stream_drain(DioStream *s)
{
	instr_time	start,
				now;

	if (s->ninflight == 0)
		return true;
	if (dio_broken)
		return false;

	for (int i = 0; i < s->nreqs; i++)
	{
		DioReq	   *r = &s->reqs[i];
		struct io_uring_sqe *sqe;

		/* the hang fault models a device that ignores cancels */
		if (r->state != DIO_REQ_INFLIGHT || r->hang)
			continue;
		if (io_uring_sq_space_left(&dio_ring) < 2)
			dio_flush();
		sqe = dio_get_sqe();
		if (sqe == NULL)
			break;				/* the reads still complete on their own */
		io_uring_prep_cancel64(sqe, DIO_UD(DIO_UD_TIMEOUT, s->index, i), 0);
		io_uring_sqe_set_data64(sqe, DIO_UD(DIO_UD_CANCEL, s->index, i));
		dio_sq_pending++;
		sqe = dio_get_sqe();
		if (sqe == NULL)
			break;
		io_uring_prep_cancel64(sqe, DIO_UD(DIO_UD_READ, s->index, i), 0);
		io_uring_sqe_set_data64(sqe, DIO_UD(DIO_UD_CANCEL, s->index, i));
		dio_sq_pending++;
	}

	INSTR_TIME_SET_CURRENT(start);
	while (s->ninflight > 0)
	{
		if (!dio_wait_and_reap(NULL, NULL))
			return false;
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (s->ninflight > 0 &&
			INSTR_TIME_GET_MILLISEC(now) >= DIO_DRAIN_TIMEOUT_MS)
		{
			/*
			 * A late completion could land in a request reused by another
			 * stream: no read goes through this ring again.
			 */
			dio_broken = true;
			ereport(LOG,
					(errmsg("%d direct reads did not complete within %d ms of being cancelled",
							s->ninflight, DIO_DRAIN_TIMEOUT_MS),
					 errdetail("Their buffers are abandoned, and this process reads through the buffer manager from now on.")));
			return false;
		}
	}
	return true;
}

/* Give back everything a drained stream holds.  No ERROR. */
static void
dio_stream_teardown(DioStream *s)
{
	if (!dio_stream_drain(s))
	{
		/* leak the buffers: the kernel may still write into them */
		s->in_use = false;
		if (s->primary)
		{
			dio_pool_mem = NULL;	/* never reused nor unmapped */
			/*
			 * Nor is its registration used again: a later pool's reads go
			 * unregistered (registering anew fails while it stays).
			 */
			dio_pool_nregistered = 0;
			dio_pool_in_use = false;
		}
		return;
	}

	for (int i = 0; i < s->nfds; i++)
	{
		if (s->fds[i].fd < 0)
			continue;
		close(s->fds[i].fd);
		ReleaseExternalFD();
	}
	s->nfds = 0;

	for (int i = 0; i < s->nreqs; i++)
		s->reqs[i].state = DIO_REQ_FREE;
	s->fifo_head = s->fifo_count = 0;
	s->nheld = 0;

	if (s->primary)
		dio_pool_in_use = false;
	else if (s->mem != NULL)
		dio_unmap_io_mem(s->mem, s->mem_size);
	s->mem = NULL;
	s->in_use = false;
}

void
dio_stream_end(DioStream *s)
{
	ResourceOwnerForget(s->owner, dio_stream_datum(s), &dio_resowner_desc);
	dio_stream_teardown(s);
}

static DioStream *
dio_stream_from_datum(Datum res)
{
	int64		v = DatumGetInt64(res);
	int			index = (int) (v & 0xFFFF);
	uint32		generation = (uint32) (v >> 16);
	DioStream  *s;

	if (index < 0 || index >= DIO_MAX_STREAMS)
		return NULL;
	s = dio_streams[index];
	if (s == NULL || !s->in_use || s->generation != generation)
		return NULL;
	return s;
}

/* Resource owner release (abort, or a stream its user forgot to end). */
static void
dio_resowner_release(Datum res)
{
	DioStream  *s = dio_stream_from_datum(res);

	if (s != NULL)
		dio_stream_teardown(s);
}

static char *
dio_resowner_print(Datum res)
{
	DioStream  *s = dio_stream_from_datum(res);

	if (s == NULL)
		return pstrdup("pg_dio read stream (already closed)");
	return psprintf("pg_dio read stream on relation %u fork %d", s->locator.relNumber, s->fork);
}

/* before_shmem_exit: drain every stream, close the ring. */
static void
dio_engine_shutdown(int code, Datum arg)
{
	bool		all_drained = true;

	for (int i = 0; i < DIO_MAX_STREAMS; i++)
	{
		DioStream  *s = dio_streams[i];

		if (s != NULL && s->in_use)
		{
			dio_stream_teardown(s);
			if (s->ninflight > 0)
				all_drained = false;
		}
	}
	if (dio_ring_state > 0 && all_drained && !dio_broken)
	{
		io_uring_queue_exit(&dio_ring);
		dio_ring_state = 0;
		if (dio_pool_mem != NULL)
			dio_unmap_io_mem(dio_pool_mem, dio_pool_size);
		dio_pool_mem = NULL;
	}
	dio_engine_ready = false;
}
