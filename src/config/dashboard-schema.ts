import { z } from 'zod';
import { intBetween, nonEmptyString, positiveInt } from './value-schemas.ts';

/** `dashboard`: the web dashboard that `hamstring up` serves. */
export const dashboardSchema = z.strictObject({
  enabled: z.boolean({ error: 'true or false' }).default(true),
  /** Interface to bind; 0.0.0.0 makes it reachable from other machines. */
  host: nonEmptyString().default('127.0.0.1'),
  /** 0 picks a free port (the URL printed at start names it). */
  port: intBetween(0, 65535).default(8080),
  /** How often the pages refresh and the workers' metrics are sampled. */
  refresh_ms: positiveInt(60_000).default(2_000),
  /** How far back the charts look. */
  window_minutes: positiveInt(24 * 60).default(15),
});

export type DashboardConfig = z.output<typeof dashboardSchema>;
