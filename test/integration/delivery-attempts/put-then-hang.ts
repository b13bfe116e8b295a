/**
 * Child process of the restart test: puts two markers, prints "put" once put() resolved, then
 * waits to be killed with SIGKILL (no close, no flush on exit).
 */
import { silentLogger } from '../../../src/observability/logger.ts';
import { KafkaAttemptStore } from '../../../src/runtime/delivery-attempts/kafka-attempt-store.ts';

const [bootstrap, topic, group] = process.argv.slice(2) as [string, string, string];
const store = new KafkaAttemptStore({ bootstrapServers: bootstrap, topic, log: silentLogger() });
await store.start();
await store.put(group, [
  { partition: { topic: 'in', partition: 0 }, marker: { offset: 3, count: 1 } },
  { partition: { topic: 'in', partition: 1 }, marker: { offset: 4, count: 2, suspectEnd: 6 } },
]);
process.stdout.write('put\n');
setInterval(() => undefined, 60_000);
