/*-------------------------------------------------------------------------
 *
 * scan_prefetch.h
 *	  PrefetchIndexScan and PrefetchIndexOnlyScan (scan_prefetch.c): index
 *	  scans that fetch the heap ahead, in index order.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_prefetch.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PREFETCH_H
#define PG_DIO_SCAN_PREFETCH_H

#include "nodes/plannodes.h"

#include "scan_plan.h"

extern PGDLLIMPORT bool pg_dio_enable_index_prefetch;
extern PGDLLIMPORT int pg_dio_index_prefetch_min_rows;

extern void dio_prefetch_init(void);
extern Plan *pf_substitute(PlannedStmt *stmt, Plan *plan, bool plain, bool bounded,
						   bool first, const DioPlanSettings *set);
extern double pf_index_correlation(Oid relid, Oid indexoid);
extern bool pf_make_fed(PlannedStmt *stmt, Plan **plan, int feeder,
						const DioPlanSettings *set);
extern bool pf_plan_index(const CustomScan *cscan, Oid *indexoid, bool *index_only,
						  List **indexqual);
extern Size dio_prefetch_shmem_size(void);
extern void dio_prefetch_shmem_startup(void);

#endif							/* PG_DIO_SCAN_PREFETCH_H */
