// kafkago-client drives segmentio kafka-go 0.2.1 (Debian's
// golang-github-segmentio-kafka-go-dev) against a broker for
// tests/interop/test_go_kafkago.py. kafka-go 0.2.1 speaks Produce v2 with
// magic 1 message sets and Fetch v2 (it reads only magic 0 and 1), and has
// no record headers. Every command prints what it saw as JSON, one object a
// line, and exits 1 on the first error (printed as {"error": "..."}).
//
//	kafkago-client COMMAND -brokers H:P [flags]
//
//	produce      -topic T -n N -partitions P [-codec none|gzip|snappy|lz4]:
//	             a Writer, acks=all, message i (key "key-i", value "value-i")
//	             to partition i%P; prints {"written": N}
//	read         -topic T -partitions P: a Reader per partition (no group)
//	             from the first offset to the last; prints
//	             {"partition","offset","key","value","timestamp_ms"} per message
//	group        -topic T -group G -expect N: a Reader with GroupID that
//	             fetches and commits (CommitMessages) N messages, then leaves
//	create-topic -topic T -partitions P: Conn.CreateTopics, then
//	             Conn.ReadPartitions; prints {"partitions": n}
//	delete-topic -topic T: Conn.DeleteTopics
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	kafka "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/gzip"
	"github.com/segmentio/kafka-go/lz4"
	"github.com/segmentio/kafka-go/snappy"
)

var out = json.NewEncoder(os.Stdout)

// errLog gets the errors a Reader retries on by itself (a fetch it cannot
// decode, a failed join), which would otherwise only show as a timeout.
var errLog = log.New(os.Stderr, "kafka-go: ", 0)

func emit(v interface{}) {
	if err := out.Encode(v); err != nil {
		os.Exit(3)
	}
}

func fail(what string, err error) {
	emit(map[string]string{"error": fmt.Sprintf("%s: %v", what, err)})
	os.Exit(1)
}

// byIndex sends "key-i" to partition i % len(partitions), so the test knows
// where every message is.
type byIndex struct{}

func (byIndex) Balance(m kafka.Message, partitions ...int) int {
	i, err := strconv.Atoi(strings.TrimPrefix(string(m.Key), "key-"))
	if err != nil || len(partitions) == 0 {
		return 0
	}
	return partitions[i%len(partitions)]
}

type opts struct {
	broker     string
	topic      string
	group      string
	codec      string
	n          int
	partitions int
	expect     int
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kafkago-client COMMAND -brokers H:P [flags]")
	os.Exit(2)
}

func main() {
	var o opts
	flag.StringVar(&o.broker, "brokers", "", "bootstrap host:port")
	flag.StringVar(&o.topic, "topic", "", "topic")
	flag.StringVar(&o.group, "group", "", "consumer group")
	flag.StringVar(&o.codec, "codec", "none", "none, gzip, snappy or lz4")
	flag.IntVar(&o.n, "n", 0, "messages to produce")
	flag.IntVar(&o.partitions, "partitions", 1, "partitions")
	flag.IntVar(&o.expect, "expect", 0, "messages the group member reads")
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil || flag.NArg() != 0 {
		usage()
	}
	if o.broker == "" {
		usage()
	}
	switch cmd {
	case "produce":
		produce(o)
	case "read":
		read(o)
	case "group":
		group(o)
	case "create-topic", "delete-topic":
		admin(o, cmd)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", cmd)
		os.Exit(2)
	}
}

func produce(o opts) {
	cfg := kafka.WriterConfig{
		Brokers:      []string{o.broker},
		Topic:        o.topic,
		Balancer:     byIndex{},
		BatchSize:    100,
		BatchTimeout: 10 * time.Millisecond,
		RequiredAcks: -1,
		MaxAttempts:  3,
	}
	switch o.codec {
	case "none":
	case "gzip":
		cfg.CompressionCodec = gzip.NewCompressionCodec()
	case "snappy":
		cfg.CompressionCodec = snappy.NewCompressionCodec()
	case "lz4":
		cfg.CompressionCodec = lz4.NewCompressionCodec()
	default:
		fmt.Fprintf(os.Stderr, "unknown codec %q\n", o.codec)
		os.Exit(2)
	}
	w := kafka.NewWriter(cfg)
	msgs := make([]kafka.Message, o.n)
	for i := range msgs {
		msgs[i] = kafka.Message{
			Key:   []byte("key-" + strconv.Itoa(i)),
			Value: []byte("value-" + strconv.Itoa(i)),
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		fail("WriteMessages", err)
	}
	if err := w.Close(); err != nil {
		fail("Writer.Close", err)
	}
	emit(map[string]interface{}{"written": o.n})
}

func record(m kafka.Message) map[string]interface{} {
	return map[string]interface{}{
		"partition": m.Partition, "offset": m.Offset, "key": string(m.Key),
		"value": string(m.Value), "timestamp_ms": m.Time.UnixNano() / int64(time.Millisecond),
	}
}

func read(o opts) {
	for p := 0; p < o.partitions; p++ {
		conn, err := kafka.DialLeader(context.Background(), "tcp", o.broker, o.topic, p)
		if err != nil {
			fail("DialLeader", err)
		}
		last, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			fail("ReadLastOffset", err)
		}
		emit(map[string]interface{}{"partition": p, "high_watermark": last})
		if last == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{
			Brokers: []string{o.broker}, Topic: o.topic, Partition: p,
			MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond,
			ErrorLogger: errLog,
		})
		if err := r.SetOffset(kafka.FirstOffset); err != nil {
			fail("SetOffset", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				fail(fmt.Sprintf("ReadMessage partition %d", p), err)
			}
			emit(record(m))
			if m.Offset+1 >= last {
				break
			}
		}
		cancel()
		if err := r.Close(); err != nil {
			fail("Reader.Close", err)
		}
	}
}

func group(o opts) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: []string{o.broker}, Topic: o.topic, GroupID: o.group,
		MinBytes: 1, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond, SessionTimeout: 10 * time.Second,
		RebalanceTimeout: 10 * time.Second, ErrorLogger: errLog,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for i := 0; i < o.expect; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			fail(fmt.Sprintf("FetchMessage after %d", i), err)
		}
		emit(record(m))
		if err := r.CommitMessages(ctx, m); err != nil {
			fail("CommitMessages", err)
		}
	}
	if err := r.Close(); err != nil {
		fail("Reader.Close", err)
	}
	emit(map[string]interface{}{"read": o.expect})
}

func admin(o opts, cmd string) {
	conn, err := kafka.Dial("tcp", o.broker)
	if err != nil {
		fail("Dial", err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		fail("SetDeadline", err)
	}
	switch cmd {
	case "create-topic":
		err := conn.CreateTopics(kafka.TopicConfig{Topic: o.topic, NumPartitions: o.partitions, ReplicationFactor: 1})
		if err != nil {
			fail("CreateTopics", err)
		}
		ps, err := conn.ReadPartitions(o.topic)
		if err != nil {
			fail("ReadPartitions", err)
		}
		emit(map[string]interface{}{"partitions": len(ps)})
	case "delete-topic":
		if err := conn.DeleteTopics(o.topic); err != nil {
			fail("DeleteTopics", err)
		}
		emit(map[string]interface{}{"deleted": o.topic})
	}
}
