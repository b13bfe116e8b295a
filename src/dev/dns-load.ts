import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable } from './executables.ts';

const run = promisify(execFile);

/**
 * Real DNS queries from Debian's `dig` and `dnsperf` (tests, benchmarks, the resolver demo). Every
 * address of 127.0.0.0/8 is loopback on Linux, so `dig -b 127.0.0.N` makes each simulated host ask
 * from its own address, and the resolver sees (and its dnstap reports) that address.
 */
export interface DigQuery {
  readonly from: string;
  readonly name: string;
  readonly type: string;
}

/** Runs every query with one `dig` process (batch mode, one query per line); returns dig's output. */
export async function digBatch(o: {
  dir: string;
  server: string;
  port: number;
  queries: readonly DigQuery[];
}): Promise<string> {
  const dig = findExecutable('dig');
  if (dig === undefined) throw new Error("dig not found: install Debian's bind9-dnsutils (scripts/setup.sh)");
  const file = join(o.dir, `dig-${process.pid}-${Date.now()}.txt`);
  writeFileSync(file, o.queries.map((q) => `-b ${q.from} ${q.name} ${q.type}`).join('\n') + '\n');
  const { stdout } = await run(
    dig,
    ['+tries=1', '+time=2', '-p', String(o.port), `@${o.server}`, '-f', file],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return stdout;
}

export interface DnsperfResult {
  readonly sent: number;
  readonly completed: number;
  readonly lost: number;
  readonly qps: number;
  readonly output: string;
}

/** A sustained `dnsperf` run: `queries` cycled for `seconds`, at most `maxQps` (0: as fast as it can). */
export async function runDnsperf(o: {
  dir: string;
  port: number;
  queries: readonly { name: string; type: string }[];
  seconds: number;
  maxQps?: number;
  clients?: number;
  localAddress?: string;
}): Promise<DnsperfResult> {
  const dnsperf = findExecutable('dnsperf');
  if (dnsperf === undefined)
    throw new Error("dnsperf not found: install Debian's dnsperf (scripts/setup.sh)");
  const file = join(o.dir, `dnsperf-${process.pid}-${Date.now()}.txt`);
  writeFileSync(file, o.queries.map((q) => `${q.name} ${q.type}`).join('\n') + '\n');
  const args = [
    '-s',
    '127.0.0.1',
    '-p',
    String(o.port),
    '-d',
    file,
    '-l',
    String(o.seconds),
    '-c',
    String(o.clients ?? 4),
  ];
  if (o.maxQps !== undefined && o.maxQps > 0) args.push('-Q', String(o.maxQps));
  if (o.localAddress !== undefined) args.push('-a', o.localAddress);
  const { stdout } = await run(dnsperf, args, { maxBuffer: 16 * 1024 * 1024 });
  const number = (label: string): number => {
    const m = new RegExp(`${label}:\\s+([\\d.]+)`).exec(stdout);
    if (m === null) throw new Error(`dnsperf: no "${label}" in its output:\n${stdout}`);
    return Number(m[1]);
  };
  return {
    sent: number('Queries sent'),
    completed: number('Queries completed'),
    lost: number('Queries lost'),
    qps: number('Queries per second'),
    output: stdout,
  };
}
