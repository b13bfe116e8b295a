import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Sends one record per key with the Java client's default partitioner and prints "key<TAB>partition"
 * for each, from the broker's acknowledgement: where a Java application puts that key. Run with the
 * broker's own client jars:
 * java -cp '<kafka libs>/*' KeyedProducer.java <bootstrap> <topic> <key>...
 */
public class KeyedProducer {
  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      for (int i = 2; i < args.length; i++) {
        RecordMetadata m = producer.send(new ProducerRecord<>(args[1], args[i], "java")).get();
        System.out.println(args[i] + "\t" + m.partition());
      }
    }
  }
}
