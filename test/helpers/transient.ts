import { KafkaError } from '../../src/kafka/kafka-error.ts';

/**
 * `fn` again while it fails with a transport or retriable Kafka error (a broker restarting or
 * paused a moment ago, a leader election of a partition just created), until `timeoutMs`; any
 * other error, or the last one at the deadline, is thrown. The tests' checks and set-up ride out
 * what the code under test rides out itself.
 */
export async function retryingTransient<T>(
  fn: () => Promise<T>,
  timeoutMs = 30_000,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      const transient = e instanceof KafkaError && (e.kind === 'transport' || e.kind === 'retriable');
      if (!transient || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}
