package hamstring.bench;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;


/**
 * Kafka Streams pass-through with exactly_once_v2 and one stream thread: the reference the runtime
 * is measured against. Only commit.interval.ms is set when asked (commit-interval-ms=N); everything
 * else is Streams' default. With commit-every=N the pass-through requests a commit after every N
 * records (ProcessorContext.commit) and the interval is 9 s (Streams requires it below its 10 s
 * transaction timeout), so each transaction holds about N records whatever the machine's speed: a time interval sized on one machine gave 233 records a
 * transaction on a busier one. Runs until SIGTERM.
 *
 * <p>Arguments: bootstrap=, input=, output=, group= (the application.id), state-dir=,
 * [commit-interval-ms=], [commit-every=].
 */
public final class StreamsPassThrough {
  public static void main(String[] argv) throws InterruptedException {
    Args args = new Args(argv);
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, args.get("group"));
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args.get("bootstrap"));
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.STATE_DIR_CONFIG, args.get("state-dir"));
    p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    if (args.has("commit-interval-ms"))
      p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.parseLong(args.get("commit-interval-ms")));

    StreamsBuilder builder = new StreamsBuilder();
    if (args.has("commit-every")) {
      long every = Long.parseLong(args.get("commit-every"));
      p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 9_000L);
      builder
          .<byte[], byte[]>stream(args.get("input"))
          .process(() -> new CommitEvery(every))
          .to(args.get("output"));
    } else {
      builder.<byte[], byte[]>stream(args.get("input")).to(args.get("output"));
    }
    KafkaStreams streams = new KafkaStreams(builder.build(), p);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicInteger missingSource = new AtomicInteger();
    streams.setUncaughtExceptionHandler(
        e -> {
          // bench:compare seeded the source topic before starting this peer, yet on a loaded host the
          // first rebalance can fail with MissingSourceTopicException while the consumer's metadata
          // does not list it yet. A new stream thread joins again; anything else ends the run.
          if (causedBy(e, MissingSourceTopicException.class) && missingSource.incrementAndGet() <= 5) {
            System.err.println("source topic not in the metadata yet; replacing the stream thread: " + e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
          }
          e.printStackTrace();
          return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
    // Exit from a thread of its own: the shutdown hook's close() waits for the stream thread.
    streams.setStateListener(
        (now, before) -> {
          if (now == KafkaStreams.State.ERROR) new Thread(() -> System.exit(2)).start();
        });
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  // Read by bench:compare: with EOS every commit of the thread is one transaction.
                  double commits = 0;
                  for (Metric m : streams.metrics().values())
                    if (m.metricName().name().equals("commit-total")
                        && m.metricName().group().equals("stream-thread-metrics"))
                      commits += ((Number) m.metricValue()).doubleValue();
                  System.out.println("transactions " + (long) commits);
                  System.out.flush();
                  streams.close(Duration.ofSeconds(20));
                  closed.countDown();
                }));
    streams.start();
    closed.await();
  }

  private static boolean causedBy(Throwable e, Class<? extends Throwable> kind) {
    for (Throwable t = e; t != null; t = t.getCause()) if (kind.isInstance(t)) return true;
    return false;
  }

  /** Forwards every record and requests a commit after each `every` records. */
  private static final class CommitEvery implements Processor<byte[], byte[], byte[], byte[]> {
    private final long every;
    private ProcessorContext<byte[], byte[]> context;
    private long seen;

    CommitEvery(long every) {
      this.every = every;
    }

    @Override
    public void init(ProcessorContext<byte[], byte[]> context) {
      this.context = context;
    }

    @Override
    public void process(Record<byte[], byte[]> record) {
      context.forward(record);
      if (++seen % every == 0) context.commit();
    }
  }
}
