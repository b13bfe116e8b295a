import type { ConnectionProblem } from '../kafka/connection-watch.ts';

/** What a worker knows about why it may not be consuming. */
export interface ReadinessFacts {
  state: 'starting' | 'running' | 'recovering' | 'stopping' | 'stopped' | 'failed';
  failure?: string;
  hasConsumer: boolean;
  assigned: number;
  /** The clients' own view: which address fails since when, with librdkafka's words. */
  connection?: ConnectionProblem;
  /** The worker's reconnect loop, while it runs. */
  reconnecting?: { since: number; attempt: number; lastError?: string };
  /** Partitions of the subscribed topics no member has owned for longer than the alert bound. */
  unowned: readonly string[];
}

const at = (ms: number) => new Date(ms).toISOString();

/**
 * Ready: running with a consumer that holds partitions, and Kafka reachable. A worker whose clients
 * have lost every broker cannot consume however its state looks: librdkafka retries the connection
 * on its own, and the runtime notices only when a call fails or times out, tens of seconds later.
 */
export function isReady(f: ReadinessFacts): boolean {
  return f.state === 'running' && f.hasConsumer && f.assigned > 0 && f.connection?.allBrokersDown !== true;
}

/**
 * Why `/readyz` says not ready, in one line an operator can act on: failed with which reason,
 * reconnecting to which address since when (and librdkafka's last words), starting or recovering,
 * or waiting for an assignment; undefined when nothing holds the worker back.
 */
export function notReadyReason(f: ReadinessFacts): string | undefined {
  if (f.state === 'failed') return `failed: ${f.failure ?? 'no reason recorded'}`;
  if (f.state === 'stopping' || f.state === 'stopped') return f.state;
  const conn = f.connection
    ? `${f.connection.address} unreachable since ${at(f.connection.since)} (${f.connection.code}: ${f.connection.reason})`
    : undefined;
  if (f.reconnecting) {
    const last = f.reconnecting.lastError ? `; last error ${f.reconnecting.lastError}` : '';
    return `reconnecting since ${at(f.reconnecting.since)} (attempt ${f.reconnecting.attempt}${last})${conn ? `: ${conn}` : ''}`;
  }
  if (conn && f.state === 'running' && f.connection?.allBrokersDown) return `all brokers down: ${conn}`;
  if (conn) return `${f.state === 'starting' ? 'starting, ' : ''}connecting: ${conn}`;
  if (f.state === 'starting') return 'starting';
  if (f.state === 'recovering') return 'recovering';
  if (!f.hasConsumer) return 'no consumer (between recoveries)';
  if (f.assigned === 0) {
    const unowned = f.unowned.length > 0 ? `; unowned for too long: ${f.unowned.join(', ')}` : '';
    return `no partitions assigned (the group has not assigned any to this member${unowned})`;
  }
  return undefined;
}
