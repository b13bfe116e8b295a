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
  const ends = marker?.batchEnds;
  if (searching) {
    const m = { offset: first, count, suspectEnd: marker.suspectEnd, ...(ends ? { batchEnds: ends } : {}) };
    return { marker: m, action: count > maxDeliveries ? 'poison' : 'single' };
  }
  const earlier = count > 1 && ends ? ends : [];
  if (count > maxDeliveries) {
    // The same batch start failed to commit too often: search its range one record at a time.
    return { marker: { offset: first, count: 1, suspectEnd: last, batchEnds: earlier }, action: 'single' };
  }
  return { marker: { offset: first, count, batchEnds: [...earlier, last] }, action: 'normal' };
}

/**
 * How often the record at `offset` was handed to the stage without its offset committing, by the
 * marker its partition's last delivery plan wrote: the failed batch deliveries that reached it, and
 * its deliveries alone in a search (a `poison` marker counts the delivery it refused).
 */
export function deliveriesOf(marker: DeliveryMarker, offset: number): number {
  const alone = marker.suspectEnd !== undefined && marker.offset === offset ? marker.count - 1 : 0;
  const inBatches = (marker.batchEnds ?? []).filter((end) => end >= offset).length;
  return alone + inBatches;
}
