/**
 * Which integration files may run at the same time (scripts/run-integration-tests.ts runs several
 * files at once). Every file is in one lane:
 *
 * - `exclusive`: it stops, kills, SIGSTOPs or restarts the run-wide Kafka or ClickHouse. It runs
 *   while no other file that uses those services runs (only `own` files run beside it), so no
 *   other file sees an outage it did not cause.
 * - `pipeline`: it runs the shipped config's stages, whose topic, group and changelog names are
 *   fixed (also `hamstring.delivery-attempts`), and `resetBroker()` (test/integration/pipeline/
 *   support.ts) deletes those names first. Files of this lane run one at a time, beside `shared`
 *   and `own` files.
 * - `own`: it uses neither run-wide service (it starts its own cluster or server on its own ports
 *   and data dir, or talks to a closed port), so it runs beside anything, `exclusive` files too.
 * - `shared`: it uses the run-wide services under names of its own (test/helpers/names.ts: topics,
 *   groups, transactional ids carry the pid and a random part; ClickHouse databases are derived
 *   from such names; ports come from test/helpers/free-port.ts or port 0). Runs beside `shared`,
 *   `pipeline` and `own` files.
 *
 * A file missing from LANES (a new one) is classified by its text: one that calls a fault of the
 * run-wide services (FAULT_CALLS) is `exclusive`, one that uses the shipped pipeline's names is
 * `pipeline`, any other is `shared`. The default is `shared` because a new file that uses the
 * fixtures and names.ts is safe beside others, and making every unknown file exclusive would put
 * it on the serial path; the text check catches the files that are not. The runner prints the
 * lane it guessed so that the file can be listed here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Lane = 'exclusive' | 'pipeline' | 'own' | 'shared';

/** The lane of every file whose lane is not `shared` (or that the text check would misjudge), and why. */
export const LANES: Readonly<Record<string, Lane>> = {
  // kill -9, SIGSTOP and restart of a ClickHouse of its own (test/helpers/own-clickhouse.ts), which
  // the text check would take for the run-wide one.
  'test/integration/monitoring/agent-recovery.test.ts': 'shared',
  // Stops a ClickHouse of its own (password users, HTTPS); Kafka under names of its own.
  'test/integration/monitoring/clickhouse-auth.test.ts': 'shared',
  // The shipped stages' names, but on a SASL cluster of its own; the run-wide ClickHouse under a
  // database of its own.
  'test/integration/security/pipeline-acls.test.ts': 'shared',
  // The shipped pipeline's fixed names; resetBroker() first.
  'test/integration/pipeline/collector-batch-bound.test.ts': 'pipeline',
  'test/integration/pipeline/collector-kill.test.ts': 'pipeline',
  'test/integration/pipeline/grouped-stages.test.ts': 'pipeline',
  'test/integration/pipeline/end-to-end.test.ts': 'pipeline',
  'test/integration/pipeline/hostile-lines.test.ts': 'pipeline',
  'test/integration/verify/pipeline-accounting.test.ts': 'pipeline',
  // The default `hamstring.delivery-attempts` topic, which resetBroker() deletes.
  'test/integration/app/run-stages.test.ts': 'pipeline',
  'test/integration/app/run-example.test.ts': 'pipeline',
  'test/integration/app/no-secrets-in-output.test.ts': 'pipeline',
  // Their own clusters or servers, on their own ports and data dirs.
  'test/integration/dev/local-cluster.test.ts': 'own',
  // Its own machines (network namespaces), Kafka cluster and ClickHouse on ports 27500-27599.
  'test/integration/cluster/machine-loss.test.ts': 'own',
  // SIGSTOP, kill -9 or restart of a broker of their own (test/helpers/private-kafka.ts): on the
  // run-wide one these faults made them exclusive, a serial stretch of the run nothing else filled.
  'test/integration/kafka/describe-group-faults.test.ts': 'own',
  'test/integration/kafka/stranded-clients.test.ts': 'own',
  'test/integration/runtime/broker-faults.test.ts': 'own',
  'test/integration/runtime/reconnect-outage.test.ts': 'own',
  'test/integration/runtime/coordinator-failover.test.ts': 'own',
  'test/integration/dev/restart-single-node.test.ts': 'own',
  // A private broker, and the run-wide ClickHouse under a database of its own.
  'test/integration/monitoring/agent-kafka-faults.test.ts': 'shared',
  // The shipped pipeline (or bench/pipeline.ts, which deletes and recreates its topics) on a broker
  // of their own; the run-wide ClickHouse under a database of their own.
  'test/integration/pipeline/replay-speed.test.ts': 'shared',
  'test/integration/dashboard/live-demo.test.ts': 'shared',
  'test/integration/bench/pipeline-bench.test.ts': 'shared',
  'test/integration/sensors/resolver-demo.test.ts': 'shared',
  // Stops an Unbound server of its own, which the text check would take for a run-wide service.
  'test/integration/sensors/dnstap-unbound.test.ts': 'shared',
  // A cluster of its own with TLS, SASL and ACLs; the run-wide ClickHouse under a database of its own
  // (the monitoring agent's test).
  'test/integration/security/kafka-security.test.ts': 'shared',
  'test/integration/dev/local-clickhouse.test.ts': 'own',
  // ZooKeeper, two ClickHouse replicas (ports 27400-27499) and a Kafka broker of its own; it kills one replica.
  'test/integration/monitoring/replicated-clickhouse.test.ts': 'own',
  'test/integration/runtime/authorization.test.ts': 'own',
  'test/integration/app/stage-topics-outage.test.ts': 'own',
  'test/integration/verify/network-cut.test.ts': 'own',
  'test/integration/verify/pipeline-verify.test.ts': 'own',
  'test/integration/verify/soak-short.test.ts': 'own',
  'test/integration/verify/verify-smoke.test.ts': 'own',
  'test/integration/runtime/abandoned-producer-exit.test.ts': 'own',
  'test/integration/runtime/broker-down-readiness.test.ts': 'own',
  // Only a closed port.
  'test/integration/runtime/unreachable-kafka.test.ts': 'own',
  // A DNS server of its own on 127.53.0.54:53 and a capture on lo; neither Kafka nor ClickHouse.
  'test/integration/app/pcap-live.test.ts': 'own',
};

