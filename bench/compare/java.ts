/**
 * The Java side of bench:compare: builds bench/java with Maven (clients of the broker's own Kafka
 * version, from dev/kafka.env) and starts its classes as child processes.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PROJECT = `${ROOT}bench/java`;

/** KAFKA_VERSION of dev/kafka.env: the version of the broker the dev tooling runs. */
export function brokerKafkaVersion(): string {
  const m = /^KAFKA_VERSION=(\S+)/m.exec(readFileSync(`${ROOT}dev/kafka.env`, 'utf8'));
  if (!m) throw new Error('dev/kafka.env has no KAFKA_VERSION');
  return m[1]!;
}

/** Compiles the peers and copies their dependencies; returns the class path. */
export function buildJavaPeers(kafkaVersion: string): string {
  execFileSync(
    'mvn',
    [
      '-q',
      '-f',
      `${PROJECT}/pom.xml`,
      `-Dkafka.version=${kafkaVersion}`,
      'compile',
      'dependency:copy-dependencies',
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  return `${PROJECT}/target/classes:${PROJECT}/target/dependency/*`;
}

/** Starts `hamstring.bench.<main>` with key=value arguments. */
export function startJava(
  classPath: string,
  main: string,
  args: Record<string, string | number>,
): ChildProcess {
  return spawn(
    'java',
    ['-cp', classPath, `hamstring.bench.${main}`, ...Object.entries(args).map(([k, v]) => `${k}=${v}`)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
}

/** What the Observer reports at the end (see bench/java/.../Observer.java). */
export interface ObserverResult {
  timedOut: boolean;
  /** [epoch ms, sum of the output's read_committed end offsets, sum of the group's committed offsets] */
  samples: [number, number, number][];
  check: {
    expected: number;
    records: number;
    distinct: number;
    duplicates: number;
    missing: number;
    malformed: number;
    endOffsets: number;
  };
}

/** The Observer process and its protocol lines as promises. */
export class ObserverProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly result: Promise<ObserverResult>;

  constructor(classPath: string, args: Record<string, string | number>) {
    this.child = startJava(classPath, 'Observer', args);
    const lines = createInterface({ input: this.child.stdout! });
    const exited = new Promise<never>((_, reject) =>
      this.child.once('exit', (code) => reject(new Error(`observer exited (${code}) early`))),
    );
    this.ready = Promise.race([lineStartingWith(lines, 'ready').then(() => undefined), exited]);
    this.result = Promise.race([
      lineStartingWith(lines, 'result ').then((l) => JSON.parse(l.slice('result '.length)) as ObserverResult),
      exited,
    ]);
    this.ready.catch(() => undefined);
    this.result.catch(() => undefined);
  }
}

function lineStartingWith(lines: ReturnType<typeof createInterface>, prefix: string): Promise<string> {
  return new Promise((resolve) => {
    const on = (line: string) => {
      if (!line.startsWith(prefix)) return;
      lines.off('line', on);
      resolve(line);
    };
    lines.on('line', on);
  });
}
