/*-------------------------------------------------------------------------
 *
 * diag_stats.c
 *	  pg_dio's statistics in shared memory: one slot per PGPROC with the
 *	  read engine's counters, histograms and the registry of its in-flight
 *	  reads, plus the totals of backends that have exited.
 *
 * Locking and lifetime rules:
 *	- A slot (indexed by MyProcNumber) is written only by the process that
 *	  owns it, between dio_stats_begin_write() and dio_stats_end_write(),
 *	  with core's changecount protocol (pgstat_internal.h): readers copy the
 *	  slot and retry until the count was even and unchanged; writers never
 *	  wait.
 *	- The totals of exited backends, the reset generation and the reset
 *	  time are protected by the spinlock 'mutex'.  An exiting process folds
 *	  its counters into the totals, clears its slot and bumps fold_gen under
 *	  it, so a reader that saw fold_gen unchanged around its pass over the
 *	  slots counted every process exactly once.
 *	- A reset cannot touch other processes' slots (one writer each): it bumps
 *	  the reset generation; a slot whose reset_gen is older shows zeros to
 *	  readers, and its owner zeroes its counters at its next write.
 *	- A process attaches its slot on first use of the engine and detaches in
 *	  a before_shmem_exit callback, folding its counters into the totals.
 *	  Nothing here stores a process-local pointer in shared memory.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/diag_stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/pgstat_internal.h"

#include "diag.h"

typedef struct DioShared
{
	slock_t		mutex;
	pg_atomic_uint64 reset_gen;
	TimestampTz stats_reset;
	DioCounters exited;			/* folded in by exiting processes */
	uint64		fold_gen;		/* folds so far */
	int			nslots;
	DioBackendSlot slots[FLEXIBLE_ARRAY_MEMBER];
} DioShared;

static DioShared *dio_shared = NULL;
DioBackendSlot *dio_my_slot = NULL;

static int
dio_stats_slot_count(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

static Size
dio_stats_shmem_size(void)
{
	return add_size(offsetof(DioShared, slots),
					mul_size(dio_stats_slot_count(), sizeof(DioBackendSlot)));
}

/* Called from the shmem_request_hook. */
void
dio_stats_shmem_request(void)
{
	RequestAddinShmemSpace(dio_stats_shmem_size());
}

/* Called from the shmem_startup_hook, after the previous hook. */
void
dio_stats_shmem_startup(void)
{
	bool		found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	dio_shared = ShmemInitStruct("pg_dio stats", dio_stats_shmem_size(), &found);
	if (!found)
	{
		memset(dio_shared, 0, dio_stats_shmem_size());
		SpinLockInit(&dio_shared->mutex);
		pg_atomic_init_u64(&dio_shared->reset_gen, 1);
		dio_shared->stats_reset = GetCurrentTimestamp();	/* no lock needed yet */
		dio_shared->nslots = dio_stats_slot_count();
		for (int i = 0; i < dio_shared->nslots; i++)
			dio_shared->slots[i].reset_gen = 1;
	}
	LWLockRelease(AddinShmemInitLock);
}

bool
dio_stats_available(void)
{
	return dio_shared != NULL;
}

/* Raise the documented error when the library was not preloaded. */
void
dio_stats_require(void)
{
	if (dio_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_dio must be loaded via \"shared_preload_libraries\"")));
}

static void
dio_counters_add(DioCounters *dst, const DioCounters *src)
{
	const uint64 *s = (const uint64 *) src;
	uint64	   *d = (uint64 *) dst;

	StaticAssertStmt(sizeof(DioCounters) % sizeof(uint64) == 0,
					 "DioCounters must be made of uint64 only");
	for (size_t i = 0; i < sizeof(DioCounters) / sizeof(uint64); i++)
	{
		/* max_inflight is a maximum, not a sum */
		if (&d[i] == &dst->max_inflight)
			d[i] = Max(d[i], s[i]);
		else
			d[i] += s[i];
	}
}

/* before_shmem_exit: fold our counters into the totals, free the slot. */
static void
dio_stats_detach(int code, Datum arg)
{
	DioBackendSlot *slot = dio_my_slot;

	if (slot == NULL)
		return;

	dio_stats_begin_write();
	slot->ninflight = 0;
	memset(slot->inflight, 0, sizeof(slot->inflight));
	slot->io_memory = 0;
	dio_stats_end_write();

	SpinLockAcquire(&dio_shared->mutex);
	dio_stats_begin_write();
	if (slot->reset_gen == pg_atomic_read_u64(&dio_shared->reset_gen))
		dio_counters_add(&dio_shared->exited, &slot->c);
	memset(&slot->c, 0, sizeof(slot->c));
	slot->pid = 0;
	slot->userid = InvalidOid;
	dio_stats_end_write();
	dio_shared->fold_gen++;
	SpinLockRelease(&dio_shared->mutex);
	dio_my_slot = NULL;
}

/*
 * Take this process's slot.  Called once per process, on first use of the
 * engine; must run before the engine registers its own exit callback, so the
 * engine drains (and updates the slot) before the slot is folded.
 */
