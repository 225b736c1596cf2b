/*-------------------------------------------------------------------------
 *
 * scan_probe.h
 *	  ProbePrefetch (scan_probe.c): a nested loop's outer side read ahead,
 *	  with the heap blocks of the inner's index probes advised; or a hash
 *	  join's, for a correlated SubPlan in its outer hash key.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_probe.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PROBE_H
#define PG_DIO_SCAN_PROBE_H

#include "nodes/plannodes.h"
#include "access/skey.h"
#include "utils/relcache.h"

#include "scan_plan.h"

/* where a btree probe starts (scan_probe_leaf.c) */
typedef struct DioLeafKey DioLeafKey;

extern PGDLLIMPORT bool pg_dio_enable_probe_prefetch;
extern PGDLLIMPORT int pg_dio_probe_prefetch_distance;
extern PGDLLIMPORT bool pg_dio_probe_direct_read;
extern PGDLLIMPORT int pg_dio_probe_shared_memory_kb;

extern void dio_probe_init(void);
extern Plan *dio_probe_substitute(PlannedStmt *stmt, NestLoop *nl, bool plain,
								  bool partial, double participants, int *next_id,
								  const DioPlanSettings *set);
extern Plan *dio_probe_hash_substitute(PlannedStmt *stmt, HashJoin *hj, bool plain,
									   bool partial, double participants, int *next_id,
									   const DioPlanSettings *set);
extern DioLeafKey *dio_leaf_key_create(Relation index, ScanKey keys, int nkeys);
extern BlockNumber dio_leaf_find(DioLeafKey *lk, Relation index, Relation heap,
								 ScanKey keys);

#endif							/* PG_DIO_SCAN_PROBE_H */
