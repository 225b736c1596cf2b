/*-------------------------------------------------------------------------
 *
 * diag_views.c
 *	  SQL-callable functions behind pg_dio's statistics views.
 *
 * Every function copies what it reports from shared memory under the read
 * protocol of diag_stats.c (no locks held while building tuples).  Like core's
 * pg_stat_activity, a role sees the details of backends running as a role it
 * has the privileges of, and of all backends with pg_read_all_stats; other
 * backends' counters are NULL and their in-flight reads are not shown.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/diag_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_authid_d.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "utils/acl.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "diag.h"

PG_FUNCTION_INFO_V1(pg_dio_backend_stats);
PG_FUNCTION_INFO_V1(pg_dio_cluster_stats);
PG_FUNCTION_INFO_V1(pg_dio_histogram);
PG_FUNCTION_INFO_V1(pg_dio_inflight);
PG_FUNCTION_INFO_V1(pg_dio_stats_reset);

/* number of counter columns emitted by dio_counter_values() */
#define DIO_COUNTER_COLS (14 + DIO_NUM_FALLBACK)

static bool
dio_can_see(Oid backend_userid)
{
	return has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) ||
		has_privs_of_role(GetUserId(), backend_userid);
}

/*
 * Fill DIO_COUNTER_COLS values: reads_submitted, reads_completed, bytes_read,
 * blocks_direct, blocks_fallback, one column per fallback reason, errors,
 * short_reads, submit_calls, wait_calls, wait_time_ms, read_latency_ms,
 * bytes_requested, max_inflight, reads_in_flight.
 */
static void
dio_counter_values(const DioCounters *c, int inflight, Datum *values, bool *nulls)
{
	int			i = 0;
	uint64		fallback = 0;

	for (int r = 0; r < DIO_NUM_FALLBACK; r++)
		fallback += c->blocks_fallback[r];

	values[i++] = Int64GetDatum((int64) c->reads_submitted);
	values[i++] = Int64GetDatum((int64) c->reads_completed);
	values[i++] = Int64GetDatum((int64) c->bytes_read);
	values[i++] = Int64GetDatum((int64) c->blocks_direct);
	values[i++] = Int64GetDatum((int64) fallback);
	for (int r = 0; r < DIO_NUM_FALLBACK; r++)
		values[i++] = Int64GetDatum((int64) c->blocks_fallback[r]);
	values[i++] = Int64GetDatum((int64) c->errors);
	values[i++] = Int64GetDatum((int64) c->short_reads);
	values[i++] = Int64GetDatum((int64) c->submit_calls);
	values[i++] = Int64GetDatum((int64) c->wait_calls);
	values[i++] = Float8GetDatum((double) c->wait_time_us / 1000.0);
	values[i++] = Float8GetDatum((double) c->lat_sum_us / 1000.0);
	values[i++] = Int64GetDatum((int64) c->bytes_requested);
	values[i++] = Int64GetDatum((int64) c->max_inflight);
	values[i++] = Int32GetDatum(inflight);
	Assert(i == DIO_COUNTER_COLS);
	memset(nulls, 0, sizeof(bool) * DIO_COUNTER_COLS);
}

/*
 * Visit the live backends core knows of (the transaction's snapshot of
 * backend status), with our slot copy when the backend has one.
 */
typedef void (*dio_backend_visitor) (int pid, int backend_type, bool visible,
									 const DioBackendSlot *slot, void *arg);

static void
dio_foreach_backend(int only_pid, dio_backend_visitor visit, void *arg)
{
	int			n = pgstat_fetch_stat_numbackends();
	DioBackendSlot *copy = palloc(sizeof(DioBackendSlot));

	for (int i = 1; i <= n; i++)
	{
		LocalPgBackendStatus *local = pgstat_get_local_beentry_by_index(i);
		PgBackendStatus *be;
		bool		have;

		CHECK_FOR_INTERRUPTS();
		if (local == NULL)
			continue;
		be = &local->backendStatus;
		if (only_pid != 0 && be->st_procpid != only_pid)
			continue;
		if (local->proc_number < 0 || local->proc_number >= dio_stats_nslots())
			continue;

		have = dio_stats_read_slot(local->proc_number, copy) &&
			copy->pid == be->st_procpid;
		visit(be->st_procpid, (int) be->st_backendType,
			  !OidIsValid(be->st_userid) ? has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS) : dio_can_see(be->st_userid),
			  have ? copy : NULL, arg);
	}
	pfree(copy);
}

/* The backend type as pg_stat_activity shows it. */
static Datum
dio_backend_type_datum(int pid, int backend_type)
{
	const char *desc = NULL;

	if ((BackendType) backend_type == B_BG_WORKER)
		desc = GetBackgroundWorkerTypeByPid(pid);
	if (desc == NULL)
		desc = GetBackendTypeDesc((BackendType) backend_type);
	return CStringGetTextDatum(desc);
}

/* ---------- pg_dio_backend_stats(pid) ---------- */

static void
dio_backend_stats_row(int pid, int backend_type, bool visible,
					  const DioBackendSlot *slot, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;
	Datum		values[3 + DIO_COUNTER_COLS];
	bool		nulls[3 + DIO_COUNTER_COLS];
	DioCounters zero;

	values[0] = Int32GetDatum(pid);
	nulls[0] = false;

	if (visible)
	{
		values[1] = dio_backend_type_datum(pid, backend_type);
		nulls[1] = false;
		memset(&zero, 0, sizeof(zero));
		dio_counter_values(slot ? &slot->c : &zero, slot ? slot->ninflight : 0,
						   values + 2, nulls + 2);
		values[2 + DIO_COUNTER_COLS] = Int64GetDatum(slot ? (int64) slot->io_memory : 0);
		nulls[2 + DIO_COUNTER_COLS] = false;
	}
	else
		memset(nulls + 1, true, sizeof(bool) * (2 + DIO_COUNTER_COLS));

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

Datum
pg_dio_backend_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			pid = PG_ARGISNULL(0) ? 0 : PG_GETARG_INT32(0);

	dio_stats_require();
	InitMaterializedSRF(fcinfo, 0);
	if (!PG_ARGISNULL(0) && pid <= 0)
		PG_RETURN_VOID();		/* no such backend, like core's functions */
	dio_foreach_backend(pid, dio_backend_stats_row, rsinfo);
	PG_RETURN_VOID();
}

