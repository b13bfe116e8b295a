import { z } from 'zod';
import { nonEmptyString } from './value-schemas.ts';

/**
 * `endpoints`: who may read the HTTP endpoints (the workers' /livez, /readyz, /metrics and the web
 * dashboard). They bind to loopback by default; binding another address (`dashboard.host`,
 * `runtime.health_host`, `--health-host`) needs an access token, which every request then carries
 * (see endpoint-access.ts). The token itself is never a key of this file: it comes from
 * HAMSTRING_ACCESS_TOKEN, or from the file HAMSTRING_ACCESS_TOKEN_FILE or `access_token_file` names.
 */
export const endpointsSchema = z.strictObject({
  /** File holding the access token (one line; a trailing newline is dropped). */
  access_token_file: nonEmptyString().optional(),
});

/** `runtime.health_host`: the address the health server binds. */
export const healthHostSchema = nonEmptyString().default('127.0.0.1');

export type EndpointsConfig = z.output<typeof endpointsSchema>;
