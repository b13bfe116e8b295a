package hamstring.bench;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The plain Java consume-transform-produce loop: poll up to txn-size records, send each, send the
 * offsets to the transaction, commit. One transaction per poll; default producer settings. It is a
 * throughput reference on a healthy broker, not a fault-tolerant worker: any error ends it (exit 2).
 *
 * <p>Arguments: bootstrap=, input=, output=, group=, [txn-size=500].
 */
public final class CopyLoop {
  public static void main(String[] argv) throws InterruptedException {
    Args args = new Args(argv);
    String bootstrap = args.get("bootstrap");
    String output = args.get("output");
    String group = args.get("group");
    int txnSize = Integer.parseInt(args.get("txn-size", "500"));

    Properties cp = new Properties();
    cp.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    cp.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    cp.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    cp.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    cp.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, txnSize);
    Properties pp = new Properties();
    pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    pp.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, group + "-copy-loop");

    AtomicBoolean running = new AtomicBoolean(true);
    boolean failed = false;
    long transactions = 0;
    CountDownLatch finished = new CountDownLatch(1);
    KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer());
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  running.set(false);
                  consumer.wakeup();
                  try {
                    finished.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }));
    try {
      producer.initTransactions();
      consumer.subscribe(List.of(args.get("input")));
      while (running.get()) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
        if (records.isEmpty()) continue;
        producer.beginTransaction();
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (ConsumerRecord<byte[], byte[]> r : records) {
          producer.send(new ProducerRecord<>(output, r.key(), r.value()));
          offsets.put(
              new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
        }
        producer.sendOffsetsToTransaction(offsets, consumer.groupMetadata());
        producer.commitTransaction();
        transactions++;
      }
    } catch (WakeupException e) {
      // stop requested
    } catch (RuntimeException e) {
      e.printStackTrace();
      failed = true;
    } finally {
      producer.close(Duration.ofSeconds(10));
      consumer.close(Duration.ofSeconds(10));
      // Read by bench:compare for the records per transaction.
      System.out.println("transactions " + transactions);
      System.out.flush();
      finished.countDown();
    }
    // After the finally: the shutdown hook waits for it, so exiting inside would deadlock.
    if (failed) System.exit(2);
  }
}
