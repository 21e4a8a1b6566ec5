/*
 * samsa-broker: operator log lines on stderr.
 *
 *   2026-11-29T12:00:00.123Z INFO  [log.c:120] recovered my-topic-0: ...
 *
 * One line per call, written with a single write(2) so lines from several
 * threads never interleave. The level threshold is set once at start-up.
 * @locality any thread
 */
#ifndef SAMSA_BROKER_LOGGING_H
#define SAMSA_BROKER_LOGGING_H

enum br_level {
    BR_LOG_DEBUG = 0,
    BR_LOG_INFO = 1,
    BR_LOG_WARN = 2,
    BR_LOG_ERROR = 3,
};

/* Set at start-up, before any thread starts; defaults to INFO. */
void br_logging_set_level(enum br_level level);
/* "debug", "info", "warn", "error" -> level; -1 if unknown. */
int br_logging_parse_level(const char *name);

__attribute__((format(printf, 4, 5))) void br_logmsg(enum br_level level, const char *file,
                                                     int line, const char *fmt, ...);

#define br_debug(...) br_logmsg(BR_LOG_DEBUG, __FILE__, __LINE__, __VA_ARGS__)
#define br_info(...) br_logmsg(BR_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
#define br_warn(...) br_logmsg(BR_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define br_error(...) br_logmsg(BR_LOG_ERROR, __FILE__, __LINE__, __VA_ARGS__)

#endif
