/* samsa-broker: names Kafka gives rules to (see names.h). */
#include "base/names.h"

bool br_topic_name_valid(const char *name, size_t len)
{
    if (len == 0 || len > BR_TOPIC_MAX) {
        return false;
    }
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')) {
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}
