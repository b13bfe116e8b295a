import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnDetached, type DetachedProcess } from './process-control.ts';
import type { kafkaNodeFiles } from './kafka-state.ts';

const execFileAsync = promisify(execFile);

type NodeFiles = ReturnType<typeof kafkaNodeFiles>;

/** The JVM and Kafka installation used to run nodes. */
export interface KafkaRuntime {
  java: string;
  libsDir: string;
  heapMb: number;
}

/**
 * JVM arguments of one node. The heap stays modest because up to four brokers share two cores
 * in tests; G1 with short pauses is what Kafka's own start script uses. These nodes live minutes
 * (tests, the demo) beside the code under test: the C1 compiler alone (TieredStopAtLevel=1) spares
 * the C2 compilations that never pay off in that time. It halved a node's CPU over its start and
 * 200,000 transactional records, at the same throughput.
 */
export function kafkaNodeJvmArgs(runtime: KafkaRuntime, files: NodeFiles): string[] {
  return [
    `-Xms${Math.min(256, runtime.heapMb)}m`,
    `-Xmx${runtime.heapMb}m`,
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:+ExitOnOutOfMemoryError',
    '-XX:TieredStopAtLevel=1',
    '-Djava.awt.headless=true',
    `-Dlog4j2.configurationFile=${files.log4j2}`,
    '-cp',
    join(runtime.libsDir, '*'),
    'kafka.Kafka',
    files.serverProperties,
  ];
}

/** Formats a node's log dir for `clusterId` (static quorum: no --standalone). */
export async function formatKafkaNode(
  runtime: KafkaRuntime,
  clusterId: string,
  files: NodeFiles,
  extraArgs: readonly string[] = [],
): Promise<void> {
  const args = [
    '-Xmx256m',
    '-XX:TieredStopAtLevel=1',
    `-Dlog4j2.configurationFile=${files.log4j2}`,
    '-cp',
    join(runtime.libsDir, '*'),
    'kafka.tools.StorageTool',
    'format',
    '-t',
    clusterId,
    '-c',
    files.serverProperties,
    '-g',
    ...extraArgs,
  ];
  try {
    await execFileAsync(runtime.java, args, { cwd: files.dir, timeout: 120_000 });
  } catch (error) {
    const e = error as Error & { stdout?: string; stderr?: string };
    const output = summarizeJavaOutput(`${e.stdout ?? ''}\n${e.stderr ?? ''}`);
    throw new Error(`formatting Kafka storage in ${files.logDir} failed: ${output || e.message}`);
  }
}

/**
 * The exception lines of a JVM's output without the stack frames (which say nothing to a user
 * about a bad setting), else its last lines.
 */
export function summarizeJavaOutput(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean);
  const exceptions = [...new Set(lines.filter((l) => /(Exception|Error)\b/.test(l) && !/^\s+at /.test(l)))];
  return (exceptions.length > 0 ? exceptions.slice(0, 3) : lines.slice(-5)).join('\n');
}

/** Starts a node detached; its command line contains `files.serverProperties`, the process marker. */
export function launchKafkaNode(runtime: KafkaRuntime, files: NodeFiles): DetachedProcess {
  return spawnDetached(runtime.java, kafkaNodeJvmArgs(runtime, files), {
    cwd: files.dir,
    outputFile: files.processLog,
  });
}
