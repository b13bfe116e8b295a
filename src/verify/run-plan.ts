/**
 * The shapes one scenario run passes between its phases: the run's options, the plan decided before
 * anything starts, and what the drain and the final reads found.
 */
import type { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import type { FinalRead } from './reader.ts';
import type { FaultRecord } from './report.ts';

/** Options of one verification run (shared by every scenario of the run). */
export interface VerifyRunOptions {
  bootstrap: string;
  /** Set when the run started the cluster itself: broker faults need it. */
  cluster?: LocalKafkaCluster;
  records: number;
  workers: number;
  /** Partitions of every topic. Default 2 per worker, at least 3. */
  partitions?: number;
  /** Distinct keys of the seeded records. Default 64. */
  keys?: number;
  /** Worker logs and reports go here. */
  workDir: string;
  /**
   * Seconds the throttled workers take for the whole input, instead of the scenario's own load time:
   * a faster pace (larger batches, shorter waits for each fault's progress gate) for a quick check.
   */
  loadSeconds?: number;
  /** Seed of the abort dice and the random soak. */
  seed?: number;
  /** Duration of the random soak's fault phase. Default 120 s. */
  soakMs?: number;
  /**
   * The drain after the faults gives up when the committed offsets made no progress for this long.
   * Default 3 min. (The workers are throttled, so a long outage takes as long to work off.)
   */
  drainTimeoutMs?: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** The network namespace for scenarios with `workersInNamespace`, and Kafka's address from inside it. */
  namespace?: { bootstrap: string; execPrefix: readonly string[]; cut(): void; heal(): void };
}

/** What one scenario run works on, decided before anything starts. */
export interface RunPlan {
  readonly runId: string;
  readonly started: number;
  readonly partitions: number;
  readonly brokers: number;
  readonly rf: number;
  readonly input: string;
  readonly mid: string | undefined;
  readonly output: string;
  readonly oversizedEvery: number;
  /** Sequence numbers whose outputs Kafka refuses: they end in the dead-letter topic. */
  readonly poison: ReadonlySet<number>;
  readonly expectedOut: number;
  /** The runtime's default dead-letter topic of the (single) stage's input. */
  readonly deadLetterTopic: string;
  /** One stage, or two chained through `mid`. */
  readonly stages: readonly { group: string; from: string; to: string }[];
  readonly namespace: VerifyRunOptions['namespace'];
}

/** What the drain and the final reads found. */
export interface RunOutcome {
  readonly drained: { ok: boolean; detail: string };
  readonly concurrentComplete: boolean;
  readonly final: FinalRead;
  readonly dead: FinalRead | undefined;
  readonly faults: FaultRecord[];
  readonly faultsDone: number;
}

/**
 * How long the workers stay throttled after the fault schedule: the window of the report's
 * throughput after the faults, at the pace of the one before them. Then the rest drains at full speed.
 */
export const THROTTLED_AFTER_FAULTS_MS = 10_000;
