'use strict';
/*
 * The kafkajs side of test_acls.py: kafkajs 2.2.4's admin ACL calls
 * (createAcls, describeAcls, deleteAcls: CreateAcls, DescribeAcls and
 * DeleteAcls v0-1) over mutual TLS.
 *
 *   node acl_kafkajs.js BROKER CA CERT KEY create|describe|delete TYPE NAME PATTERN \
 *       PRINCIPAL OPERATION PERMISSION
 *
 * TYPE, PATTERN, OPERATION, PERMISSION: kafkajs's enum keys (TOPIC, GROUP,
 * CLUSTER, ANY; LITERAL, PREFIXED, MATCH, ANY; READ, WRITE, ..., ANY;
 * ALLOW, DENY, ANY), any case; NAME and PRINCIPAL "-" for none in a filter
 * (undefined: kafkajs refuses null there).
 * Prints one JSON line {error: null or Kafka's error name, message, acls:
 * [[type, name, pattern, principal, host, operation, permission], ...]}
 * (describe: found; delete: deleted). Exit 0 when answered, 1 otherwise.
 */
const fs = require('fs');
const {
  Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes,
} = require('kafkajs');

function key(table, name) {
  const k = name.toUpperCase();
  if (!(k in table)) {
    throw new Error(`unknown value ${name}`);
  }
  return table[k];
}

function nameOf(table, value) {
  return Object.keys(table).find((k) => table[k] === value) || String(value);
}

function row(resource, acl) {
  return [nameOf(AclResourceTypes, resource.resourceType), resource.resourceName,
    nameOf(ResourcePatternTypes, resource.resourcePatternType), acl.principal, acl.host,
    nameOf(AclOperationTypes, acl.operation), nameOf(AclPermissionTypes, acl.permissionType)];
}

/* Kafka's error name of what kafkajs threw: a protocol error's type, or the
 * first of an aggregate's. */
function errorName(e) {
  if (e.type) {
    return e.type;
  }
  for (const x of e.errors || []) {
    if (x && x.type) {
      return x.type;
    }
  }
  if (e.cause && e.cause.type) {
    return e.cause.type;
  }
  return e.name;
}

async function main() {
  const [broker, ca, cert, keyFile, verb, type, name, pattern, principal, op, perm] =
    process.argv.slice(2);
  const kafka = new Kafka({
    clientId: 'it-kafkajs-acls',
    brokers: [broker],
    ssl: {
      ca: [fs.readFileSync(ca)], cert: fs.readFileSync(cert), key: fs.readFileSync(keyFile),
    },
    logLevel: logLevel.NOTHING,
    connectionTimeout: 5000,
    requestTimeout: 15000,
    retry: { retries: 1, initialRetryTime: 100 },
  });
  const binding = {
    resourceType: key(AclResourceTypes, type),
    resourceName: name === '-' ? undefined : name,
    resourcePatternType: key(ResourcePatternTypes, pattern),
    principal: principal === '-' ? undefined : principal,
    host: verb === 'create' ? '*' : undefined,
    operation: key(AclOperationTypes, op),
    permissionType: key(AclPermissionTypes, perm),
  };
  const admin = kafka.admin();
  await admin.connect();
  let answer;
  try {
    if (verb === 'create') {
      await admin.createAcls({ acl: [binding] });
      answer = { error: null, message: null, acls: [] };
    } else if (verb === 'describe') {
      const { resources } = await admin.describeAcls(binding);
      const acls = [];
      for (const r of resources) {
        for (const a of r.acls) {
          acls.push(row(r, a));
        }
      }
      answer = { error: null, message: null, acls };
    } else {
      const { filterResponses } = await admin.deleteAcls({ filters: [binding] });
      const f = filterResponses[0];
      const acls = (f.matchingAcls || []).map((a) => row(a, a));
      answer = { error: f.errorCode ? String(f.errorCode) : null, message: f.errorMessage, acls };
    }
  } catch (e) {
    answer = { error: errorName(e), message: e.message, acls: [] };
  } finally {
    await admin.disconnect();
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}

main().catch((e) => {
  process.stderr.write(`acl_kafkajs.js: ${e.stack || e}\n`);
  process.exit(1);
});
