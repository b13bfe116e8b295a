import { readdirSync, readFileSync } from 'node:fs';

/** Resident set of a process in bytes from Linux's /proc: in all (VmRSS), anonymous and file-backed. */
export interface Rss {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
}

/** {@link Rss} of a process; zeros once it is gone. */
export function procRss(pid: number): Rss {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') + kb('RssShmem') };
  } catch {
    return { rss: 0, anon: 0, file: 0 };
  }
}

/**
 * Proportional set size of a process in bytes (Pss of /proc/<pid>/smaps_rollup): each page shared
 * with other processes (node's binary, its libraries) counted as a share, so the sum over processes
 * is the memory they take together; 0 once it is gone.
 */
export function procPssBytes(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    return Number(/^Pss:\s+(\d+) kB$/m.exec(rollup)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Parent pid of every live process, from /proc/<pid>/stat (the field after the command's `)`). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone between the listing and the read
    }
  }
  return out;
}

/**
 * `root` and its descendants, root first, each after its parent: a launcher and the process it
 * relaunched, or a shell and what it started. A root that is gone gives an empty list.
 */
export function processTree(root: number): number[] {
  const ppid = parents();
  if (!ppid.has(root)) return [];
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1)
    for (const [pid, parent] of ppid) if (parent === tree[i]) tree.push(pid);
  return tree;
}

/** The command line of a process, arguments joined by spaces ('' once it is gone). */
export function procCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}
