import { createReadCommittedReader } from '../../src/kafka/read-committed-reader.ts';

/**
 * The JSON lines of one topic, read read_committed until `done` says enough (or `timeoutMs`
 * passed), then 1.5 s more: a line beyond what the test expects (a duplicate, or a stray line from
 * a sender that should have been refused) arrives with the expected ones, and must be seen to fail.
 */
export async function readTopicLines(o: {
  bootstrap: string;
  topic: string;
  clientId: string;
  done: (lines: readonly Record<string, string>[]) => boolean;
  timeoutMs?: number;
}): Promise<Record<string, string>[]> {
  const reader = createReadCommittedReader({ bootstrap: o.bootstrap, clientId: o.clientId });
  await reader.connect(30_000);
  reader.subscribe([o.topic]);
  const lines: Record<string, string>[] = [];
  const deadline = Date.now() + (o.timeoutMs ?? 60_000);
  try {
    while (!o.done(lines) && Date.now() < deadline)
      for (const r of await reader.consume(1000, 500))
        lines.push(JSON.parse(String(r.value)) as Record<string, string>);
    for (const r of await reader.consume(1000, 1500))
      lines.push(JSON.parse(String(r.value)) as Record<string, string>);
  } finally {
    await reader.close(10_000);
  }
  return lines;
}
