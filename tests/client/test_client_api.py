"""libsamsa's consumer flow control (pause, resume, lag) and admin calls
(configs, partitions, records, groups), its delivery reports, and its handles' lifetimes
(a producer closed while threads produce, calls on closed handles, a consumer's close
timeout with the broker gone) against the real samsa-broker: each
case runs one scenario of tests/client/api_scenarios.c, which checks what the
library returns and exits non-zero at the first surprise.

    test_client_api.py SAMSA_BROKER API_SCENARIOS [-k CASE]
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from broker import main  # noqa: E402

SCENARIOS = None
CONFIG = {
    "group.initial.rebalance.delay.ms": "0",
    "offsets.topic.num.partitions": "1",
    "num.partitions": "1",
}


def run(t, name):
    b = t.broker(config=CONFIG)
    p = subprocess.run([SCENARIOS, b.bootstrap, name], capture_output=True, text=True,
                       timeout=120)
    print(p.stdout, end="")
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s" % (name, p.returncode, p.stderr[-3000:]))


def case_pause_resume_and_lag(t):
    run(t, "pause_resume_lag")


def case_describe_and_alter_configs(t):
    run(t, "admin_configs")


def case_create_partitions_more_then_fewer_refused(t):
    run(t, "admin_partitions")


def case_delete_records_and_list_offsets(t):
    run(t, "admin_records")


def case_list_describe_offsets_and_delete_groups(t):
    run(t, "admin_groups")


def case_delivery_reports_carry_each_records_offset(t):
    run(t, "delivery_offsets")


def case_closing_a_producer_while_threads_produce_and_calls_on_closed_handles(t):
    run(t, "close_during_produce")


def run_killing_the_broker(t, name):
    """Runs scenario `name`, kills the broker when it prints "ready", then
    lets it go on (a line on its stdin)."""
    b = t.broker(config=CONFIG)
    p = subprocess.Popen([SCENARIOS, b.bootstrap, name], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        if line.strip() != "ready":
            p.kill()
            raise AssertionError("%s: %r\n%s" % (name, line, p.stderr.read()[-3000:]))
        b.kill()  # the coordinator (the only broker) is gone
        out, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    print(out, end="")
    if p.returncode != 0:
        raise AssertionError("%s: exit %d\n%s" % (name, p.returncode, err[-3000:]))


def case_consumer_close_keeps_its_timeout_with_the_broker_gone(t):
    run_killing_the_broker(t, "close_timeout")


def case_every_broker_down_reaches_the_error_callback(t):
    run_killing_the_broker(t, "all_brokers_down")


def case_partitions_of_one_leader_are_read_in_turn(t):
    run(t, "fair_fetch")


def case_statistics_partitioner_purge_in_flight_and_offset_store(t):
    run(t, "hooks")


def case_delivery_reports_carry_log_append_time(t):
    run(t, "delivery_times")


def case_regex_subscription_takes_a_topic_created_later(t):
    run(t, "regex")

if __name__ == "__main__":
    SCENARIOS = os.path.abspath(sys.argv.pop(2))
    sys.exit(main([case_pause_resume_and_lag,
                   case_describe_and_alter_configs,
                   case_create_partitions_more_then_fewer_refused,
                   case_delete_records_and_list_offsets,
                   case_list_describe_offsets_and_delete_groups,
                   case_delivery_reports_carry_each_records_offset,
                   case_closing_a_producer_while_threads_produce_and_calls_on_closed_handles,
                   case_consumer_close_keeps_its_timeout_with_the_broker_gone,
                   case_every_broker_down_reaches_the_error_callback,
                   case_partitions_of_one_leader_are_read_in_turn,
                   case_statistics_partitioner_purge_in_flight_and_offset_store,
                   case_delivery_reports_carry_log_append_time,
                   case_regex_subscription_takes_a_topic_created_later]))
