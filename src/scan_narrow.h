/*-------------------------------------------------------------------------
 *
 * scan_narrow.h
 *	  The narrow scan tuple both of pg_dio's heap scans use (scan_narrow.c):
 *	  a virtual scan slot holding just the columns the plan needs, filled
 *	  straight from the heap tuple.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_narrow.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_NARROW_H
#define PG_DIO_SCAN_NARROW_H

#include "access/htup_details.h"
#include "access/tupmacs.h"
#include "executor/tuptable.h"
#include "nodes/pg_list.h"

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

#endif							/* PG_DIO_SCAN_NARROW_H */
