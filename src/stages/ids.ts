import { hash } from 'node:crypto';
import type { LinePosition } from './line-frames.ts';

/**
 * A UUID-shaped id (version 8: application-defined) derived from `parts`, so the same source always
 * yields the same id and a replay can be recognised downstream. Never random: a random id makes a
 * replayed line or batch a new one.
 */
export function stableId(...parts: readonly (string | number)[]): string {
  let text = '';
  for (const part of parts) {
    const s = String(part);
    text += `${s.length}:${s};`;
  }
  // One-shot hashing: a Hash object per id was a twentieth of a busy collector's time.
  const hex = hash('sha256', text, 'hex');
  const variant = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The collector's `logline_id` of the line it read at `at`: from its record's position and, for a
 * line of a frame, its index there. A line that was a record of its own keeps the id it had before
 * frames.
 */
export function loglineId(at: LinePosition): string {
  return at.line === undefined
    ? stableId('logline', at.topic, at.partition, at.offset)
    : stableId('logline', at.topic, at.partition, at.offset, at.line);
}