/**
 * Files that keep the CPU busy (a whole pipeline, a browser, a cluster of their own, workers under
 * load: 25 CPU-seconds or more in a measured run), as opposed to the many that mostly wait on
 * Kafka's timeouts. The runner runs at most {@link MAX_HEAVY} of them at once, so that the other
 * slots go to waiting files (with five at once, heavy ones together starved the live demo's
 * monitoring agent until its alerts lagged past the view's grace).
 */
export const HEAVY: ReadonlySet<string> = new Set([
  'test/integration/bench/pipeline-bench.test.ts',
  'test/integration/dashboard/live-demo.test.ts',
  'test/integration/dev/local-cluster.test.ts',
  'test/integration/runtime/coordinator-failover.test.ts',
  'test/integration/pipeline/replay-speed.test.ts',
  'test/integration/record-errors/redelivery.test.ts',
  'test/integration/runtime/broker-down-readiness.test.ts',
  'test/integration/security/kafka-security.test.ts',
  'test/integration/security/pipeline-acls.test.ts',
  'test/integration/sensors/resolver-demo.test.ts',
  'test/integration/state/exactly-once-state.test.ts',
  'test/integration/verify/network-cut.test.ts',
  'test/integration/verify/pipeline-verify.test.ts',
  'test/integration/verify/soak-short.test.ts',
  'test/integration/verify/verify-smoke.test.ts',
]);
export const MAX_HEAVY = 3;

/** Calls that stop, kill, pause or restart a service, or delete every pipeline topic. */
const FAULT_CALLS =
  /\.(pauseNode|killNode|stopNode|startNode)\(|server\.(restart|stop)\(|['"]dev['"],\s*['"](kafka|clickhouse)['"],\s*['"](kill|stop)/;
const PIPELINE_NAMES = /resetBroker|pipelineTestConfig|startPipeline|runStages\(/;
const FIXTURES = /testKafka\(|testClickHouse\(/;

/** The lane of `file` (relative to `root`), and whether it was guessed from the file's text. */
export function laneOf(root: string, file: string): { lane: Lane; guessed: boolean } {
  const listed = LANES[file];
  if (listed) return { lane: listed, guessed: false };
  let text = '';
  try {
    text = readFileSync(join(root, file), 'utf8');
  } catch {
    return { lane: 'shared', guessed: true };
  }
  if (FIXTURES.test(text) && FAULT_CALLS.test(text)) return { lane: 'exclusive', guessed: true };
  if (PIPELINE_NAMES.test(text)) return { lane: 'pipeline', guessed: true };
  return { lane: 'shared', guessed: true };
}

/**
 * Whether a file of `lane` may start while files of the `running` lanes run; `heavy`: whether it is
 * one of {@link HEAVY}, and how many of those run.
 */
export function mayStart(
  lane: Lane,
  running: readonly Lane[],
  exclusivePending: boolean,
  heavy: { file: boolean; running: number } = { file: false, running: 0 },
): boolean {
  if (heavy.file && heavy.running >= MAX_HEAVY) return false;
  if (lane === 'own') return true;
  if (running.includes('exclusive')) return false;
  if (lane === 'exclusive') return running.every((l) => l === 'own');
  // The exclusive files go first: a shared file started now would delay them.
  if (exclusivePending) return false;
  return lane === 'shared' || !running.includes('pipeline');
}
