import { readFileSync } from 'node:fs';

/**
 * CPU seconds (utime + stime) of a process, or of one thread with `tid`, from Linux's /proc; NaN
 * where there is no /proc, 0 once the process is gone. Clock ticks are 10 ms on Linux.
 */
export function procCpuSeconds(pid: number | undefined, tid?: number): number {
  if (pid === undefined) return 0;
  try {
    const path = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' && process.platform === 'linux' ? 0 : NaN;
  }
}
