import { errorText } from '../errors/error-text.ts';

/**
 * Why a ClickHouse call failed, decided once here from ClickHouse's error code (or Node's socket
 * and TLS error codes) and used by every caller: the agent's log lines and metrics, its choice
 * between retrying and stopping, and the sink's choice between dead-lettering a row and
 * reconnecting.
 * - `authentication`: the user is unknown, the password wrong or missing, or the address not allowed;
 * - `access-denied`: logged in, but the user may not do this (readonly, missing grant);
 * - `tls`: the server's certificate is not trusted (wrong CA, host name mismatch, expired);
 * - `unreachable`: no answer (refused, reset, DNS, timeout);
 * - `rejected-row`: the data cannot be inserted (parse, type and size errors): dead-letter it;
 * - `server`: any other server error (a retry after a reconnect may fix it).
 */
export type ClickHouseFailureKind =
  'authentication' | 'access-denied' | 'tls' | 'unreachable' | 'rejected-row' | 'server';

/** What each kind means, for log messages. */
export const FAILURE_TEXT: Record<ClickHouseFailureKind, string> = {
  authentication: 'authentication failed (check the user and password)',
  'access-denied': 'access denied to the user',
  tls: 'TLS: server certificate not trusted (check the CA file and host name)',
  unreachable: 'unreachable',
  'rejected-row': 'row rejected by ClickHouse',
  server: 'server error',
};

// UNKNOWN_USER, WRONG_PASSWORD, REQUIRED_PASSWORD, IP_ADDRESS_NOT_ALLOWED, AUTHENTICATION_FAILED.
const AUTHENTICATION_CODES = new Set(['192', '193', '194', '195', '516']);
// READONLY, ACCESS_DENIED.
const ACCESS_CODES = new Set(['164', '497']);
// Parsing, type and size errors: this data cannot be inserted, whatever the server's state.
const DATA_CODES = new Set(['6', '26', '27', '38', '41', '53', '69', '70', '72', '117', '131']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EPIPE',
]);
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
]);

function codeOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : undefined;
}

/** The kind of a failure, looking through `cause` chains (the agent wraps client errors). */
export function classifyClickHouseError(e: unknown): ClickHouseFailureKind {
  for (let cur: unknown = e, depth = 0; cur !== undefined && cur !== null && depth < 5; depth += 1) {
    const kind = (cur as { kind?: unknown }).kind;
    if (typeof kind === 'string' && kind in FAILURE_TEXT) return kind as ClickHouseFailureKind;
    const code = codeOf(cur);
    if (code !== undefined) {
      if (AUTHENTICATION_CODES.has(code)) return 'authentication';
      if (ACCESS_CODES.has(code)) return 'access-denied';
      if (DATA_CODES.has(code)) return 'rejected-row';
      if (TLS_CODES.has(code)) return 'tls';
      if (NETWORK_CODES.has(code)) return 'unreachable';
    }
    cur = (cur as { cause?: unknown }).cause;
  }
  // Servers before 20.x answer a failed login with HTTP 500 and the code only in the text.
  const text = errorText(e);
  const inText = /Code: (\d+)/.exec(text)?.[1];
  if (inText !== undefined && AUTHENTICATION_CODES.has(inText)) return 'authentication';
  if (inText !== undefined && ACCESS_CODES.has(inText)) return 'access-denied';
  if (/certificate|self[- ]signed/i.test(text)) return 'tls';
  if (/ECONNREFUSED|ECONNRESET|ENOTFOUND|socket hang up|timeout|no answer within/i.test(text))
    return 'unreachable';
  return 'server';
}

/** True for failures that waiting and retrying cannot fix: only the operator can. */
export function needsOperator(kind: ClickHouseFailureKind): boolean {
  return kind === 'authentication' || kind === 'access-denied' || kind === 'tls';
}
