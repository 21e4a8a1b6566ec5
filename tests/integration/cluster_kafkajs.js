'use strict';
/*
 * The kafkajs side of test_cluster_clients.py.
 *
 *   node cluster_kafkajs.js BROKERS TOPIC GROUP COUNT
 *
 * Against a cluster (BROKERS comma-separated): creates TOPIC with 3
 * partitions and replication factor 3 (waiting for the leaders), sends
 * COUNT messages with acks=-1 (key "k<j>", value "v<j>"), then a consumer
 * of GROUP reads them back from the beginning and commits; prints one JSON
 * object: the created flag, the metadata (leader, replicas, ISR), the base
 * offsets acknowledged, the values read and the offsets committed. Any
 * exception: message on stderr, exit 1.
 */
const { Kafka, logLevel } = require('kafkajs');
const { readValues } = require('./kafkajs_read');

async function main() {
  const [brokers, topic, group, countArg] = process.argv.slice(2);
  const count = parseInt(countArg, 10);
  const kafka = new Kafka({
    clientId: 'it-kafkajs-cluster',
    brokers: brokers.split(','),
    logLevel: logLevel.ERROR,
    connectionTimeout: 5000,
    requestTimeout: 30000,
    retry: { retries: 10 },
  });
  const out = {};
  const admin = kafka.admin();
  await admin.connect();
  out.created = await admin.createTopics({
    topics: [{ topic, numPartitions: 3, replicationFactor: 3 }],
    waitForLeaders: true,
    timeout: 30000,
  });
  const md = await admin.fetchTopicMetadata({ topics: [topic] });
  out.metadata = md.topics[0].partitions.map(p => ({
    partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr,
  }));
  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let j = 0; j < count; j++) {
    messages.push({ key: `k${j}`, value: `v${j}` });
  }
  const sent = await producer.send({ topic, acks: -1, messages });
  out.acked = sent.map(r => ({ partition: r.partition, baseOffset: r.baseOffset }));
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000 });
  await consumer.connect();
  const values = await readValues(consumer, topic, count, 90000);
  await consumer.disconnect();
  out.values = values;
  const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  out.committed = committed[0].partitions.map(p => ({
    partition: p.partition, offset: p.offset,
  }));
  await admin.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch(e => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
