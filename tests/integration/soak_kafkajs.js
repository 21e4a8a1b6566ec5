'use strict';
/*
 * The kafkajs producer of test_soak.py.
 *
 *   node soak_kafkajs.js BROKERS TOPIC PARTITIONS RATE STOP_FILE
 *
 * An idempotent kafkajs 2.2.4 producer (acks=-1, one request in flight, as
 * kafkajs demands of idempotence) offering about RATE messages a second,
 * values "kjs-<n>", partition n % PARTITIONS, in sends of a few messages
 * awaited one after the other, until STOP_FILE exists. One JSON line on
 * stdout per message:
 *   ["A", partition, offset, value, time]  send() resolved (offset -1 when
 *                                          its result names no offset for
 *                                          the partition)
 *   ["F", value, error, time]              send() rejected
 * and at the end ["E", sent, 0]. Times are seconds since the epoch.
 */
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

function out(line) {
  process.stdout.write(JSON.stringify(line) + '\n');
}

async function main() {
  const [brokers, topic, partsArg, rateArg, stopFile] = process.argv.slice(2);
  const partitions = parseInt(partsArg, 10);
  const rate = parseFloat(rateArg);
  const kafka = new Kafka({
    clientId: 'soak-kafkajs',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 3000 },
  });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const perSend = 5;
  const period = (1000 * perSend) / rate;
  let n = 0;
  let next = Date.now();
  while (!fs.existsSync(stopFile)) {
    const messages = [];
    for (let i = 0; i < perSend; i++, n++) {
      messages.push({ partition: n % partitions, value: `kjs-${n}` });
    }
    try {
      const res = await producer.send({ topic, acks: -1, messages });
      const base = new Map(res.map(r => [r.partition, parseInt(r.baseOffset, 10)]));
      const seen = new Map();
      const t = Date.now() / 1000;
      for (const m of messages) {
        const k = seen.get(m.partition) || 0;
        seen.set(m.partition, k + 1);
        const b = base.has(m.partition) ? base.get(m.partition) : -1;
        out(['A', m.partition, b < 0 ? -1 : b + k, m.value, t]);
      }
    } catch (e) {
      const t = Date.now() / 1000;
      for (const m of messages) {
        out(['F', m.value, String(e && e.message ? e.message : e), t]);
      }
    }
    next += period;
    const wait = next - Date.now();
    if (wait > 0) {
      await new Promise(r => setTimeout(r, wait));
    } else {
      next = Date.now();
    }
  }
  out(['E', n, 0]);
  await producer.disconnect();
}

main().catch(e => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
