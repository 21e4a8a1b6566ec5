'use strict';
/*
 * kafkajs's consumer at its defaults, for tests/perf/consumer-defaults.
 *
 *   node consume_kafkajs.js BOOTSTRAP TOPIC COUNT TIMEOUT_S
 *
 * kafkajs consumes only as a group member: a fresh group subscribes to TOPIC
 * from the beginning (the one setting a fresh group needs to see old data)
 * and eachMessage counts until COUNT messages arrived or TIMEOUT_S passed.
 * Every other setting is kafkajs's default (maxBytes 10 MiB,
 * maxBytesPerPartition 1 MiB, minBytes 1, maxWaitTimeInMs 5000, auto-commit).
 * Throughput is from the group join (GROUP_JOIN) to the last message; the
 * time to join is reported on its own (join_s: the broker's
 * group.initial.rebalance.delay.ms is most of it). Prints one line of JSON;
 * exits 0 when COUNT messages arrived, 1 when not.
 */
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [bootstrap, topic, countArg, timeoutArg] = process.argv.slice(2);
  const count = parseInt(countArg, 10);
  const timeoutMs = parseFloat(timeoutArg) * 1000;
  const kafka = new Kafka({ clientId: 'consumer-defaults', brokers: [bootstrap], logLevel: logLevel.ERROR });
  const consumer = kafka.consumer({ groupId: `consumer-defaults-${process.pid}-${Date.now()}` });
  const now = () => Number(process.hrtime.bigint()) / 1e9;
  const cpu0 = process.cpuUsage();
  const tStart = now();
  let tJoin = null;
  let tLast = null;
  let got = 0;
  let bytes = 0;
  let finish;
  const done = new Promise(resolve => { finish = resolve; });
  const timer = setTimeout(() => finish(), timeoutMs);
  consumer.on(consumer.events.GROUP_JOIN, () => {
    if (tJoin === null) {
      tJoin = now();
    }
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (got >= count) {
        return;
      }
      got++;
      bytes += (message.value ? message.value.length : 0) + (message.key ? message.key.length : 0);
      if (got === count) {
        tLast = now();
        finish();
      }
    },
  });
  await done;
  clearTimeout(timer);
  if (tLast === null) {
    tLast = now();
  }
  const cpu = process.cpuUsage(cpu0);
  await consumer.disconnect();
  const t0 = tJoin === null ? tStart : tJoin;
  const elapsed = tLast - t0;
  process.stdout.write(JSON.stringify({
    client: 'kafkajs',
    complete: got >= count,
    msgs: got,
    bytes,
    elapsed_s: Math.round(elapsed * 1e6) / 1e6,
    msgs_per_s: elapsed > 0 ? Math.round((got / elapsed) * 10) / 10 : 0,
    join_s: tJoin === null ? null : Math.round((tJoin - tStart) * 1e3) / 1e3,
    client_cpu_s: Math.round((cpu.user + cpu.system) / 1e3) / 1e3,
  }) + '\n');
  if (got < count) {
    process.stderr.write(`consume_kafkajs.js: ${got} of ${count} messages before the deadline\n`);
    process.exit(1);
  }
  process.exit(0);
}

main().catch(e => {
  process.stderr.write(`consume_kafkajs.js: ${e.stack || e}\n`);
  process.exit(1);
});
