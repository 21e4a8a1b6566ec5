#!/usr/bin/env bash
# capture.sh: records request frames from real Kafka clients into
# tests/protocol/vectors/<client>/, the byte-exact vectors of test_vectors.c.
#
# For each client it starts kp-capture (built from this folder) on a free port
# of 127.0.0.1, runs the client against it (one at a time, each run bounded by
# a timeout), then copies the first frame of every API and version, and one
# Produce frame per compression codec, into the vectors folder under a stable
# name. Clients:
#   kcat 1.7.1 (librdkafka 2.0.2)  produce with -z none|gzip|snappy|lz4|zstd,
#                                  consume (-C -e), metadata (-L), a group (-G),
#                                  an idempotent producer
#   kafka-python 2.0.2             Debian's /usr/bin/python3; producer with every
#                                  codec, consumer by assign() and by group, admin
#   kafkajs 2.2.4                  installed with npm into a temporary folder, with
#                                  the codec packages kafkajs-snappy 1.1.0 and
#                                  kafkajs-lz4 1.2.1 (its lz4 0.6.5 runs as pure
#                                  JavaScript when its native part is not built), and
#                                  @kafkajs/zstd 0.1.1 if it builds, else a zstd codec
#                                  over zstd-codec 0.1.5 (pure JavaScript); producer
#                                  with every codec that loads, consumer by group,
#                                  admin, an idempotent producer
#
# Every record produced is keyed "<client>-<codec>-<i>" (i = 0..2) with the value
# "<client> <codec> record <i> " followed by PAYLOAD below, and one header
# "samsa-header" = "<codec>"; test_vectors.c checks them.
#
# Usage: tests/protocol/capture/capture.sh [BUILD_DIR]
#   BUILD_DIR  a meson build directory of this repository (default build/capture;
#              configured if missing). Needs kcat, python3-kafka (with
#              python3-snappy, python3-lz4, python3-zstandard), nodejs and npm.
# The raw captures and logs stay in a temporary folder, printed at the end.
set -euo pipefail

case "${1:-}" in
    -h | --help)
        sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
        exit 0
        ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