void
dio_stats_attach(void)
{
	DioBackendSlot *slot;

	dio_stats_require();
	if (dio_my_slot != NULL)
		return;
	if (MyProcNumber < 0 || MyProcNumber >= dio_shared->nslots)
		elog(ERROR, "process number %d out of range", MyProcNumber);

	slot = &dio_shared->slots[MyProcNumber];
	dio_my_slot = slot;
	dio_stats_begin_write();
	memset(&slot->c, 0, sizeof(slot->c));
	slot->ninflight = 0;
	memset(slot->inflight, 0, sizeof(slot->inflight));
	slot->io_memory = 0;
	slot->pid = MyProcPid;
	slot->userid = GetSessionUserId();
	dio_stats_end_write();

	before_shmem_exit(dio_stats_detach, (Datum) 0);
}

/*
 * Start changing our slot.  No ERROR may be raised until
 * dio_stats_end_write(): this is a critical section.
 */
void
dio_stats_begin_write(void)
{
	DioBackendSlot *slot = dio_my_slot;
	uint64		gen;

	pgstat_begin_changecount_write(&slot->changecount);

	/* apply a reset that happened since our last write */
	gen = pg_atomic_read_u64(&dio_shared->reset_gen);
	if (slot->reset_gen != gen)
	{
		memset(&slot->c, 0, sizeof(slot->c));
		slot->reset_gen = gen;
	}
}

void
dio_stats_end_write(void)
{
	pgstat_end_changecount_write(&dio_my_slot->changecount);
}

int
dio_stats_lat_bucket(uint64 us)
{
	int			b = 0;

	while (us > 1 && b < DIO_LAT_BUCKETS - 1)
	{
		us >>= 1;
		b++;
	}
	return b;
}

int
dio_stats_size_bucket(uint64 bytes)
{
	int			b = 0;
	uint64		lim = (uint64) BLCKSZ * 2;

	while (bytes >= lim && b < DIO_SIZE_BUCKETS - 1)
	{
		lim <<= 1;
		b++;
	}
	return b;
}

/* Count blocks a caller used directly and blocks it had to read buffered. */
void
dio_stats_count_blocks(uint64 ndirect, DioFallback reason, uint64 nfallback)
{
	if (dio_my_slot == NULL || (ndirect == 0 && nfallback == 0))
		return;
	dio_stats_begin_write();
	dio_my_slot->c.blocks_direct += ndirect;
	dio_my_slot->c.blocks_fallback[reason] += nfallback;
	dio_stats_end_write();
	dio_stmt_io.direct_blocks += ndirect;
	dio_stmt_io.fallback[reason] += nfallback;
}

/* ---------- readers ---------- */

int
dio_stats_nslots(void)
{
	dio_stats_require();
	return dio_shared->nslots;
}

/*
 * Copy slot 'procno' consistently.  Returns false if it is not in use.
 * Counters from before the last reset read as zero.
 */
bool
dio_stats_read_slot(int procno, DioBackendSlot *copy)
{
	DioBackendSlot *slot = &dio_shared->slots[procno];

	pgstat_copy_changecounted_stats(copy, slot, sizeof(DioBackendSlot),
									&slot->changecount);
	if (copy->pid == 0)
		return false;
	if (copy->reset_gen != pg_atomic_read_u64(&dio_shared->reset_gen))
		memset(&copy->c, 0, sizeof(copy->c));
	return true;
}

/*
 * Cluster totals: the exited processes' and every live slot's counters, and
 * the reads in flight, as of one moment between two folds.
 */
void
dio_stats_cluster_totals(DioCounters *sum, int *inflight)
{
	DioBackendSlot *copy = palloc(sizeof(DioBackendSlot));

	for (;;)
	{
		uint64		gen_before;
		uint64		gen_after;

		*inflight = 0;
		SpinLockAcquire(&dio_shared->mutex);
		memcpy(sum, &dio_shared->exited, sizeof(DioCounters));
		gen_before = dio_shared->fold_gen;
		SpinLockRelease(&dio_shared->mutex);

		for (int i = 0; i < dio_shared->nslots; i++)
		{
			if (!dio_stats_read_slot(i, copy))
				continue;
			dio_counters_add(sum, &copy->c);
			*inflight += copy->ninflight;
		}

		SpinLockAcquire(&dio_shared->mutex);
		gen_after = dio_shared->fold_gen;
		SpinLockRelease(&dio_shared->mutex);
		if (gen_before == gen_after)
			break;
		CHECK_FOR_INTERRUPTS();
	}
	pfree(copy);
}

void
dio_stats_reset(void)
{
	TimestampTz now = GetCurrentTimestamp();

	SpinLockAcquire(&dio_shared->mutex);
	memset(&dio_shared->exited, 0, sizeof(DioCounters));
	pg_atomic_fetch_add_u64(&dio_shared->reset_gen, 1);
	dio_shared->stats_reset = now;
	SpinLockRelease(&dio_shared->mutex);
}

TimestampTz
dio_stats_reset_time(void)
{
	TimestampTz t;

	SpinLockAcquire(&dio_shared->mutex);
	t = dio_shared->stats_reset;
	SpinLockRelease(&dio_shared->mutex);
	return t;
}
