/* samsa-broker: operator log lines (see logging.h). */
#define _POSIX_C_SOURCE 200809L

#include "base/logging.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Written once at start-up before threads exist, read-only afterwards. */
static enum br_level threshold = BR_LOG_INFO;

void br_logging_set_level(enum br_level level)
{
    threshold = level;
}

int br_logging_parse_level(const char *name)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(name, names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

void br_logmsg(enum br_level level, const char *file, int line, const char *fmt, ...)
{
    static const char *const tags[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    if (level < threshold) {
        return;
    }
    char buf[2048];
    struct timespec ts;
    struct tm tm;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    (void)gmtime_r(&ts.tv_sec, &tm);
    const char *base = strrchr(file, '/');
    base = base != NULL ? base + 1 : file;
    int n = snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s [%s:%d] ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L, tags[level], base, line);
    if (n < 0) {
        return;
    }
    size_t used = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + used, sizeof buf - used, fmt, ap);
    va_end(ap);
    if (m > 0) {
        used += (size_t)m < sizeof buf - used ? (size_t)m : sizeof buf - used - 1;
    }
    if (used >= sizeof buf - 1) {
        used = sizeof buf - 2;
    }
    buf[used++] = '\n';
    ssize_t w = write(STDERR_FILENO, buf, used);
    (void)w; /* nothing sensible to do when stderr is gone */
}
