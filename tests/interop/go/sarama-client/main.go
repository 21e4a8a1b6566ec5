// sarama-client drives sarama 1.22 (Debian's golang-github-shopify-sarama-dev)
// against a broker for tests/interop/test_go_sarama.py. Every command prints
// what the broker answered as JSON, one object a line, and exits 1 on the
// first error (printed as {"error": "..."}), so the test asserts on exactly
// what the client saw.
//
//	sarama-client COMMAND -brokers H:P [-version 0.10.0.0] [flags]
//
//	produce        -topic T -n N -partitions P [-ts-base MS]: message i has key
//	               "key-i", value "value-i", headers {"seq": "i"} when the
//	               version carries headers (0.11 and later) and, with -ts-base,
//	               the CreateTime ts-base+i ms; it goes to partition i%P.
//	               Prints {"i","partition","offset"} per message.
//	consume        -topic T -partitions P: a partition consumer per partition
//	               from the oldest offset up to the high watermark; prints
//	               {"partition","offset","key","value","headers","timestamp_ms"}.
//	group          -topic T -group G -expect N: a ConsumerGroup member that
//	               marks every message and leaves after N, then prints the
//	               offsets committed for the group ({"committed": {p: offset}}).
//	offset-for-time -topic T -partition P -ts MS: Client.GetOffset by time.
//	create-topic   -topic T -partitions P: ClusterAdmin.CreateTopic
//	list-topics    ClusterAdmin.ListTopics: {"topics": {name: partitions}}
//	describe-config -topic T: ClusterAdmin.DescribeConfig of the topic
//	create-partitions -topic T -partitions P: ClusterAdmin.CreatePartitions,
//	               then DescribeTopics on the same admin (its connection)
//
// -sasl-user U -sasl-password P: every command authenticates with SASL PLAIN
// on a SASL_PLAINTEXT listener (SaslHandshake, then the PLAIN token).
// -tls-ca FILE [-tls-cert FILE -tls-key FILE]: every command speaks TLS
// (Net.TLS), the broker's certificate checked against the CA for the host of
// -brokers (an IP address: its IP SAN), the client certificate presented when
// given (mutual TLS).
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io/ioutil"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/Shopify/sarama"
)

var (
	outMu sync.Mutex // ConsumeClaim runs in a goroutine per partition
	out   = json.NewEncoder(os.Stdout)
)

func emit(v interface{}) {
	outMu.Lock()
	defer outMu.Unlock()
	if err := out.Encode(v); err != nil {
		os.Exit(3)
	}
}

func fail(what string, err error) {
	emit(map[string]string{"error": fmt.Sprintf("%s: %v", what, err)})
	os.Exit(1)
}

