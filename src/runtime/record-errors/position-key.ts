import type { RecordPosition } from '../stage.ts';

/** A record's identity within a batch (topic, partition, offset) as a map key. */
export const positionKey = (p: RecordPosition): string => `${p.topic}:${p.partition}@${p.offset}`;
