'use strict';
/*
 * The kafkajs side of test_sasl.py and test_tls.py.
 *
 *   node sasl_kafkajs.js BROKER MECHANISM USER PASSWORD TOPIC COUNT [CA [CERT KEY]]
 *
 * Authenticates with MECHANISM (plain, scram-sha-256, scram-sha-512: kafkajs
 * 2.2.4 sends SaslHandshake v1 and SaslAuthenticate; "-": no SASL), over TLS
 * when CA is given (the broker's certificate checked against it, CERT and
 * KEY presented for mutual TLS), sends COUNT messages
 * to TOPIC (made by the producer's first Metadata), reads them back from
 * the beginning without a group, prints one JSON object {values}. An
 * authentication failure prints {error: <the error's name>, message} and
 * exits 0, so the test can tell it from a crash. Anything else: message on
 * stderr, exit 1.
 */
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');
const { readValues } = require('./kafkajs_read');

async function main() {
  const [broker, mechanism, username, password, topic, countArg, ca, cert, key] =
    process.argv.slice(2);
  const count = parseInt(countArg, 10);
  let ssl;
  if (ca) {
    ssl = { ca: [fs.readFileSync(ca)] };
    if (cert) {
      ssl.cert = fs.readFileSync(cert);
      ssl.key = fs.readFileSync(key);
    }
  }
  const kafka = new Kafka({
    clientId: 'it-kafkajs-sasl',
    brokers: [broker],
    sasl: mechanism === '-' ? undefined : { mechanism, username, password },
    ssl,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    requestTimeout: 15000,
    retry: { retries: 2, initialRetryTime: 100 },
  });
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  try {
    await producer.connect();
  } catch (e) {
    process.stdout.write(JSON.stringify({ error: e.name, message: e.message }) + '\n');
    return;
  }
  const messages = [];
  for (let j = 0; j < count; j++) {
    messages.push({ value: `${mechanism}-${j}` });
  }
  await producer.send({ topic, acks: -1, messages });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `sasl-${mechanism}` });
  await consumer.connect();
  const values = await readValues(consumer, topic, count, 30000);
  await consumer.disconnect();
  process.stdout.write(JSON.stringify({ values }) + '\n');
}

main().catch((e) => {
  process.stderr.write(`${e.name}: ${e.message}\n`);
  process.exit(1);
});