builddir=${1:-build/capture}
case "$builddir" in
    /*) ;;
    *) builddir="$root/$builddir" ;;
esac
vectors="$root/tests/protocol/vectors"
py=/usr/bin/python3
topic=samsa-vectors
payload="samsa vector payload samsa vector payload samsa vector payload samsa vector payload"
payload="$payload $payload"
export CAPTURE_TOPIC="$topic" CAPTURE_PAYLOAD="$payload"

work=$(mktemp -d /tmp/samsa-capture.XXXXXX)
raw="$work/raw"
mkdir -p "$raw"
cap_pid=""
port=""

log() {
    printf 'capture: %s\n' "$*" >&2
}

stop_capture() {
    if [ -n "$cap_pid" ]; then
        kill "$cap_pid" 2>/dev/null || true
        wait "$cap_pid" 2>/dev/null || true
        cap_pid=""
    fi
}
trap stop_capture EXIT

# start_capture TAG: a fresh kp-capture writing to $raw/TAG; sets $port.
start_capture() {
    local tag=$1
    "$kp_capture" 0 "$raw" "$tag" >"$work/$tag.port" 2>"$work/$tag.log" &
    cap_pid=$!
    local i
    for i in $(seq 1 50); do
        port=$(sed -n 's/^kp-capture listening on 127\.0\.0\.1:\([0-9][0-9]*\)$/\1/p' \
            "$work/$tag.port")
        if [ -n "$port" ]; then
            log "$tag: kp-capture on 127.0.0.1:$port (pid $cap_pid)"
            return 0
        fi
        sleep 0.1
    done
    log "$tag: kp-capture did not start; see $work/$tag.log"
    exit 1
}

# run SECONDS CMD...: runs a client with a time limit; a client that had to be
# stopped by the limit is fine (group consumers run until stopped).
run() {
    local secs=$1
    shift
    local rc=0
    timeout -s INT -k 5 "$secs" "$@" || rc=$?
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
        log "exit status $rc: $*"
    fi
}

value_of() { # CLIENT CODEC I
    printf '%s %s record %s %s' "$1" "$2" "$3" "$payload"
}

# ----------------------------------------------------------------- kp-capture
log "building kp-capture in $builddir"
if [ ! -f "$builddir/build.ninja" ]; then
    meson setup "$builddir" "$root" >/dev/null
fi
ninja -C "$builddir" tests/protocol/capture/kp-capture >/dev/null
kp_capture="$builddir/tests/protocol/capture/kp-capture"

# ----------------------------------------------------------------------- kcat
capture_kcat() {
    local b z i
    start_capture kcat
    b="127.0.0.1:$port"
    for z in none gzip snappy lz4 zstd; do
        for i in 0 1 2; do
            printf 'kcat-%s-%s\t%s\n' "$z" "$i" "$(value_of kcat "$z" "$i")"
        done >"$work/kcat-$z.txt"
        run 30 kcat -b "$b" -P -t "$topic" -K '\t' -z "$z" -H "samsa-header=$z" \
            -l "$work/kcat-$z.txt"
    done
    run 30 kcat -b "$b" -C -t "$topic" -e -f '%k %h\n' >"$work/kcat-consumed.txt"
    run 30 kcat -b "$b" -L >/dev/null
    # No -o: the group's committed offsets are asked for (OffsetFetch).
    run 8 kcat -b "$b" -G samsa-kcat-group -X auto.offset.reset=earliest "$topic" >/dev/null
    stop_capture
    log "kcat consumed $(wc -l <"$work/kcat-consumed.txt") records"

    start_capture kcat-idempotent
    printf 'kcat-idempotent-0\t%s\n' "$(value_of kcat idempotent 0)" >"$work/kcat-idem.txt"
    run 30 kcat -b "127.0.0.1:$port" -P -t "$topic" -K '\t' -X enable.idempotence=true \
        -H samsa-header=idempotent -l "$work/kcat-idem.txt"
    stop_capture
}

# --------------------------------------------------------------- kafka-python
capture_kafka_python() {
    start_capture kafka-python
    CAPTURE_PORT=$port run 120 "$py" - <<'EOF'
import os
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

bootstrap = "127.0.0.1:" + os.environ["CAPTURE_PORT"]
topic = os.environ["CAPTURE_TOPIC"]
payload = os.environ["CAPTURE_PAYLOAD"]

for codec in [None, "gzip", "snappy", "lz4", "zstd"]:
    name = codec or "none"
    p = KafkaProducer(bootstrap_servers=bootstrap, client_id="kafka-python",
                      compression_type=codec, linger_ms=200)
    for i in range(3):
        p.send(topic, key=("kafka-python-%s-%d" % (name, i)).encode(),
               value=("kafka-python %s record %d %s" % (name, i, payload)).encode(),
               headers=[("samsa-header", name.encode())])
    p.flush()
    p.close()

c = KafkaConsumer(bootstrap_servers=bootstrap, client_id="kafka-python",
                  auto_offset_reset="earliest", enable_auto_commit=False,
                  consumer_timeout_ms=3000)
c.assign([TopicPartition(topic, 0)])
n = sum(1 for _ in c)
c.close()
print("kafka-python: assign() consumed %d records" % n)

c = KafkaConsumer(topic, bootstrap_servers=bootstrap, client_id="kafka-python",
                  group_id="samsa-kafka-python-group", auto_offset_reset="earliest",
                  auto_commit_interval_ms=500, consumer_timeout_ms=4000)
n = sum(1 for _ in c)
c.close()
print("kafka-python: group consumed %d records" % n)

a = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python")
a.create_topics([NewTopic("samsa-admin", 1, 1)])
a.delete_topics(["samsa-admin"])
a.close()
EOF
    stop_capture
}

# -------------------------------------------------------------------- kafkajs
capture_kafkajs() {
    local node="$work/node"
    mkdir -p "$node"
    (cd "$node" && npm init -y >/dev/null)
    npm_add() {
        (cd "$node" && timeout 300 npm install --no-audit --no-fund --loglevel=error "$@" \
            >>"$work/npm.log" 2>&1)
    }
    if ! npm_add kafkajs@2.2.4; then
        log "kafkajs: npm install kafkajs@2.2.4 failed; see $work/npm.log"
        return 1
    fi
    npm_add kafkajs-snappy@1.1.0 || log "kafkajs: kafkajs-snappy did not install"
    npm_add kafkajs-lz4@1.2.1 || log "kafkajs: kafkajs-lz4 did not install"
    if ! npm_add @kafkajs/zstd@0.1.1; then
        log "kafkajs: @kafkajs/zstd did not install (its native cppzst does not build);" \
            "using zstd-codec instead"
        npm_add zstd-codec@0.1.5 || log "kafkajs: zstd-codec did not install"
    fi

    start_capture kafkajs
    (cd "$node" && CAPTURE_PORT=$port run 120 node - <<'EOF'
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require("kafkajs");

const topic = process.env.CAPTURE_TOPIC;
const payload = process.env.CAPTURE_PAYLOAD;
const codecs = [["none", CompressionTypes.None], ["gzip", CompressionTypes.GZIP]];

function tryCodec(name, type, load) {
    try {
        CompressionCodecs[type] = load();
        codecs.push([name, type]);
    } catch (e) {
        console.error("kafkajs: no " + name + " codec: " + e.message);
    }
}
tryCodec("snappy", CompressionTypes.Snappy, () => require("kafkajs-snappy"));
tryCodec("lz4", CompressionTypes.LZ4, () => new (require("kafkajs-lz4"))().codec);
tryCodec("zstd", CompressionTypes.ZSTD, () => {
    try {
        return require("@kafkajs/zstd")();
    } catch (e) {
        const { ZstdCodec } = require("zstd-codec");
        let simple = null;
        const ready = new Promise((resolve) => ZstdCodec.run((z) => {
            simple = new z.Simple();
            resolve();
        }));
        return () => ({
            async compress(encoder) {
                await ready;
                return Buffer.from(simple.compress(encoder.buffer));
            },
            async decompress(buffer) {
                await ready;
                return Buffer.from(simple.decompress(buffer));
            },
        });
    }
});

const kafka = new Kafka({
    clientId: "kafkajs",
    brokers: ["127.0.0.1:" + process.env.CAPTURE_PORT],
    logLevel: logLevel.ERROR,
    retry: { retries: 3 },
});

async function main() {
    const producer = kafka.producer();
    await producer.connect();
    for (const [name, type] of codecs) {
        const messages = [];
        for (let i = 0; i < 3; i++) {
            messages.push({
                key: "kafkajs-" + name + "-" + i,
                value: "kafkajs " + name + " record " + i + " " + payload,
                headers: { "samsa-header": name },
            });
        }
        await producer.send({ topic, compression: type, messages });
    }
    await producer.disconnect();
    console.log("kafkajs: produced with " + codecs.map((c) => c[0]).join(" "));

    const consumer = kafka.consumer({ groupId: "samsa-kafkajs-group" });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let n = 0;
    const want = codecs.length * 3;
    await new Promise((resolve) => {
        const timer = setTimeout(resolve, 15000);
        consumer.run({
            eachMessage: async () => {
                n++;
                if (n === want) {
                    /* stay a while: heartbeats and offset commits */
                    clearTimeout(timer);
                    setTimeout(resolve, 4000);
                }
            },
        });
    });
    await consumer.disconnect();
    console.log("kafkajs: group consumed " + n + " records");

    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: "samsa-admin", numPartitions: 1 }] });
    await admin.deleteTopics({ topics: ["samsa-admin"] });
    await admin.disconnect();
}