/* ---------- pg_dio_cluster_stats() ---------- */

typedef struct DioSumArg
{
	DioCounters sum;
	int			inflight;
} DioSumArg;

/* cluster totals count every process, visible or not: no details leak */
static void
dio_cluster_totals(DioSumArg *a)
{
	dio_stats_cluster_totals(&a->sum, &a->inflight);
}

Datum
pg_dio_cluster_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[DIO_COUNTER_COLS + 1];
	bool		nulls[DIO_COUNTER_COLS + 1];
	DioSumArg	a;

	dio_stats_require();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	dio_cluster_totals(&a);
	dio_counter_values(&a.sum, a.inflight, values, nulls);
	values[DIO_COUNTER_COLS] = TimestampTzGetDatum(dio_stats_reset_time());
	nulls[DIO_COUNTER_COLS] = false;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------- pg_dio_histogram(pid) ---------- */

static void
dio_histogram_rows(ReturnSetInfo *rsinfo, int pid, const DioCounters *c)
{
	for (int kind = 0; kind < 2; kind++)
	{
		int			nb = kind == 0 ? DIO_LAT_BUCKETS : DIO_SIZE_BUCKETS;
		const uint64 *h = kind == 0 ? c->lat_hist : c->size_hist;

		for (int b = 0; b < nb; b++)
		{
			Datum		values[6];
			bool		nulls[6] = {0};
			int64		lo,
						hi;

			if (kind == 0)
			{
				lo = b == 0 ? 0 : (INT64CONST(1) << b);
				hi = INT64CONST(1) << (b + 1);
			}
			else
			{
				lo = b == 0 ? 0 : (int64) BLCKSZ << b;
				hi = (int64) BLCKSZ << (b + 1);
			}
			if (pid == 0)
				nulls[0] = true;
			else
				values[0] = Int32GetDatum(pid);
			values[1] = CStringGetTextDatum(kind == 0 ? "latency" : "size");
			values[2] = Int32GetDatum(b);
			values[3] = Int64GetDatum(lo);
			if (b == nb - 1)
				nulls[4] = true;	/* open-ended last bucket */
			else
				values[4] = Int64GetDatum(hi);
			values[5] = Int64GetDatum((int64) h[b]);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
}

/* visible backends that never used the engine get all-zero histograms */
static void
dio_histogram_backend(int pid, int backend_type, bool visible,
					  const DioBackendSlot *slot, void *arg)
{
	DioCounters zero;

	if (!visible)
		return;
	memset(&zero, 0, sizeof(zero));
	dio_histogram_rows((ReturnSetInfo *) arg, pid, slot ? &slot->c : &zero);
}

Datum
pg_dio_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	dio_stats_require();
	InitMaterializedSRF(fcinfo, 0);

	if (PG_ARGISNULL(0))
	{
		DioSumArg	a;

		dio_cluster_totals(&a);
		dio_histogram_rows(rsinfo, 0, &a.sum);
		dio_foreach_backend(0, dio_histogram_backend, rsinfo);
	}
	else if (PG_GETARG_INT32(0) > 0)
		dio_foreach_backend(PG_GETARG_INT32(0), dio_histogram_backend, rsinfo);
	PG_RETURN_VOID();
}

/* ---------- pg_dio_inflight() ---------- */

static void
dio_inflight_backend(int pid, int backend_type, bool visible,
					 const DioBackendSlot *slot, void *arg)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) arg;

	if (slot == NULL || !visible)
		return;
	for (int i = 0; i < DIO_MAX_INFLIGHT; i++)
	{
		const DioInflight *e = &slot->inflight[i];
		Datum		values[11];
		bool		nulls[11] = {0};

		if (!e->used)
			continue;
		values[0] = Int32GetDatum(pid);
		values[1] = Int32GetDatum(i);
		values[2] = ObjectIdGetDatum(e->locator.spcOid);
		values[3] = ObjectIdGetDatum(e->locator.dbOid);
		values[4] = ObjectIdGetDatum(e->locator.relNumber);
		values[5] = CStringGetTextDatum(forkNames[e->fork]);
		values[6] = Int64GetDatum((int64) e->first);
		values[7] = Int32GetDatum(e->nblocks);
		values[8] = Int64GetDatum((int64) e->bytes);
		values[9] = TimestampTzGetDatum(e->submitted);
		/* as pg_stat_activity: NULL when the backend reported none */
		if (e->query_id == 0)
			nulls[10] = true;
		else
			values[10] = Int64GetDatum(e->query_id);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

Datum
pg_dio_inflight(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	dio_stats_require();
	InitMaterializedSRF(fcinfo, 0);
	dio_foreach_backend(0, dio_inflight_backend, rsinfo);
	PG_RETURN_VOID();
}

/* ---------- pg_dio_stats_reset() ---------- */

Datum
pg_dio_stats_reset(PG_FUNCTION_ARGS)
{
	dio_stats_require();
	dio_stats_reset();
	PG_RETURN_VOID();
}
