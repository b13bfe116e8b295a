package hamstring.bench;

import java.time.Duration;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads an output topic read_committed from the beginning to its last stable offsets and checks
 * it against the input: every value starts with {@code <id>|}, ids 0..expected-1; each must be
 * there (no loss) exactly once (no duplicate).
 */
final class Checker {
  record Result(
      long expected, long records, long distinct, long duplicates, long missing, long malformed, long endOffsets) {
    boolean exactlyOnce() {
      return missing == 0 && duplicates == 0 && malformed == 0;
    }

    String toJson() {
      return String.format(
          "{\"expected\":%d,\"records\":%d,\"distinct\":%d,\"duplicates\":%d,\"missing\":%d,"
              + "\"malformed\":%d,\"endOffsets\":%d}",
          expected, records, distinct, duplicates, missing, malformed, endOffsets);
    }
  }

  private Checker() {}

  static Result check(KafkaConsumer<byte[], byte[]> consumer, List<TopicPartition> tps, long expected) {
    consumer.assign(tps);
    consumer.seekToBeginning(tps);
    Map<TopicPartition, Long> end = consumer.endOffsets(tps, Duration.ofSeconds(30));
    long endSum = end.values().stream().mapToLong(Long::longValue).sum();
    BitSet seen = new BitSet((int) expected);
    long records = 0;
    long duplicates = 0;
    long malformed = 0;
    long idle = 0;
    while (!reached(consumer, end) && idle < 100) {
      var batch = consumer.poll(Duration.ofMillis(200));
      idle = batch.isEmpty() ? idle + 1 : 0;
      for (ConsumerRecord<byte[], byte[]> r : batch) {
        records++;
        long id = idOf(r.value());
        if (id < 0 || id >= expected) malformed++;
        else if (seen.get((int) id)) duplicates++;
        else seen.set((int) id);
      }
    }
    long distinct = seen.cardinality();
    return new Result(expected, records, distinct, duplicates, expected - distinct, malformed, endSum);
  }

  private static boolean reached(KafkaConsumer<?, ?> consumer, Map<TopicPartition, Long> end) {
    for (Map.Entry<TopicPartition, Long> e : end.entrySet())
      if (consumer.position(e.getKey()) < e.getValue()) return false;
    return true;
  }

  /** The decimal id before the first '|', or -1. */
  private static long idOf(byte[] value) {
    if (value == null) return -1;
    long id = 0;
    int i = 0;
    for (; i < value.length && value[i] != '|'; i++) {
      int d = value[i] - '0';
      if (d < 0 || d > 9 || i > 18) return -1;
      id = id * 10 + d;
    }
    return i == 0 || i == value.length ? -1 : id;
  }
}
