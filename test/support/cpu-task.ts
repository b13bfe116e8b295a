/** A CPU-bound task for ThreadPool tests: spins for `ms` milliseconds without yielding. */
export default function spin(ms: number): number {
  const until = Date.now() + ms;
  let n = 0;
  while (Date.now() < until) n += 1;
  return n;
}
