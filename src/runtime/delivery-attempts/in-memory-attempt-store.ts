import type { TopicPartition } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import type { AttemptStore, DeliveryMarker } from './attempt-store.ts';

/** Process-local store: survives consumer resets, not process restarts (unit tests, opt-out). */
export class InMemoryAttemptStore implements AttemptStore {
  readonly #markers = new Map<string, DeliveryMarker>();

  start(): Promise<void> {
    return Promise.resolve();
  }

  get(group: string, partitions: readonly TopicPartition[]): Promise<Map<string, DeliveryMarker>> {
    const out = new Map<string, DeliveryMarker>();
    for (const tp of partitions) {
      const m = this.#markers.get(`${group}|${tpKey(tp)}`);
      if (m) out.set(tpKey(tp), { ...m });
    }
    return Promise.resolve(out);
  }

  put(
    group: string,
    markers: readonly { partition: TopicPartition; marker: DeliveryMarker }[],
  ): Promise<void> {
    for (const { partition, marker } of markers)
      this.#markers.set(`${group}|${tpKey(partition)}`, { ...marker });
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
