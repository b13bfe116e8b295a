import { TOMBSTONE_RETENTION_MS } from './changelog-topics.ts';
import type { Checkpoint } from './local-copy.ts';

/** How to restore one store partition: keep the local copy and read the tail, or start afresh. */
export type RestorePlan =
  | { kind: 'tail'; from: number }
  | {
      kind: 'full';
      from: number;
      reason: 'no-checkpoint' | 'ahead-of-changelog' | 'behind-log-start' | 'too-old';
    };

/**
 * Decides whether a local copy can be trusted. Not when its checkpoint lies past the changelog's end
 * (the topic was recreated or truncated), before its start (records it never saw are gone), or is
 * older than the tombstone retention (a delete it missed may have been compacted away).
 */
export function planRestore(
  checkpoint: Checkpoint | undefined,
  changelog: { low: number; high: number },
  now: number,
): RestorePlan {
  const from = Math.max(0, changelog.low);
  if (checkpoint === undefined) return { kind: 'full', from, reason: 'no-checkpoint' };
  if (checkpoint.offset > changelog.high) return { kind: 'full', from, reason: 'ahead-of-changelog' };
  if (checkpoint.offset < changelog.low) return { kind: 'full', from, reason: 'behind-log-start' };
  if (now - checkpoint.writtenAt >= TOMBSTONE_RETENTION_MS) return { kind: 'full', from, reason: 'too-old' };
  return { kind: 'tail', from: checkpoint.offset };
}
