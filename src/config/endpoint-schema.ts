import { z } from 'zod';
import { intBetween, nonEmptyString, positiveNumber } from './value-schemas.ts';

/**
 * `endpoints`: who may read the HTTP endpoints (the workers' /livez, /readyz, /metrics and the web
 * dashboard). They bind to loopback by default; binding another address (`dashboard.host`,
 * `runtime.health_host`, `--health-host`) needs an access token, which every request then carries
 * (see endpoint-access.ts). The token itself is never a key of this file: it comes from
 * HAMSTRING_ACCESS_TOKEN, or from the file HAMSTRING_ACCESS_TOKEN_FILE or `access_token_file` names.
 */
/**
 * `endpoints.limits`: what one request to the health server or the dashboard may cost, so a
 * hostile or broken client cannot hold sockets or memory. The defaults suit probes, Prometheus and
 * a browser; none of the endpoints reads a request body.
 */
const limitsSchema = z.strictObject({
  /** A longer request target (path and query) gets 414. */
  max_url_bytes: intBetween(256, 1024 * 1024).default(4 * 1024),
  /** Request line and headers together; more gets 431 from the HTTP parser, before any route. */
  max_header_bytes: intBetween(1024, 1024 * 1024).default(16 * 1024),
  /** A request announcing or sending a longer body gets 413 and is disconnected. */
  max_body_bytes: intBetween(0, 64 * 1024 * 1024).default(1024),
  /** A client that has not sent its headers by then (slowloris) gets 408 and is disconnected. */
  headers_timeout_seconds: positiveNumber().default(10),
  /** The same for the whole request, body included; at least headers_timeout_seconds. */
  request_timeout_seconds: positiveNumber().default(30),
  /** Sockets open at once; more are closed as they arrive. */
  max_connections: intBetween(1, 65_535).default(256),
});

export const endpointsSchema = z.strictObject({
  /** File holding the access token (one line; a trailing newline is dropped). */
  access_token_file: nonEmptyString().optional(),
  limits: limitsSchema
    .refine((l) => l.request_timeout_seconds >= l.headers_timeout_seconds, {
      error: 'request_timeout_seconds >= headers_timeout_seconds',
      path: ['request_timeout_seconds'],
    })
    .prefault({}),
});

/** `runtime.health_host`: the address the health server binds. */
export const healthHostSchema = nonEmptyString().default('127.0.0.1');

export type EndpointsConfig = z.output<typeof endpointsSchema>;
