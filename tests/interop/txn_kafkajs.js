// kafkajs 2.2.4's transactions against samsa-broker (test_txn_clients.py).
//
//   node txn_kafkajs.js BOOTSTRAP read TOPIC GROUP COUNT
//     a read_committed group member reads TOPIC from the start until COUNT
//     records came, then prints them as JSON lines {"offset":..,"value":..}
//   node txn_kafkajs.js BOOTSTRAP send-offsets TOPIC SRC GROUP TXN_ID OFFSET COMMIT
//     a transactional producer (idempotent, maxInFlightRequests 1) sends one
//     record to TOPIC and the offset OFFSET of SRC-0 for GROUP
//     (transaction.sendOffsets), then commits (COMMIT "commit") or aborts
const { Kafka, logLevel } = require("kafkajs");

const [bootstrap, cmd, ...args] = process.argv.slice(2);
const kafka = new Kafka({ clientId: "samsa-txn-kafkajs", brokers: [bootstrap],
                          logLevel: logLevel.ERROR, retry: { retries: 10 } });

async function read(topic, group, count) {
  const consumer = kafka.consumer({ groupId: group, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen.length} of ${count} in 60 s`)), 60000);
    consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({ offset: Number(message.offset), value: message.value.toString() });
        if (seen.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  for (const s of seen) console.log(JSON.stringify(s));
}

async function sendOffsets(topic, src, group, txnId, offset, commit) {
  const producer = kafka.producer({ transactionalId: txnId, idempotent: true,
                                    maxInFlightRequests: 1 });
  await producer.connect();
  const txn = await producer.transaction();
  await txn.send({ topic, messages: [{ value: `via-${offset}` }] });
  await txn.sendOffsets({ consumerGroupId: group,
                          topics: [{ topic: src, partitions: [{ partition: 0, offset: String(offset) }] }] });
  if (commit === "commit") await txn.commit(); else await txn.abort();
  await producer.disconnect();
  console.log(JSON.stringify({ done: commit }));
}

(async () => {
  if (cmd === "read") await read(args[0], args[1], Number(args[2]));
  else if (cmd === "send-offsets") await sendOffsets(...args.slice(0, 5), args[5]);
  else throw new Error(`unknown command ${cmd}`);
})().catch((e) => { console.error(`kafkajs: ${e.stack || e}`); process.exit(1); });
