/*-------------------------------------------------------------------------
 *
 * scan_plan.h
 *	  The planner hook (scan_plan.c): core plans every query, then pg_dio's
 *	  scans take the place of the scans of the finished plan they can run.
 *
 * Copyright (c) 2026, pg_dio developers
 *
 * IDENTIFICATION
 *	  src/scan_plan.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_DIO_SCAN_PLAN_H
#define PG_DIO_SCAN_PLAN_H

/*
 * The settings that decide where pg_dio's nodes stand, as the planner saw
 * them: a planner hook that sets settings only around the planner it calls
 * (pg_hint_plan's Set hints) has restored them by the time the plan reaches
 * pg_dio's hook, so they are read below it (scan_plan.c).
 */
typedef struct DioPlanSettings
{
	bool		enable_direct_scan;
	int			direct_scan_threshold;	/* blocks */
	bool		enable_index_prefetch;
	int			index_prefetch_min_rows;
	bool		enable_probe_prefetch;
	bool		probe_direct_read;
	int			probe_shared_memory_kb;
} DioPlanSettings;

extern void dio_plan_init(void);

#endif							/* PG_DIO_SCAN_PLAN_H */
