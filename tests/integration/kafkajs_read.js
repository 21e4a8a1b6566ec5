'use strict';
/*
 * What the kafkajs scripts of tests/integration share: a connected
 * consumer subscribed to `topic` from the beginning reads the values of
 * `count` messages (rejecting after timeoutMs with how many it read), then
 * stops.
 */
async function readValues(consumer, topic, count, timeoutMs) {
  await consumer.subscribe({ topic, fromBeginning: true });
  const values = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${values.length} of ${count}`)),
      timeoutMs);
    consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value.toString());
        if (values.length >= count) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.stop();
  return values;
}

module.exports = { readValues };
