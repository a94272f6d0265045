/* SPDX-License-Identifier: Apache-2.0 */
/* db/migrations.h -- the schema migrations, embedded at build time from
 * db/migrations/NNNN_name.sql (cmake/embed_sql.cmake), ascending. */
#ifndef KF_MIGRATIONS_H
#define KF_MIGRATIONS_H

typedef struct {
  int version;      /* NNNN of the file name */
  const char *name; /* file name */
  const char *sql;  /* whole file, NUL-terminated */
} kf_migration;

extern const kf_migration kf_migrations[];
extern const unsigned kf_migrations_count;

#endif
