package hamstring.bench;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Writes the input of bench:compare with the Java producer, a client none of the peers is: keys
 * k-0..k-63 placed by the Java client's own partitioner (murmur2), values "id|" padded with 'x' to
 * exactly size bytes. Every peer then finds the input where a Java client would put it and can keep
 * each record in its partition by hashing its key the same way.
 *
 * <p>Arguments: bootstrap=, topic=, count=, size=. Prints "seeded N" and exits 0; any failed send
 * exits 2 naming the first error.
 */
public final class Seeder {
  public static void main(String[] argv) {
    Args args = new Args(argv);
    String topic = args.get("topic");
    long count = Long.parseLong(args.get("count"));
    int size = Integer.parseInt(args.get("size"));
    Properties pp = new Properties();
    pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
    pp.put(ProducerConfig.LINGER_MS_CONFIG, 20);
    AtomicLong failed = new AtomicLong();
    AtomicReference<Exception> first = new AtomicReference<>();
    byte[] pad = new byte[size];
    Arrays.fill(pad, (byte) 'x');
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(pp, new StringSerializer(), new ByteArraySerializer())) {
      for (long i = 0; i < count; i++) {
        byte[] head = (i + "|").getBytes(StandardCharsets.US_ASCII);
        byte[] value = pad.clone();
        System.arraycopy(head, 0, value, 0, head.length);
        producer.send(
            new ProducerRecord<>(topic, "k-" + (i % 64), value),
            (meta, e) -> {
              if (e == null) return;
              failed.incrementAndGet();
              first.compareAndSet(null, e);
            });
      }
      producer.flush();
    }
    if (failed.get() > 0) {
      System.err.println("seeding " + topic + ": " + failed.get() + " records failed: " + first.get());
      System.exit(2);
    }
    System.out.println("seeded " + count);
  }
}
