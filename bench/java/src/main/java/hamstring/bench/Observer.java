package hamstring.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Watches one run from outside the process under test, the same way for every peer, then checks
 * its output. Every interval-ms it samples the output's read_committed end offsets (the last stable
 * offsets: they advance only when a transaction commits) and the group's committed input offsets.
 * It stops sampling once the group committed all `expected` input records and the end offsets
 * stopped moving, then runs {@link Checker} on the output.
 *
 * <p>Protocol on stdout, one line each: {@code ready}, {@code first} (the first output became
 * visible), {@code done} (the group committed all input), and last {@code result <json>} with the
 * samples [epoch ms, end offset sum, committed sum] and the check.
 *
 * <p>Arguments: bootstrap=, input=, output=, group=, expected=, [interval-ms=50],
 * [timeout-ms=600000].
 */
public final class Observer {
  public static void main(String[] argv) throws Exception {
    Args args = new Args(argv);
    String bootstrap = args.get("bootstrap");
    String group = args.get("group");
    long expected = Long.parseLong(args.get("expected"));
    long intervalMs = Long.parseLong(args.get("interval-ms", "50"));
    long timeoutMs = Long.parseLong(args.get("timeout-ms", "600000"));

    Properties cp = new Properties();
    cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
    Properties ap = new Properties();
    ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);

    try (KafkaConsumer<byte[], byte[]> consumer =
            new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        Admin admin = Admin.create(ap)) {
      List<TopicPartition> out = partitions(consumer, args.get("output"));
      String input = args.get("input");
      List<long[]> samples = new ArrayList<>();
      boolean first = false;
      boolean done = false;
      boolean timedOut = false;
      int still = 0;
      long started = System.currentTimeMillis();
      sumEnd(consumer, out);
      System.out.println("ready");
      System.out.flush();
      while (true) {
        long t = System.currentTimeMillis();
        long end = sumEnd(consumer, out);
        long committed = sumCommitted(admin, group, input);
        long previous = samples.isEmpty() ? -1 : samples.get(samples.size() - 1)[1];
        samples.add(new long[] {t, end, committed});
        if (!first && end > 0) {
          first = true;
          System.out.println("first");
          System.out.flush();
        }
        if (!done && committed >= expected) {
          done = true;
          System.out.println("done");
          System.out.flush();
        }
        still = end == previous ? still + 1 : 0;
        if (done && still >= 3) break;
        if (t - started > timeoutMs) {
          timedOut = true;
          break;
        }
        long sleep = t + intervalMs - System.currentTimeMillis();
        if (sleep > 0) Thread.sleep(sleep);
      }
      Checker.Result check = Checker.check(consumer, out, expected);
      StringBuilder json = new StringBuilder("{\"timedOut\":").append(timedOut);
      json.append(",\"samples\":[");
      for (int i = 0; i < samples.size(); i++) {
        long[] s = samples.get(i);
        json.append(i == 0 ? "" : ",").append('[').append(s[0]).append(',').append(s[1]);
        json.append(',').append(s[2]).append(']');
      }
      json.append("],\"check\":").append(check.toJson()).append('}');
      System.out.println("result " + json);
      System.out.flush();
    }
  }

  static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
    List<TopicPartition> tps = new ArrayList<>();
    for (PartitionInfo p : consumer.partitionsFor(topic, Duration.ofSeconds(30)))
      tps.add(new TopicPartition(topic, p.partition()));
    return tps;
  }

  /** With isolation.level=read_committed, endOffsets are the last stable offsets. */
  private static long sumEnd(KafkaConsumer<?, ?> consumer, List<TopicPartition> tps) {
    long sum = 0;
    for (long v : consumer.endOffsets(tps, Duration.ofSeconds(30)).values()) sum += v;
    return sum;
  }

  private static long sumCommitted(Admin admin, String group, String topic) throws Exception {
    Map<TopicPartition, OffsetAndMetadata> offsets =
        admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    long sum = 0;
    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : offsets.entrySet())
      if (e.getKey().topic().equals(topic) && e.getValue() != null) sum += e.getValue().offset();
    return sum;
  }
}