main().then(() => process.exit(0), (e) => {
    console.error("kafkajs: " + e.stack);
    process.exit(1);
});
EOF
    )
    stop_capture

    start_capture kafkajs-idempotent
    (cd "$node" && CAPTURE_PORT=$port run 60 node - <<'EOF'
const { Kafka, logLevel } = require("kafkajs");
const kafka = new Kafka({
    clientId: "kafkajs",
    brokers: ["127.0.0.1:" + process.env.CAPTURE_PORT],
    logLevel: logLevel.ERROR,
});
async function main() {
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({
        topic: process.env.CAPTURE_TOPIC,
        messages: [{
            key: "kafkajs-idempotent-0",
            value: "kafkajs idempotent record 0 " + process.env.CAPTURE_PAYLOAD,
            headers: { "samsa-header": "idempotent" },
        }],
    });
    await producer.disconnect();
}
main().then(() => process.exit(0), (e) => {
    console.error("kafkajs: " + e.stack);
    process.exit(1);
});
EOF
    )
    stop_capture
}

# ------------------------------------------------------------------- vectors
# copy_first TAG CLIENT: the first frame of every API and version captured for
# TAG becomes vectors/CLIENT/<Api>-v<V>.bin (Produce: <Api>-v<V>-<codec>.bin).
copy_first() {
    local tag=$1 client=$2 f base
    mkdir -p "$vectors/$client"
    for f in "$raw/$tag"/*-0.bin; do
        [ -e "$f" ] || continue
        base=$(basename "$f" -0.bin)
        cp "$f" "$vectors/$client/$base.bin"
    done
}

# copy_one TAG FRAME CLIENT NAME
copy_one() {
    if [ -e "$raw/$1/$2" ]; then
        cp "$raw/$1/$2" "$vectors/$3/$4"
    else
        log "missing: $1/$2"
    fi
}

capture_kcat
capture_kafka_python
capture_kafkajs || true

for client in kcat kafka-python kafkajs; do
    rm -rf "${vectors:?}/$client"
    copy_first "$client" "$client"
done
copy_one kcat-idempotent InitProducerId-v1-0.bin kcat InitProducerId-v1.bin
copy_one kcat-idempotent Produce-v7-none-0.bin kcat Produce-v7-idempotent.bin
copy_one kafkajs-idempotent InitProducerId-v1-0.bin kafkajs InitProducerId-v1.bin
copy_one kafkajs-idempotent Produce-v7-none-0.bin kafkajs Produce-v7-idempotent.bin

# What the issue asks for, per client.
missing=0
for client in kcat kafka-python kafkajs; do
    for api in ApiVersions Metadata Produce Fetch FindCoordinator JoinGroup; do
        if ! ls "$vectors/$client/$api"-v*.bin >/dev/null 2>&1; then
            log "MISSING: $client $api"
            missing=$((missing + 1))
        fi
    done
done
for client in kcat kafka-python kafkajs; do
    log "$client: $(cd "$vectors/$client" && printf '%s ' *.bin)"
done
log "raw frames and logs: $work"
trap - EXIT
stop_capture
exit $((missing > 0))
