import type { AdminPort } from '../../kafka/admin.ts';
import { classifyKafkaError } from '../../kafka/classify.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import type { Clock } from '../clock.ts';
import { retryTopicsOf } from '../record-errors/retry-topics.ts';
import { prepareOutputTopics } from '../topic-setup.ts';
import type { RecordErrorPolicy } from '../record-errors/policy.ts';
import type { Stage } from '../stage.ts';
import { hiddenTopicsHint } from '../../kafka/security.ts';

export interface StartupCheckDeps {
  admin: AdminPort;
  stage: Stage;
  bootstrapServers: string;
  apiTimeoutMs: number;
  retryTopics: RecordErrorPolicy['retryTopics'];
  clock: Clock;
  /** Whether a failure of the checks themselves stops the worker (configuration, ACL) or is skipped. */
  stops(err: KafkaError): string | undefined;
  /** A topic created moments ago may not be in every broker's metadata yet. */
  graceMs?: number;
  /** Dead-letter topics to create (or only check) before the first transaction; none when dead letters are off. */
  deadLetters?: { topic(input: string): string; create: boolean; replicationFactor: number };
}

/**
 * Checks before the clients start; returns why the worker must not start, if it must not.
 * Missing input topics are a configuration error (a typo would otherwise leave the worker silently
 * unassigned). When Kafka cannot be asked, the error is thrown: the worker runs the checks again in
 * its reconnect loop, before the clients start.
 * Retry topics mirror their input topic's partition count; they are created here so a stage needs no
 * set-up. Declared outputs must exist and dead-letter topics are created (topic-setup.ts), so no
 * transaction waits for a topic that is not there.
 */
export async function runStartupChecks(d: StartupCheckDeps): Promise<string | undefined> {
  let missing: string[];
  try {
    missing = await missingInputTopics(d);
  } catch (e) {
    const stop = d.stops(classifyKafkaError(e, 'admin'));
    if (stop !== undefined) return stop;
    // Kafka cannot be asked: the caller runs the checks again once it can (the reconnect loop).
    throw e;
  }
  if (missing.length > 0)
    return (
      `configuration error: input topic(s) ${missing.join(', ')} of stage ${d.stage.name} do not exist ` +
      `on ${d.bootstrapServers}; create them or fix the stage's input topics` +
      hiddenTopicsHint(missing, 'READ')
    );
  try {
    await ensureRetryTopics(d);
    return await prepareOutputTopics(d.admin, {
      stage: d.stage.name,
      inputs: d.stage.inputTopics,
      outputs: d.stage.outputTopics,
      ...(d.deadLetters ? { deadLetterTopic: (t: string) => d.deadLetters!.topic(t) } : {}),
      create: d.deadLetters?.create ?? true,
      replicationFactor: d.deadLetters?.replicationFactor ?? -1,
      bootstrapServers: d.bootstrapServers,
      clock: d.clock,
      ...(d.graceMs !== undefined ? { graceMs: d.graceMs } : {}),
    });
  } catch (e) {
    const stop = d.stops(classifyKafkaError(e, 'admin'));
    if (stop !== undefined) return stop;
    throw e;
  }
}

async function missingInputTopics(d: StartupCheckDeps): Promise<string[]> {
  const deadline = d.clock.now() + (d.graceMs ?? 10_000);
  for (;;) {
    const known = new Set(await d.admin.listTopics(d.apiTimeoutMs));
    const missing = d.stage.inputTopics.filter((t) => !known.has(t));
    if (missing.length === 0 || d.clock.now() >= deadline) return missing;
    await d.clock.sleep(500);
  }
}

async function ensureRetryTopics(d: StartupCheckDeps): Promise<void> {
  const rt = d.retryTopics;
  if (!rt) return;
  for (const input of d.stage.inputTopics) {
    const partitions = (await d.admin.watermarks(input)).length;
    const topics = retryTopicsOf([input], rt);
    await d.admin.createTopics(topics.map((topic) => ({ topic, partitions, replicationFactor: -1 })));
  }
}
