/* durability — how much a returned commit survives (coffer_durability): the
 * configuration's level, the LMDB flags it maps to, the level a handle's
 * environment has and flushing on demand. The level is fixed per
 * environment in env.c. */
#include <errno.h>
#include <string.h>

#include "storage/config.h"
#include "storage/env.h"
#include "storage/handles.h"
#include "util/error.h"

unsigned cf_durability_flags(int durability)
{
    switch (durability) {
    case COFFER_DURABILITY_NORMAL:
        return MDB_NOMETASYNC;
    case COFFER_DURABILITY_NONE:
        return MDB_NOSYNC | MDB_NOMETASYNC;
    default:
        return 0;
    }
}

const char *cf_durability_name(int durability)
{
    switch (durability) {
    case COFFER_DURABILITY_FULL:
        return "full";
    case COFFER_DURABILITY_NORMAL:
        return "normal";
    case COFFER_DURABILITY_NONE:
        return "none";
    default:
        return NULL;
    }
}

COFFER_API coffer_status coffer_config_set_durability(coffer_config *c, coffer_durability durability)
{
    CHECK_CONFIG(c, "coffer_config_set_durability");
    if (!cf_durability_name((int)durability))
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_config_set_durability: %d is not a durability (COFFER_DURABILITY_FULL, _NORMAL or _NONE)",
                        (int)durability);
    c->durability = (int)durability;
    return COFFER_OK;
}

static coffer_status check_db(const coffer_db *db, const char *fn)
{
    if (!db || db->magic != CF_DB_MAGIC)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "%s: db is NULL or not a database", fn);
    if (db->closed)
        return cf_error(COFFER_ERR_MISUSE, "%s: the database is closed", fn);
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_durability(coffer_db *db, coffer_durability *out)
{
    coffer_status st = check_db(db, "coffer_db_durability");
    if (st != COFFER_OK)
        return st;
    if (!out)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT, "coffer_db_durability: out is NULL");
    cf_registry_lock(); /* a handle that can write may fix it now */
    *out = (coffer_durability)db->env->durability;
    cf_registry_unlock();
    return COFFER_OK;
}

COFFER_API coffer_status coffer_db_sync(coffer_db *db)
{
    coffer_status st = check_db(db, "coffer_db_sync");
    if (st != COFFER_OK)
        return st;
    if (db->env->read_only || db->env->memory_id)
        return COFFER_OK;
    int rc = mdb_env_sync(db->env->mdb, 1);
    if (rc == EACCES) /* LMDB's answer for an environment opened read-only */
        return COFFER_OK;
    if (rc != 0)
        return cf_error(COFFER_ERR_IO, "coffer_db_sync: flushing '%s' failed: %s", db->env->path, mdb_strerror(rc));
    return COFFER_OK;
}
