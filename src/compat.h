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

#include "optimizer/planner.h"

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

#endif							/* PG_DIO_COMPAT_H */
