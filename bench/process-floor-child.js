/* global process, setInterval, console */
/**
 * One process of `bench/process-floor.ts`, plain JavaScript so that no TypeScript loader is counted:
 * `bare` holds nothing (node itself), `clients` holds what every stage process must, the Kafka
 * client with a transactional producer and a consumer in a group, and nothing of HAMSTRING. It prints
 * `ready` once it holds them and then idles (the consumer polled as a stage polls it) until killed.
 *
 *   node bench/process-floor-child.js bare|clients <bootstrap> <name>
 */
const [mode, bootstrap, name] = process.argv.slice(2);

if (mode === 'bare') {
  setInterval(() => {}, 1000);
  console.log('ready');
} else if (mode === 'clients') {
  const { default: Kafka } = await import('@confluentinc/kafka-javascript');
  const done = (resolve, reject) => (error) => (error ? reject(error) : resolve());
  const producer = new Kafka.Producer({
    'bootstrap.servers': bootstrap,
    'transactional.id': `process-floor-${name}`,
    dr_msg_cb: true,
  });
  await new Promise((resolve, reject) => producer.connect({}, done(resolve, reject)));
  await new Promise((resolve, reject) => producer.initTransactions(30000, done(resolve, reject)));
  const consumer = new Kafka.KafkaConsumer(
    {
      'bootstrap.servers': bootstrap,
      'group.id': `process-floor-${name}`,
      'enable.auto.commit': false,
      'isolation.level': 'read_committed',
    },
    {},
  );
  await new Promise((resolve, reject) => consumer.connect({}, done(resolve, reject)));
  consumer.subscribe(['process-floor']);
  setInterval(() => consumer.consume(100, () => {}), 200);
  setInterval(() => producer.poll(), 100);
  console.log('ready');
} else {
  throw new Error(`mode ${mode}: bare or clients`);
}
