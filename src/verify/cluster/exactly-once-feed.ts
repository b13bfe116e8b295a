import { classifyKafkaError } from '../../kafka/classify.ts';
import { createProducer, type ProducerPort } from '../../kafka/producer.ts';
import type { KafkaError } from '../../kafka/kafka-error.ts';
import { silentLogger } from '../../observability/logger.ts';

/**
 * The machine-loss run's feed: the lines go to the input topic in transactions of what came due in
 * each quarter second, so that a line is in the input topic once, read_committed, however the
 * outage goes. The idempotent feed (feed.ts) sends each line once, yet an earlier run found one
 * line twice in the input topic, written while its partition's leader was the machine cut off.
 * The feed's librdkafka debug log of a later run shows the opening: once the cut-off broker
 * leaves the metadata, librdkafka destroys its handle and fails the requests still in flight to
 * it as not persisted (actions Refresh,MsgNotPersisted), although they reached the broker before
 * the cut and may have been replicated; should a sequence error follow, librdkafka's idempotent
 * recovery bumps the epoch and renumbers such records (drain and bump), and the new leader can no
 * longer tell them from new ones. In a transaction such failures end in an abortable error: the
 * aborted copies stay invisible to read_committed readers (the logserver, the accounting), and the
 * feed sends the quarter second again.
 */

export interface ExactlyOnceFeedResult {
  readonly written: number;
  readonly transactions: number;
  /** Transactions aborted and sent again (each is an outage the feed rode out). */
  readonly resent: number;
}

/** Lines per transaction are those due within this long of each other. */
const SLICE_MS = 250;
/** How long one slice may take to reach the topic, outages included, before the feed gives up. */
const SLICE_DEADLINE_MS = 300_000;
const API_TIMEOUT_MS = 30_000;

/**
 * Writes `lines` to `topic` spread evenly over `spreadMs`, each slice in one transaction.
 * @throws Error when a slice could not be written within SLICE_DEADLINE_MS, or a commit ended
 *   with an outcome the feed cannot know (fatal while committing): the accounting would blame the
 *   pipeline for either.
 */
export async function feedExactlyOnce(
  bootstrap: string,
  topic: string,
  lines: readonly { readonly value: string | Buffer }[],
  spreadMs: number,
): Promise<ExactlyOnceFeedResult> {
  const transactionalId = `machine-loss-feed-${process.pid}-${Date.now()}`;
  let producer = await startProducer(bootstrap, transactionalId);
  let transactions = 0;
  let resent = 0;
  try {
    const began = Date.now();
    for (let i = 0; i < lines.length;) {
      const wait = began + (spreadMs * i) / lines.length - Date.now();
      if (wait > 5) await sleep(wait);
      // Everything due by the end of this slice (more after an outage held the feed back).
      const until = Date.now() - began + SLICE_MS;
      let end = i + 1;
      while (end < lines.length && (spreadMs * end) / lines.length <= until) end += 1;
      const slice = lines.slice(i, end);
      const deadline = Date.now() + SLICE_DEADLINE_MS;
      for (;;) {
        const outcome = await writeSlice(producer, topic, slice, deadline);
        transactions += 1;
        if (outcome === 'committed') break;
        resent += 1;
        if (Date.now() > deadline)
          throw new Error(`the feed could not write lines ${i}-${end - 1} in ${SLICE_DEADLINE_MS} ms`);
        if (outcome === 'new-producer') {
          // Init with the same transactional id fences the old producer and aborts what it left open.
          await producer.close(5_000);
          producer = await startProducer(bootstrap, transactionalId);
        }
        await sleep(500);
      }
      i = end;
    }
  } finally {
    await producer.close(10_000);
  }
  return { written: lines.length, transactions, resent };
}

/**
 * One transaction of `slice`: `committed`, or what must happen before it is sent again (`aborted`:
 * the same producer; `new-producer`: the abort itself failed).
 * @throws KafkaError when the commit's outcome is unknown (a fatal error while committing, or a
 *   commit still unresolved at `deadline`).
 */
async function writeSlice(
  producer: ProducerPort,
  topic: string,
  slice: readonly { readonly value: string | Buffer }[],
  deadline: number,
): Promise<'committed' | 'aborted' | 'new-producer'> {
  try {
    await producer.beginTransaction();
    for (const line of slice) await producer.produce({ topic, key: null, value: line.value });
  } catch {
    // Nothing of this transaction was committed: abort it and send the slice again.
    return abortOrReplace(producer);
  }
  for (;;) {
    try {
      await producer.commitTransaction();
      return 'committed';
    } catch (e) {
      const err = classifyKafkaError(e, 'commit-transaction');
      if (err.flags.txnRequiresAbort || err.kind === 'abortable') return abortOrReplace(producer);
      // A commit librdkafka timed out is still under way inside it: calling commit again resumes
      // it and tells its outcome; aborting or replacing the producer now could commit it unseen.
      if (resumable(err) && Date.now() < deadline) continue;
      throw err;
    }
  }
}

const resumable = (err: KafkaError): boolean => err.kind === 'retriable' || err.kind === 'transport';

async function abortOrReplace(producer: ProducerPort): Promise<'aborted' | 'new-producer'> {
  try {
    await producer.abortTransaction();
    return 'aborted';
  } catch {
    return 'new-producer';
  }
}

async function startProducer(bootstrap: string, transactionalId: string): Promise<ProducerPort> {
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'machine-loss-feed',
      transactionalId,
      transactionTimeoutMs: 60_000,
      // Below the transaction timeout: a record that cannot be delivered fails its transaction,
      // which the feed aborts and sends again.
      messageTimeoutMs: 50_000,
      apiTimeoutMs: API_TIMEOUT_MS,
    },
    silentLogger(),
  );
  try {
    await producer.connect(60_000);
    // The coordinator may be moving (the machine cut off held it): init again until it answers.
    for (let attempt = 1; ; attempt += 1) {
      try {
        await producer.initTransactions();
        return producer;
      } catch (e) {
        const err = classifyKafkaError(e, 'init-transactions');
        if (!resumable(err) || attempt >= 10) throw err;
        await sleep(1_000);
      }
    }
  } catch (e) {
    await producer.close(1_000);
    throw e;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
