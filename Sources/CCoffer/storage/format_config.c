/* format_config — choosing the file format of a new file (experimental:
 * coffer.h, "Experimental"). */
#define COFFER_EXPERIMENTAL_API
#include "storage/config.h"
#include "storage/handles.h"
#include "util/error.h"

COFFER_API coffer_status coffer_config_set_storage_format(coffer_config *c, uint32_t format)
{
    CHECK_CONFIG(c, "coffer_config_set_storage_format");
    if (format != 0 && format != COFFER_STORAGE_FORMAT_RECORDS && format != COFFER_STORAGE_FORMAT_CLUSTERS)
        return cf_error(COFFER_ERR_INVALID_ARGUMENT,
                        "coffer_config_set_storage_format: format %u is not one this library writes (0 for the default, "
                        "%u for records, %u for clusters)",
                        format, COFFER_STORAGE_FORMAT_RECORDS, COFFER_STORAGE_FORMAT_CLUSTERS);
    c->storage_format = format;
    return COFFER_OK;
}
