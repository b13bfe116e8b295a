import type { DeliveryMarker } from './attempt-store.ts';

/**
 * What to do with a partition's part of a batch, given its durable marker:
 * - normal: process all its records;
 * - single: process only the first record (the partition is being searched for the record that
 *   never completes);
 * - poison: dead-letter the first record without processing it (its deliveries are exhausted).
 */
export type DeliveryAction = 'normal' | 'single' | 'poison';

/**
 * The marker to write before this delivery, and the action. `first`/`last` are the partition's first
 * and last offsets in the batch. A batch that starts where the marker's did is a redelivery.
 */
export function nextMarker(
  marker: DeliveryMarker | undefined,
  first: number,
  last: number,
  maxDeliveries: number,
): { marker: DeliveryMarker; action: DeliveryAction } {
  const searching = marker?.suspectEnd !== undefined && first <= marker.suspectEnd;
  const count = marker !== undefined && marker.offset === first ? marker.count + 1 : 1;
  if (searching) {
    const m = { offset: first, count, suspectEnd: marker.suspectEnd };
    return { marker: m, action: count > maxDeliveries ? 'poison' : 'single' };
  }
  if (count > maxDeliveries) {
    // The same batch start failed to commit too often: search its range one record at a time.
    return { marker: { offset: first, count: 1, suspectEnd: last }, action: 'single' };
  }
  return { marker: { offset: first, count }, action: 'normal' };
}
