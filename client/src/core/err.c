/* Error names and sentences, the wire's error codes, the clocks, and the
 * version. */
#include <time.h>

#include "core/internal.h"

/* Weak: the unit tests' model-broker driver (tests/client/test_client.c)
 * replaces it with a fake clock, so that a detached client's timers,
 * backoffs and deadlines all read the same time the test sets. Not exported
 * from libsamsa.so (libsamsa.map); nothing else defines it. */
__attribute__((weak)) int64_t sc_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t sc_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int sc_err_from_wire(int16_t wire)
{
    return wire == -1 ? SAMSA_ERR_UNKNOWN : (int)wire;
}

const char *samsa_version(void)
{
    return SAMSA_VERSION_STR;
}

static const struct {
    int code;
    const char *name;
    const char *str;
} local_errs[] = {
    {SAMSA_ERR_UNKNOWN, "UNKNOWN_SERVER_ERROR", "Broker: unknown server error"},
    {SAMSA_ERR_INVALID_ARG, "INVALID_ARG", "Local: invalid argument"},
    {SAMSA_ERR_UNKNOWN_CONFIG, "UNKNOWN_CONFIG", "Local: unknown configuration key"},
    {SAMSA_ERR_INVALID_CONFIG, "INVALID_CONFIG", "Local: invalid configuration value"},
    {SAMSA_ERR_QUEUE_FULL, "QUEUE_FULL",
     "Local: producer queue full (serve delivery reports with samsa_producer_poll, then retry)"},
    {SAMSA_ERR_MSG_TOO_LARGE, "MSG_TOO_LARGE", "Local: record larger than message.max.bytes"},
    {SAMSA_ERR_TIMED_OUT, "TIMED_OUT", "Local: timed out"},
    {SAMSA_ERR_MSG_TIMED_OUT, "MSG_TIMED_OUT",
     "Local: record not delivered within message.timeout.ms"},
    {SAMSA_ERR_TRANSPORT, "TRANSPORT", "Local: broker connection failed"},
    {SAMSA_ERR_ALL_BROKERS_DOWN, "ALL_BROKERS_DOWN", "Local: no broker reachable"},
    {SAMSA_ERR_UNKNOWN_TOPIC, "UNKNOWN_TOPIC", "Local: unknown topic"},
    {SAMSA_ERR_UNKNOWN_PARTITION, "UNKNOWN_PARTITION", "Local: unknown partition"},
    {SAMSA_ERR_NOMEM, "NOMEM", "Local: out of memory"},
    {SAMSA_ERR_STATE, "STATE", "Local: not allowed in this state"},
    {SAMSA_ERR_PURGED, "PURGED", "Local: dropped at close before delivery"},
    {SAMSA_ERR_BAD_RESPONSE, "BAD_RESPONSE", "Local: undecodable response from a broker"},
    {SAMSA_ERR_UNSUPPORTED, "UNSUPPORTED", "Local: the broker lacks a needed API version"},
    {SAMSA_ERR_FATAL, "FATAL", "Local: fatal producer error"},
    {SAMSA_ERR_NOT_IMPLEMENTED, "NOT_IMPLEMENTED", "Local: not implemented in libsamsa yet"},
    {SAMSA_ERR_DESTROYED, "DESTROYED", "Local: handle is closing or closed"},
    {SAMSA_ERR_FENCED, "FENCED",
     "Local: fenced by a newer producer with the same transactional.id"},
    {SAMSA_ERR_SSL, "SSL", "Local: TLS handshake failed"},
    {SAMSA_ERR_MAX_POLL_EXCEEDED, "MAX_POLL_EXCEEDED",
     "Local: no poll within max.poll.interval.ms: the consumer left its group"},
};

int sc_err_public(int err)
{
    return err == KP_ERR_UNKNOWN_TOPIC_OR_PARTITION ? SAMSA_ERR_UNKNOWN_TOPIC : err;
}

const char *samsa_err_name(int err)
{
    if (err == SAMSA_OK) {
        return "NO_ERROR";
    }
    for (size_t i = 0; i < sizeof(local_errs) / sizeof(local_errs[0]); i++) {
        if (local_errs[i].code == err) {
            return local_errs[i].name;
        }
    }
    return err > 0 ? kp_err_name(err) : "UNKNOWN";
}

const char *samsa_err_str(int err)
{
    if (err == SAMSA_OK) {
        return "Success";
    }
    for (size_t i = 0; i < sizeof(local_errs) / sizeof(local_errs[0]); i++) {
        if (local_errs[i].code == err) {
            return local_errs[i].str;
        }
    }
    return err > 0 ? kp_err_str(err) : "Local: unknown error";
}
