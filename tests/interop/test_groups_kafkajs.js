'use strict';
/*
 * The kafkajs side of test_groups_kafkajs.py.
 *
 *   node test_groups_kafkajs.js BROKER TOPIC GROUP COUNT
 *
 * Creates TOPIC (3 partitions), starts consumers c1 and c2 of GROUP
 * (eachMessage, offsets committed after every message), and produces COUNT
 * messages "m-<j>" to partition j % 3 in small chunks over a few seconds.
 * After a third of them c3 joins the group; once c3 has been assigned a
 * partition and consumed from it, and two thirds are produced, c3
 * disconnects (leaves the group). When every message has been consumed
 * the consumers disconnect and one JSON object is printed:
 *   { consumed: [[consumer, partition, offset, value], ...],
 *     joins: [{ consumer, member, leader, partitions }] (in join order, up
 *            to the moment c1 and c2 are stopped),
 *     committed: [{ partition, offset }] }
 * Any exception: message on stderr, exit 1.
 */
const { Kafka, logLevel } = require('kafkajs');

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function waitFor(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(50);
  }
}

async function main() {
  const [broker, topic, groupId, countArg] = process.argv.slice(2);
  const count = parseInt(countArg, 10);
  const kafka = new Kafka({
    clientId: 'grp-kafkajs',
    brokers: [broker],
    logLevel: logLevel.ERROR,
    connectionTimeout: 5000,
    requestTimeout: 30000,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  await admin.disconnect();

  const consumed = [];
  const joins = [];
  const consumers = {};
  const start = async name => {
    const c = kafka.consumer({
      groupId,
      sessionTimeout: 10000,
      rebalanceTimeout: 20000,
      heartbeatInterval: 300,
      maxWaitTimeInMs: 200,
    });
    c.on(c.events.GROUP_JOIN, e => {
      joins.push({
        consumer: name,
        member: e.payload.memberId,
        leader: e.payload.isLeader,
        partitions: (e.payload.memberAssignment[topic] || []).slice().sort(),
      });
    });
    c.on(c.events.CRASH, e => {
      process.stderr.write(`${name} crashed: ${e.payload.error && e.payload.error.stack}\n`);
    });
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      autoCommitThreshold: 1,
      eachMessage: async ({ partition, message }) => {
        consumed.push([name, partition, message.offset, message.value.toString()]);
      },
    });
    consumers[name] = c;
  };
  const assigned = name => {
    const mine = joins.filter(j => j.consumer === name);
    return mine.length > 0 ? mine[mine.length - 1].partitions : [];
  };

  await start('c1');
  await start('c2');
  await waitFor(() => assigned('c1').length + assigned('c2').length === 3 &&
                assigned('c1').length > 0 && assigned('c2').length > 0,
                30000, 'c1 and c2 to share the partitions');

  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const chunk = 30;
  let sent = 0;
  let c3State = 'none';
  while (sent < count) {
    const messages = [];
    for (let j = sent; j < Math.min(count, sent + chunk); j++) {
      messages.push({ partition: j % 3, value: `m-${j}` });
    }
    await producer.send({ topic, acks: -1, messages });
    sent += messages.length;
    if (c3State === 'none' && sent >= count / 3) {
      await start('c3');
      c3State = 'started';
    }
    if (c3State === 'started' && assigned('c3').length > 0 &&
        consumed.some(m => m[0] === 'c3') && sent >= (2 * count) / 3) {
      await consumers.c3.disconnect();
      c3State = 'left';
    }
    await sleep(60);
  }
  await producer.disconnect();
  // c3 leaves once it has taken part, even if the produce was quick
  await waitFor(() => c3State !== 'started' || consumed.some(m => m[0] === 'c3'), 60000,
                'c3 to consume');
  if (c3State === 'started') {
    await consumers.c3.disconnect();
    c3State = 'left';
  }
  const distinct = () => new Set(consumed.map(m => m[3])).size;
  await waitFor(() => distinct() >= count, 90000, 'every message to be consumed');
  // a short grace period lets a duplicate show up before the consumers stop
  await sleep(1000);
  // The joins reported are those before the consumers stop: once c1 has
  // left, c2 may rejoin alone and take every partition before it stops too.
  const joinsBeforeStop = joins.slice();
  await consumers.c1.disconnect();
  await consumers.c2.disconnect();

  const admin2 = kafka.admin();
  await admin2.connect();
  const committed = await admin2.fetchOffsets({ groupId, topics: [topic] });
  await admin2.disconnect();
  process.stdout.write(JSON.stringify({
    consumed,
    joins: joinsBeforeStop,
    committed: committed[0].partitions.map(p => ({ partition: p.partition, offset: p.offset })),
  }) + '\n');
}

main().catch(e => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
