// confluent-client drives confluent-kafka-go 0.11.6 (Debian's
// golang-github-confluentinc-confluent-kafka-go-dev, built with cgo on the
// installed librdkafka) against a broker for tests/interop/test_go_confluent.py.
// Every command prints what it saw as JSON, one object a line, and exits 1 on
// the first error (printed as {"error": "..."}).
//
//	confluent-client COMMAND -brokers H:P [flags]
//
//	produce      -topic T -n N -partitions P: message i (key "key-i", value
//	             "value-i", header seq=i) to partition i%P, acks=all; prints
//	             {"i","partition","offset"} per delivery report
//	group        -topic T -group G -expect N: a Consumer subscribed in group G
//	             that reads N messages, commits them synchronously and closes;
//	             prints every message, then {"committed": {p: offset}}
//	create-topic -topic T -partitions P: AdminClient.CreateTopics
//	create-partitions -topic T -partitions P: AdminClient.CreatePartitions
//	describe-config -topic T: AdminClient.DescribeConfigs
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/confluentinc/confluent-kafka-go/kafka"
)

var out = json.NewEncoder(os.Stdout)

func emit(v interface{}) {
	if err := out.Encode(v); err != nil {
		os.Exit(3)
	}
}

func fail(what string, err error) {
	emit(map[string]string{"error": fmt.Sprintf("%s: %v", what, err)})
	os.Exit(1)
}

type opts struct {
	broker     string
	topic      string
	group      string
	n          int
	partitions int
	expect     int
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: confluent-client COMMAND -brokers H:P [flags]")
	os.Exit(2)
}

func main() {
	var o opts
	flag.StringVar(&o.broker, "brokers", "", "bootstrap host:port")
	flag.StringVar(&o.topic, "topic", "", "topic")
	flag.StringVar(&o.group, "group", "", "consumer group")
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
	_, lib := kafka.LibraryVersion()
	fmt.Fprintf(os.Stderr, "confluent-kafka-go on librdkafka %s\n", lib)
	switch cmd {
	case "produce":
		produce(o)
	case "group":
		group(o)
	case "create-topic", "create-partitions", "describe-config":
		admin(o, cmd)
	default:
		fmt.Fprintf(os.Stderr, "unknown command %q\n", cmd)
		os.Exit(2)
	}
}

func produce(o opts) {
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"bootstrap.servers": o.broker, "acks": "all", "linger.ms": 5,
	})
	if err != nil {
		fail("NewProducer", err)
	}
	defer p.Close()
	reports := make(chan kafka.Event, o.n)
	for i := 0; i < o.n; i++ {
		err := p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &o.topic, Partition: int32(i % o.partitions)},
			Key:            []byte("key-" + strconv.Itoa(i)),
			Value:          []byte("value-" + strconv.Itoa(i)),
			Headers:        []kafka.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}},
			Opaque:         i,
		}, reports)
		if err != nil {
			fail("Produce", err)
		}
	}
	deadline := time.After(30 * time.Second)
	for got := 0; got < o.n; got++ {
		select {
		case e := <-reports:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				fail("delivery", m.TopicPartition.Error)
			}
			emit(map[string]interface{}{"i": m.Opaque, "partition": m.TopicPartition.Partition,
				"offset": int64(m.TopicPartition.Offset)})
		case <-deadline:
			fail("delivery", fmt.Errorf("%d of %d reports in 30 s", got, o.n))
		}
	}
}

func group(o opts) {
	c, err := kafka.NewConsumer(&kafka.ConfigMap{
		"bootstrap.servers": o.broker, "group.id": o.group,
		"auto.offset.reset": "earliest", "enable.auto.commit": false,
		"session.timeout.ms": 10000,
	})
	if err != nil {
		fail("NewConsumer", err)
	}
	if err := c.Subscribe(o.topic, nil); err != nil {
		fail("Subscribe", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for got := 0; got < o.expect; {
		if time.Now().After(deadline) {
			fail("group", fmt.Errorf("read %d of %d messages in 60 s", got, o.expect))
		}
		ev := c.Poll(200)
		switch e := ev.(type) {
		case *kafka.Message:
			if e.TopicPartition.Error != nil {
				fail("message", e.TopicPartition.Error)
			}
			h := map[string]string{}
			for _, x := range e.Headers {
				h[x.Key] = string(x.Value)
			}
			emit(map[string]interface{}{"partition": e.TopicPartition.Partition,
				"offset": int64(e.TopicPartition.Offset), "key": string(e.Key),
				"value": string(e.Value), "headers": h})
			got++
		case kafka.Error:
			fail("consumer", e)
		}
	}
	parts, err := c.Commit()
	if err != nil {
		fail("Commit", err)
	}
	committed := map[string]int64{}
	for _, tp := range parts {
		committed[strconv.Itoa(int(tp.Partition))] = int64(tp.Offset)
	}
	if err := c.Close(); err != nil {
		fail("Close", err)
	}
	emit(map[string]interface{}{"committed": committed})
}

func admin(o opts, cmd string) {
	a, err := kafka.NewAdminClient(&kafka.ConfigMap{"bootstrap.servers": o.broker})
	if err != nil {
		fail("NewAdminClient", err)
	}
	defer a.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var res []kafka.TopicResult
	switch cmd {
	case "create-topic":
		res, err = a.CreateTopics(ctx, []kafka.TopicSpecification{{Topic: o.topic,
			NumPartitions: o.partitions, ReplicationFactor: 1}})
	case "create-partitions":
		res, err = a.CreatePartitions(ctx, []kafka.PartitionsSpecification{{Topic: o.topic,
			IncreaseTo: o.partitions}})
	case "describe-config":
		rs, err := a.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: o.topic}})
		if err != nil {
			fail("DescribeConfigs", err)
		}
		if rs[0].Error.Code() != kafka.ErrNoError {
			fail("DescribeConfigs", rs[0].Error)
		}
		m := map[string]string{}
		for name, e := range rs[0].Config {
			m[name] = e.Value
		}
		emit(map[string]interface{}{"configs": m})
		return
	}
	if err != nil {
		fail(cmd, err)
	}
	if res[0].Error.Code() != kafka.ErrNoError {
		fail(cmd, res[0].Error)
	}
	md, err := a.GetMetadata(&o.topic, false, 10000)
	if err != nil {
		fail("GetMetadata", err)
	}
	emit(map[string]interface{}{"partitions": len(md.Topics[o.topic].Partitions)})
}