// tlsConfig: the CA as the only root, the host of brokers as the name to
// verify (sarama 1.22 leaves ServerName to its caller), the client
// certificate when both files are given.
func tlsConfig(brokers, ca, cert, key string) *tls.Config {
	pem, err := ioutil.ReadFile(ca)
	if err != nil {
		fail("tls-ca", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		fail("tls-ca", fmt.Errorf("no certificate in %s", ca))
	}
	host, _, err := net.SplitHostPort(brokers)
	if err != nil {
		fail("brokers", err)
	}
	c := &tls.Config{RootCAs: roots, ServerName: host}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			fail("tls-cert", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c
}

type opts struct {
	brokers    []string
	topic      string
	group      string
	n          int
	partitions int
	partition  int
	tsBase     int64
	ts         int64
	expect     int
	committed  bool
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sarama-client COMMAND -brokers H:P [-version V] [flags]")
	os.Exit(2)
}

func main() {
	brokers := flag.String("brokers", "", "bootstrap host:port")
	version := flag.String("version", "2.0.0", "sarama Config.Version")
	var o opts
	flag.StringVar(&o.topic, "topic", "", "topic")
	flag.StringVar(&o.group, "group", "", "consumer group")
	flag.IntVar(&o.n, "n", 0, "messages to produce")
	flag.IntVar(&o.partitions, "partitions", 1, "partitions")
	flag.IntVar(&o.partition, "partition", 0, "partition")
	flag.Int64Var(&o.tsBase, "ts-base", 0, "CreateTime of message 0 in ms (0: now)")
	flag.Int64Var(&o.ts, "ts", 0, "timestamp to look up in ms")
	flag.IntVar(&o.expect, "expect", 0, "messages the group member reads; consume: per partition")
	flag.BoolVar(&o.committed, "read-committed", false, "consume: isolation level read_committed")
	saslUser := flag.String("sasl-user", "", "SASL PLAIN user (SASL_PLAINTEXT)")
	saslPassword := flag.String("sasl-password", "", "SASL PLAIN password")
	tlsCA := flag.String("tls-ca", "", "PEM CA: speak TLS, the broker checked against it")
	tlsCert := flag.String("tls-cert", "", "PEM client certificate (mutual TLS)")
	tlsKey := flag.String("tls-key", "", "PEM client key (mutual TLS)")
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	if err := flag.CommandLine.Parse(os.Args[2:]); err != nil || flag.NArg() != 0 {
		usage()
	}
	if *brokers == "" {
		usage()
	}
	o.brokers = []string{*brokers}
	v, err := sarama.ParseKafkaVersion(*version)
	if err != nil {
		fail("version", err)
	}
	conf := sarama.NewConfig()
	conf.Version = v
	conf.ClientID = "sarama-" + *version
	conf.Net.DialTimeout = 10 * time.Second
	conf.Net.ReadTimeout = 20 * time.Second
	conf.Metadata.Retry.Max = 10
	conf.Metadata.Retry.Backoff = 200 * time.Millisecond
	if *tlsCA != "" {
		conf.Net.TLS.Enable = true
		conf.Net.TLS.Config = tlsConfig(*brokers, *tlsCA, *tlsCert, *tlsKey)
	}
	if *saslUser != "" {
		conf.Net.SASL.Enable = true
		conf.Net.SASL.Handshake = true
		conf.Net.SASL.User = *saslUser
		conf.Net.SASL.Password = *saslPassword
	}

	switch cmd {
	case "produce":
		produce(conf, o)
	case "consume":
		consume(conf, o)
	case "group":
		group(conf, o)
	case "offset-for-time":
		offsetForTime(conf, o)
	case "create-topic", "list-topics", "describe-config", "create-partitions":
		admin(conf, o, cmd)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", cmd)
		os.Exit(2)
	}
}

func produce(conf *sarama.Config, o opts) {
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Producer.Retry.Max = 5
	p, err := sarama.NewSyncProducer(o.brokers, conf)
	if err != nil {
		fail("NewSyncProducer", err)
	}
	defer p.Close()
	headers := conf.Version.IsAtLeast(sarama.V0_11_0_0)
	for i := 0; i < o.n; i++ {
		m := &sarama.ProducerMessage{
			Topic:     o.topic,
			Partition: int32(i % o.partitions),
			Key:       sarama.StringEncoder("key-" + strconv.Itoa(i)),
			Value:     sarama.StringEncoder("value-" + strconv.Itoa(i)),
		}
		if headers {
			m.Headers = []sarama.RecordHeader{{Key: []byte("seq"), Value: []byte(strconv.Itoa(i))}}
		}
		if o.tsBase != 0 {
			m.Timestamp = time.Unix(0, (o.tsBase+int64(i))*int64(time.Millisecond))
		}
		part, off, err := p.SendMessage(m)
		if err != nil {
			fail(fmt.Sprintf("SendMessage %d", i), err)
		}
		emit(map[string]interface{}{"i": i, "partition": part, "offset": off})
	}
}

func record(m *sarama.ConsumerMessage) map[string]interface{} {
	h := map[string]string{}
	for _, rh := range m.Headers {
		h[string(rh.Key)] = string(rh.Value)
	}
	ts := int64(-1)
	if !m.Timestamp.IsZero() {
		ts = m.Timestamp.UnixNano() / int64(time.Millisecond)
	}
	return map[string]interface{}{
		"partition": m.Partition, "offset": m.Offset, "key": string(m.Key),
		"value": string(m.Value), "headers": h, "timestamp_ms": ts,
	}
}

func consume(conf *sarama.Config, o opts) {
	if o.committed {
		// Consumer.IsolationLevel (sarama 1.22): aborted transactions and
		// control records are not delivered; the end is -expect records,
		// since the log's last offset may be a marker, never delivered
		conf.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	client, err := sarama.NewClient(o.brokers, conf)
	if err != nil {
		fail("NewClient", err)
	}
	defer client.Close()
	c, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		fail("NewConsumerFromClient", err)
	}
	defer c.Close()
	for p := int32(0); p < int32(o.partitions); p++ {
		hwm, err := client.GetOffset(o.topic, p, sarama.OffsetNewest)
		if err != nil {
			fail("GetOffset newest", err)
		}
		emit(map[string]interface{}{"partition": p, "high_watermark": hwm})
		if hwm == 0 {
			continue
		}
		pc, err := c.ConsumePartition(o.topic, p, sarama.OffsetOldest)
		if err != nil {
			fail("ConsumePartition", err)
		}
		deadline := time.After(30 * time.Second)
		seen := 0
		for done := false; !done; {
			select {
			case m := <-pc.Messages():
				emit(record(m))
				seen++
				done = m.Offset+1 >= hwm || (o.expect > 0 && seen >= o.expect)
			case e := <-pc.Errors():
				fail("partition consumer", e)
			case <-deadline:
				fail("partition consumer", fmt.Errorf("partition %d: high watermark %d not reached in 30 s", p, hwm))
			}
		}
		if err := pc.Close(); err != nil {
			fail("PartitionConsumer.Close", err)
		}
	}
}

type handler struct {
	mu   sync.Mutex
	want int
	seen int
	done chan struct{}
}

func (h *handler) Setup(s sarama.ConsumerGroupSession) error {
	emit(map[string]interface{}{"member_id": s.MemberID(), "generation": s.GenerationID(), "claims": s.Claims()})
	return nil
}

func (h *handler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *handler) ConsumeClaim(s sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	for m := range c.Messages() {
		emit(record(m))
		s.MarkMessage(m, "")
		h.mu.Lock()
		h.seen++
		if h.seen == h.want {
			close(h.done)
		}
		h.mu.Unlock()
	}
	return nil
}

func group(conf *sarama.Config, o opts) {
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Consumer.Offsets.CommitInterval = 200 * time.Millisecond
	conf.Consumer.Return.Errors = true
	client, err := sarama.NewClient(o.brokers, conf)
	if err != nil {
		fail("NewClient", err)
	}
	defer client.Close()
	g, err := sarama.NewConsumerGroupFromClient(o.group, client)
	if err != nil {
		fail("NewConsumerGroup", err)
	}
	h := &handler{want: o.expect, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{o.topic}, h); err != nil {
				errs <- err
				return
			}
		}
	}()
	select {
	case <-h.done:
	case err := <-errs:
		fail("ConsumerGroup.Consume", err)
	case err := <-g.Errors():
		fail("ConsumerGroup error", err)
	case <-time.After(60 * time.Second):
		h.mu.Lock()
		seen := h.seen
		h.mu.Unlock()
		fail("ConsumerGroup", fmt.Errorf("read %d of %d messages in 60 s", seen, h.want))
	}
	cancel()
	if err := g.Close(); err != nil { // commits what was marked
		fail("ConsumerGroup.Close", err)
	}
	om, err := sarama.NewOffsetManagerFromClient(o.group, client)
	if err != nil {
		fail("NewOffsetManager", err)
	}
	defer om.Close()
	committed := map[string]int64{}
	for p := int32(0); p < int32(o.partitions); p++ {
		pom, err := om.ManagePartition(o.topic, p)
		if err != nil {
			fail("ManagePartition", err)
		}
		off, _ := pom.NextOffset()
		committed[strconv.Itoa(int(p))] = off
		pom.AsyncClose()
	}
	emit(map[string]interface{}{"committed": committed})
}

