import type { Logger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError } from './kafka-error.ts';

/** Why a client cannot reach Kafka right now: for logs and for `/readyz`'s detail. */
export interface ConnectionProblem {
  /** The configured bootstrap servers. */
  address: string;
  /** When the client first failed to connect since it last had a broker up (epoch ms). */
  since: number;
  /** librdkafka's code name: `_RESOLVE`, `_TRANSPORT`, `_ALL_BROKERS_DOWN`, ... */
  code: string;
  /** librdkafka's own words, which name the broker and the socket error. */
  reason: string;
  /**
   * No broker connection of the client is up: it can neither fetch nor produce until one is. A
   * problem with only some brokers (one node of several down) leaves this false.
   */
  allBrokersDown?: boolean;
}

const CONNECTION_CODES = new Set(
  ['_RESOLVE', '_TRANSPORT', '_ALL_BROKERS_DOWN', '_SSL', '_AUTHENTICATION'].map(code),
);

interface BrokerStats {
  source?: string;
  state?: string;
}

/** Names of the real brokers (configured or learned) the statistics show connected. */
export function brokersUp(statsJson: string): Set<string> {
  try {
    const stats = JSON.parse(statsJson) as { brokers?: Record<string, BrokerStats> };
    return new Set(
      Object.entries(stats.brokers ?? {})
        .filter(([, b]) => (b.source === 'configured' || b.source === 'learned') && b.state === 'UP')
        .map(([name]) => name),
    );
  } catch {
    return new Set();
  }
}

/** True when the statistics show a real broker connection up. */
export function hasBrokerUp(statsJson: string): boolean {
  return brokersUp(statsJson).size > 0;
}

/**
 * The broker a FAIL log line is about (`host:port/id`, as the statistics name it), if it names one:
 * "[thrd:b:9092/1]: b:9092/1: Disconnected ..." or "...: b:9092/bootstrap: Connect to ... failed".
 */
export function failedBrokerOf(event: { message: string; fac?: string }): string | undefined {
  if (event.fac !== 'FAIL') return undefined;
  return /^\[thrd:[^\]]*\]: (\S+): /.exec(event.message)?.[1];
}

/** A client that reports statistics and log lines (both client kinds of the binding do). */
export interface ConnectionEvents {
  on(
    event: 'event.stats' | 'event.log',
    listener: (event: { message: string; fac?: string }) => void,
  ): unknown;
}

/**
 * librdkafka's log line of a failed connection attempt as an error, or undefined for any other line.
 * While a client connects (before `connect()` returns) librdkafka reports failed attempts only in
 * its log (facility FAIL), not through the error callback: "Failed to resolve 'host:port': ..." and
 * "Connect to ipv4#1.2.3.4:9092 failed: Connection refused". Other FAIL lines (an idle connection the
 * broker closed) are not connection failures.
 */
export function connectionFailureOf(event: { message: string; fac?: string }) {
  if (event.fac !== 'FAIL') return undefined;
  const text = event.message.replace(/^\[thrd:[^\]]*\]: /, '');
  const name = /Failed to resolve/.test(text)
    ? '_RESOLVE'
    : /Connect to .* failed/.test(text)
      ? '_TRANSPORT'
      : undefined;
  return name === undefined ? undefined : classifyKafkaError({ code: code(name), message: text }, 'connect');
}

/**
 * Follows one client's connection: the first failed attempt is logged at once at warn with the
 * bootstrap address and librdkafka's cause (an unresolvable name is `_RESOLVE`, a closed port
 * `_TRANSPORT`); while the problem lasts, `problem()` says since when; statistics showing a broker up
 * clear it (and log the recovery). Repeats are left to the logger's repeat limit.
 */
export class ConnectionWatch {
  #problem: Omit<ConnectionProblem, 'allBrokersDown'> | undefined;
  /**
   * Brokers connected as the last statistics showed, less those a FAIL line reported since. The
   * binding's error events carry no code (librdkafka's "all broker connections are down" arrives
   * as a bare message), and statistics come only every few seconds: the FAIL lines (a connection
   * closed by the broker, a refused reconnect) are the first and only prompt sign of a lost broker.
   */
  #up = new Set<string>();

  constructor(
    private readonly o: {
      bootstrapServers: string;
      clientId: string;
      log: Logger;
      now?: () => number;
    },
  ) {}

  /** Subscribes to the client's statistics, which tell when a broker is up again. */
  attach(native: ConnectionEvents): this {
    native.on('event.stats', (event) => {
      this.#up = brokersUp(event.message);
      if (this.#problem && this.#up.size > 0) this.connected();
    });
    native.on('event.log', (event) => {
      const broker = failedBrokerOf(event);
      if (broker !== undefined) this.#up.delete(broker);
      const err = connectionFailureOf(event);
      if (err) this.error(err);
    });
    return this;
  }

  /** Feeds an asynchronous client error; returns true when it was a connection error. */
  error(err: KafkaError): boolean {
    if (!CONNECTION_CODES.has(err.code)) return false;
    const first = this.#problem === undefined;
    this.#problem = {
      address: this.o.bootstrapServers,
      since: this.#problem?.since ?? (this.o.now ?? Date.now)(),
      code: err.codeName,
      reason: err.message,
    };
    const cause = err.codeName === '_RESOLVE' ? 'host name does not resolve' : 'cannot connect';
    this.o.log.warn(
      {
        event: 'kafka-unreachable',
        address: this.o.bootstrapServers,
        client: this.o.clientId,
        err: err.toLog(),
      },
      // The reason stays out of the message: its timings differ per attempt, the repeat limit keys on it.
      `kafka: ${cause} (${err.codeName}): bootstrap ${this.o.bootstrapServers}${first ? '' : ' (still failing)'}`,
    );
    return true;
  }

  connected(): void {
    const p = this.#problem;
    if (!p) return;
    this.#problem = undefined;
    this.o.log.info(
      {
        event: 'kafka-reachable',
        address: p.address,
        client: this.o.clientId,
        downMs: (this.o.now ?? Date.now)() - p.since,
      },
      `kafka: connected to ${p.address} again`,
    );
  }

  problem(): ConnectionProblem | undefined {
    return this.#problem && { ...this.#problem, allBrokersDown: this.#up.size === 0 };
  }
}
