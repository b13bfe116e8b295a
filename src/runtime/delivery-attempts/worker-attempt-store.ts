import type { TopicPartition } from '../../kafka/records.ts';
import type { Logger } from '../../observability/logger.ts';
import type { AttemptStore, DeliveryMarker } from './attempt-store.ts';
import { KafkaAttemptStore } from './kafka-attempt-store.ts';

/**
 * The delivery-attempt store a worker runs with, from its `attemptStore` option:
 * - a store: used as it is, started and closed by whoever made it (several workers may share one);
 * - `false`: none, so bounded redelivery cannot see crashes or stalls;
 * - absent: the worker's own `KafkaAttemptStore` on `topic` of its cluster. Bounded redelivery is a
 *   guarantee a worker must not lose because its builder forgot a store, so it is on by default.
 *
 * The worker's own store starts on its first use, not in `start()`: a worker started while Kafka is
 * unreachable must begin its reconnect loop rather than fail, and a store call that fails (Kafka
 * away) is a failed batch the loop recovers from; the next call starts it again.
 */
export interface WorkerAttemptStore {
  readonly store: AttemptStore | undefined;
  /** Closes the worker's own store; a no-op for a store given by the caller or none. */
  close(): Promise<void>;
}

export function workerAttemptStore(args: {
  option: AttemptStore | false | undefined;
  bootstrapServers: string;
  topic: string | undefined;
  clientId: string;
  log: Logger;
}): WorkerAttemptStore {
  if (args.option === false) return { store: undefined, close: () => Promise.resolve() };
  if (args.option !== undefined) return { store: args.option, close: () => Promise.resolve() };
  const own = new LazyAttemptStore(
    new KafkaAttemptStore({
      bootstrapServers: args.bootstrapServers,
      ...(args.topic !== undefined ? { topic: args.topic } : {}),
      clientId: args.clientId,
      log: args.log,
    }),
  );
  return { store: own, close: () => own.close() };
}

/** Starts the store it wraps on the first call; a failed start is tried again by the next call. */
class LazyAttemptStore implements AttemptStore {
  #starting: Promise<void> | undefined;
  #closed = false;

  constructor(private readonly inner: AttemptStore) {}

  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('delivery-attempt store closed'));
    this.#starting ??= this.inner.start().catch((e: unknown) => {
      this.#starting = undefined;
      throw new Error(`delivery-attempt store did not start: ${e instanceof Error ? e.message : String(e)}`, {
        cause: e,
      });
    });
    return this.#starting;
  }

  async get(group: string, partitions: readonly TopicPartition[]): Promise<Map<string, DeliveryMarker>> {
    await this.start();
    return this.inner.get(group, partitions);
  }

  async put(
    group: string,
    markers: readonly { partition: TopicPartition; marker: DeliveryMarker }[],
  ): Promise<void> {
    await this.start();
    return this.inner.put(group, markers);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const starting = this.#starting;
    if (!starting) return;
    await starting.catch(() => undefined);
    await this.inner.close();
  }
}
