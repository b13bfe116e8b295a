import { randomBytes } from 'node:crypto';

let counter = 0;

/**
 * `<prefix>-<pid>-<counter>-<random>`: unique across test files running in parallel (pid), within
 * a file (counter) and across runs against a long-lived cluster (random).
 */
function uniqueName(prefix: string): string {
  counter += 1;
  // Kafka names allow [a-zA-Z0-9._-]; '-' only, so '.' and '_' never collide in metric names.
  const safe = prefix.replace(/[^a-zA-Z0-9-]/g, '-');
  return `${safe}-${process.pid}-${counter}-${randomBytes(3).toString('hex')}`;
}

/** A topic name no other test uses. */
export function uniqueTopic(prefix = 'topic'): string {
  return uniqueName(prefix);
}

/** A consumer group id no other test uses. */
export function uniqueGroup(prefix = 'group'): string {
  return uniqueName(prefix);
}

/** A transactional.id no other test uses (a shared one would fence another test's producer). */
export function uniqueTransactionalId(prefix = 'txn'): string {
  return uniqueName(prefix);
}

/** Matches a name made here (or one derived from it: `<name>.DLT`, `<group>-<store>-changelog`). */
const UNIQUE_PART = /-\d+-\d+-[0-9a-f]{6}(?![0-9a-f])/;

/** Whether `name` is, or is derived from, one of this module's names (so some test owns it). */
export function isUniqueName(name: string): boolean {
  return UNIQUE_PART.test(name);
}
