'use strict';
/*
 * The kafkajs side of test_configs_kafkajs.py.
 *
 *   node configs_kafkajs.js BROKER TOPIC
 *
 * With the admin client: creates TOPIC (2 partitions) with topic configs,
 * describes its configs, alters them (AlterConfigs: the whole set is
 * replaced), describes them again, tries a bad value (the error is
 * recorded), produces 100 messages to partition 0, deletes the records
 * below offset 40 (deleteTopicRecords: DeleteRecords) and then up to the
 * high watermark (offset -1) of partition 1, and reads the offsets. Prints
 * one JSON object with what each call returned. Any other exception:
 * message on stderr, exit 1.
 */
const { Kafka, ConfigResourceTypes, logLevel } = require('kafkajs');

function entries(described) {
  const out = {};
  for (const r of described.resources) {
    for (const e of r.configEntries) {
      out[e.configName] = { value: e.configValue, source: e.configSource, isDefault: e.isDefault };
    }
  }
  return out;
}

async function main() {
  const [broker, topic] = process.argv.slice(2);
  const kafka = new Kafka({
    clientId: 'it-kafkajs-configs',
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
    topics: [{
      topic,
      numPartitions: 2,
      replicationFactor: 1,
      configEntries: [
        { name: 'retention.ms', value: '7200000' },
        { name: 'cleanup.policy', value: 'compact,delete' },
      ],
    }],
    waitForLeaders: true,
  });
  const resource = { type: ConfigResourceTypes.TOPIC, name: topic };
  out.before = entries(await admin.describeConfigs({ resources: [resource], includeSynonyms: false }));
  const altered = await admin.alterConfigs({
    validateOnly: false,
    resources: [{
      ...resource,
      configEntries: [
        { name: 'retention.bytes', value: '7000000' },
        { name: 'delete.retention.ms', value: '1000' },
        { name: 'min.compaction.lag.ms', value: '5' },
        { name: 'max.message.bytes', value: '500000' },
      ],
    }],
  });
  out.altered = altered.resources.map(r => ({ errorCode: r.errorCode, name: r.resourceName }));
  out.after = entries(await admin.describeConfigs({
    resources: [{ ...resource, configNames: ['retention.bytes', 'delete.retention.ms',
      'min.compaction.lag.ms', 'max.message.bytes', 'retention.ms', 'cleanup.policy'] }],
    includeSynonyms: true,
  }));
  try {
    await admin.alterConfigs({
      validateOnly: false,
      resources: [{ ...resource, configEntries: [{ name: 'retention.ms', value: 'later' }] }],
    });
    out.badAlter = 'accepted';
  } catch (e) {
    out.badAlter = { name: e.name, type: e.type, message: e.message };
  }
  out.validateOnly = (await admin.alterConfigs({
    validateOnly: true,
    resources: [{ ...resource, configEntries: [{ name: 'retention.ms', value: '1' }] }],
  })).resources.map(r => r.errorCode);
  out.afterValidateOnly = entries(await admin.describeConfigs({
    resources: [{ ...resource, configNames: ['retention.ms'] }], includeSynonyms: false,
  }));

  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = [];
  for (let j = 0; j < 100; j++) {
    messages.push({ key: `k${j}`, value: `v${j}`, partition: j < 60 ? 0 : 1 });
  }
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '40' }] });
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '-1' }] });
  out.offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch(e => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