func offsetForTime(conf *sarama.Config, o opts) {
	client, err := sarama.NewClient(o.brokers, conf)
	if err != nil {
		fail("NewClient", err)
	}
	defer client.Close()
	off, err := client.GetOffset(o.topic, int32(o.partition), o.ts)
	if err != nil {
		fail("GetOffset", err)
	}
	emit(map[string]interface{}{"offset": off})
}

func admin(conf *sarama.Config, o opts, cmd string) {
	a, err := sarama.NewClusterAdmin(o.brokers, conf)
	if err != nil {
		fail("NewClusterAdmin", err)
	}
	defer a.Close()
	switch cmd {
	case "create-topic":
		d := &sarama.TopicDetail{NumPartitions: int32(o.partitions), ReplicationFactor: 1}
		if err := a.CreateTopic(o.topic, d, false); err != nil {
			fail("CreateTopic", err)
		}
		emit(map[string]interface{}{"created": o.topic})
	case "list-topics":
		ts, err := a.ListTopics()
		if err != nil {
			fail("ListTopics", err)
		}
		m := map[string]int32{}
		for name, d := range ts {
			m[name] = d.NumPartitions
		}
		emit(map[string]interface{}{"topics": m})
	case "describe-config":
		es, err := a.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: o.topic})
		if err != nil {
			fail("DescribeConfig", err)
		}
		m := map[string]string{}
		for _, e := range es {
			m[e.Name] = e.Value
		}
		emit(map[string]interface{}{"configs": m})
	case "create-partitions":
		if err := a.CreatePartitions(o.topic, int32(o.partitions), nil, false); err != nil {
			fail("CreatePartitions", err)
		}
		md, err := a.DescribeTopics([]string{o.topic})
		if err != nil {
			fail("DescribeTopics after CreatePartitions", err)
		}
		emit(map[string]interface{}{"partitions": len(md[0].Partitions)})
	}
}
