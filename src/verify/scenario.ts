import type { LocalKafkaCluster } from '../dev/kafka-cluster.ts';
import type { WorkerGroup } from './worker-pool.ts';

/** What a fault schedule can see and do while the pipeline runs. */
export interface ScenarioContext {
  bootstrap: string;
  /** Present only when the run started the cluster (`--local`): broker faults need it. */
  cluster: LocalKafkaCluster | undefined;
  /** One worker group per stage (two for the chain). */
  groups: readonly WorkerGroup[];
  records: number;
  workers: number;
  random: () => number;
  soakMs: number;
  log(line: string): void;
  /** Present when the scenario asked for `workersInNamespace`: cuts the workers' link to Kafka. */
  network: { cut(): void; heal(): void } | undefined;
  /** Records committed so far by the last stage. */
  committed(): number;
  /** Applies a fault (`action` returns once the fault is over and repaired) and records it. */
  fault(
    kind: string,
    target: string,
    action: () => Promise<void>,
    gated?: boolean,
    /** The worker the fault hit: its own first commit afterwards is reported too. */
    worker?: { group: string; instance: string },
  ): Promise<void>;
}

/** Which Kafka a scenario needs. */
export type ScenarioNeeds = 'any' | 'local' | 'local-1' | 'local-3';

/** A named fault schedule over a pass-through pipeline (or the two-stage chain). */
export interface Scenario {
  name: string;
  description: string;
  needs: ScenarioNeeds;
  chain?: boolean;
  /** Share of transactions the beforeCommit hook aborts. */
  abortRatio: number;
  maxPollMs?: number;
  stallMs?: number;
  /**
   * Every n-th input sequence number is output larger than Kafka accepts (the output topic's
   * `max.message.bytes` or the producer's `message.max.bytes`, see oversized.ts): those records must
   * end in `<input>.DLT` once each, and every other one in the output once.
   */
  oversizedEvery?: number;
  /**
   * Workers run in a network namespace of their own (root and iproute2 needed; skipped otherwise)
   * and reach Kafka over a link the scenario can cut.
   */
  workersInNamespace?: boolean;
  /**
   * Seconds the load should last (the workers are throttled to ~records / loadSeconds per second),
   * so there is load during the whole schedule.
   */
  loadSeconds(o: { records: number; workers: number; soakMs?: number }): number;
  run(ctx: ScenarioContext): Promise<void>;
}
