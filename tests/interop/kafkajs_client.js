'use strict';
/*
 * The kafkajs side of test_kafkajs.py.
 *
 *   node kafkajs_client.js BROKER TOPIC DELETED_TOPIC COUNT BASE_TS
 *
 * Creates TOPIC (3 partitions) and DELETED_TOPIC with the admin client,
 * creates TOPIC again, reads metadata and offsets, sends COUNT gzip
 * messages with acks=-1 (message j: key "kjs-<j>", partition j % 3,
 * timestamp BASE_TS + j, a header on every fifth), reads the offsets again
 * (also by timestamp), deletes DELETED_TOPIC, and prints one JSON object
 * with what each call returned. Any exception: message on stderr, exit 1.
 */
const { Kafka, CompressionTypes, logLevel } = require('kafkajs');

function valueOf(j) {
  return `value-${j}-` + 'gzip me '.repeat(j % 40);
}

async function main() {
  const [broker, topic, deletedTopic, countArg, baseArg] = process.argv.slice(2);
  const count = parseInt(countArg, 10);
  const base = parseInt(baseArg, 10);
  const kafka = new Kafka({
    clientId: 'it-kafkajs',
    brokers: [broker],
    logLevel: logLevel.ERROR,
    connectionTimeout: 5000,
    requestTimeout: 15000,
    retry: { retries: 3 },
  });
  const out = {};
  const admin = kafka.admin();
  await admin.connect();
  out.created = await admin.createTopics({
    topics: [
      { topic, numPartitions: 3, replicationFactor: 1 },
      { topic: deletedTopic, numPartitions: 1, replicationFactor: 1 },
    ],
    waitForLeaders: true,
    timeout: 10000,
  });
  out.createdAgain = await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 1 }],
    waitForLeaders: true,
  });
  out.listed = await admin.listTopics();
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  out.metadata = md.topics.map(t => ({
    name: t.name,
    partitions: t.partitions.map(p => ({
      partitionId: p.partitionId,
      leader: p.leader,
      replicas: p.replicas,
      isr: p.isr,
      partitionErrorCode: p.partitionErrorCode,
    })),
  }));
  out.offsetsBefore = await admin.fetchTopicOffsets(topic);

  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  out.acks = [];
  const perSend = 500;
  for (let i = 0; i < count; i += perSend) {
    const messages = [];
    for (let j = i; j < Math.min(count, i + perSend); j++) {
      const m = { key: `kjs-${j}`, value: valueOf(j), partition: j % 3, timestamp: String(base + j) };
      if (j % 5 === 0) {
        m.headers = { h: `x${j}` };
      }
      messages.push(m);
    }
    const res = await producer.send({ topic, compression: CompressionTypes.GZIP, acks: -1, messages });
    out.acks.push(res.map(r => ({ partition: r.partition, errorCode: r.errorCode, baseOffset: r.baseOffset,
      count: messages.filter(m => m.partition === r.partition).length })));
  }
  await producer.disconnect();

  out.offsetsAfter = await admin.fetchTopicOffsets(topic);
  out.offsetsByTime = await admin.fetchTopicOffsetsByTimestamp(topic, base + 3 * 100 + 1);
  await admin.deleteTopics({ topics: [deletedTopic], timeout: 10000 });
  out.listedAfterDelete = await admin.listTopics();
  await admin.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch(e => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
