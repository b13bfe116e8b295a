import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { EndpointsConfig } from '../config/endpoint-schema.ts';

/**
 * What every HTTP server of the project (the health server, the dashboard) does before a request
 * reaches its routes, and the limits it is created with:
 * - bounded headers, URLs and time: a request whose headers exceed `maxHeaderBytes` gets 431 (from
 *   Node's parser, before any of our code runs), a URL longer than `maxUrlLength` 414, a body
 *   announced longer than `maxBodyBytes` 413 (one sent chunked past it: the socket is closed); a client
 *   that sends its headers slower than `headersTimeoutMs` (slowloris) or its whole request slower
 *   than `requestTimeoutMs` gets 408 and is disconnected, at most `checkIntervalMs` late; at most
 *   `maxConnections` sockets are open at once;
 * - the access token, when one is configured: `Authorization: Bearer <token>`, or the HttpOnly
 *   cookie {@link TOKEN_COOKIE}, which a browser gets by opening any page once with
 *   `?access_token=<token>` (it is answered with the cookie and a redirect to the same page without
 *   the token, so the token stays out of the history and of Referer headers). Anything else: 401.
 *   Tokens are compared in constant time (digests of equal length through timingSafeEqual).
 */
export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  checkIntervalMs: number;
  maxHeaderBytes: number;
  maxUrlLength: number;
  maxBodyBytes: number;
  maxConnections: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  maxUrlLength: 4 * 1024,
  maxBodyBytes: 1024,
  maxConnections: 256,
};

/** The limits config.yaml's `endpoints.limits` sets (its defaults are {@link DEFAULT_HTTP_LIMITS}). */
export function httpLimitsFromConfig(endpoints: Pick<EndpointsConfig, 'limits'>): HttpLimits {
  const l = endpoints.limits;
  return {
    ...DEFAULT_HTTP_LIMITS,
    headersTimeoutMs: Math.round(l.headers_timeout_seconds * 1000),
    requestTimeoutMs: Math.round(l.request_timeout_seconds * 1000),
    maxHeaderBytes: l.max_header_bytes,
    maxUrlLength: l.max_url_bytes,
    maxBodyBytes: l.max_body_bytes,
    maxConnections: l.max_connections,
  };
}

export const TOKEN_COOKIE = 'hamstring_token';
export const TOKEN_QUERY = 'access_token';

/** Options for `http.createServer` that apply {@link HttpLimits}. */
export function serverOptions(limits: HttpLimits): ServerOptions {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: limits.checkIntervalMs,
  };
}

/** The limits that are server properties rather than creation options. */
export function applyLimits(server: Server, limits: HttpLimits): void {
  server.maxConnections = limits.maxConnections;
  // Header lines beyond this are dropped by the parser rather than kept.
  server.maxHeadersCount = 100;
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
}

/** Whether `given` is the token, in time independent of where they differ. */
export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const m = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

function cookie(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === TOKEN_COOKIE) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function plain(
  res: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : `${text}\n`);
}

/**
 * False (after answering 413) when the announced body is too long. A body without a length (chunked)
 * is counted as it arrives: past the limit the socket is closed, so no client streams into an
 * endpoint for long.
 */
function bodyWithin(req: IncomingMessage, res: ServerResponse, max: number): boolean {
  const announced = req.headers['content-length'];
  if (announced !== undefined && Number(announced) > max) {
    res.setHeader('connection', 'close');
    plain(res, 413, `request body too large: at most ${max} bytes`);
    res.on('finish', () => req.socket.destroy());
    return false;
  }
  if (req.headers['transfer-encoding'] === undefined) return true;
  let received = 0;
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received <= max) return;
    // The route may be answering already: closing is the one answer that cannot collide with it.
    req.socket.destroy();
  });
  return true;
}

/**
 * Checks a request against the limits and the token. Returns true when the route may run; otherwise
 * it has answered (414, 413, 400, 401, or the 303 that sets the cookie) and the caller does nothing more.
 */
export function admit(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { token?: string | undefined; limits: HttpLimits },
): boolean {
  const raw = req.url ?? '/';
  if (raw.length > opts.limits.maxUrlLength) {
    plain(res, 414, `URI too long: at most ${opts.limits.maxUrlLength} characters`);
    return false;
  }
  if (!bodyWithin(req, res, opts.limits.maxBodyBytes)) return false;
  let url: URL;
  try {
    url = new URL(raw, 'http://endpoint');
  } catch {
    plain(res, 400, 'bad request URL');
    return false;
  }
  const token = opts.token;
  if (token === undefined) return true;
  if (tokenMatches(token, bearer(req)) || tokenMatches(token, cookie(req))) return true;
  const fromQuery = url.searchParams.get(TOKEN_QUERY) ?? undefined;
  if (tokenMatches(token, fromQuery)) {
    url.searchParams.delete(TOKEN_QUERY);
    plain(res, 303, 'see other', {
      location: `${url.pathname}${url.search}`,
      'set-cookie': `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
    });
    return false;
  }
  plain(res, 401, 'unauthorized: send Authorization: Bearer <token>', {
    'www-authenticate': 'Bearer realm="hamstring"',
  });
  return false;
}
