/** What a verification worker (worker-main.ts) reports on stdout, one JSON object per line. */
export type WorkerEvent =
  | { e: 'ready'; at: number }
  | { e: 'commit'; at: number; records: number; attempt: string }
  | { e: 'abort'; at: number; attempt: string }
  | { e: 'stall'; at: number; ms: number }
  /** A recovery the worker ran: `what` is `<situation> <code> (<kind>) on <operation> -> <action>`. */
  | { e: 'recovery'; at: number; what: string }
  | { e: 'unhealthy'; at: number; state: string; lastLoopAt: number }
  | { e: 'stopped'; at: number; failure?: string | undefined };
