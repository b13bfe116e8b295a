/**
 * The process's secrets (passwords, tokens, SASL secrets), kept so that no text leaving the process
 * can carry one: the logger's output stream, `errorText` and the HTTP endpoints' error bodies pass
 * through {@link scrubSecrets}. A client that echoes its configuration in an error message (a URL
 * with credentials, a librdkafka property dump) is caught here, whatever the message's shape.
 *
 * Whoever reads a secret (config loading, env, a password file) registers it once with
 * {@link registerSecret}. Values shorter than {@link MIN_SECRET_LENGTH} are not registered: replacing
 * every "a" in every log line would destroy the logs and hide nothing worth hiding.
 */

export const REDACTED = '[REDACTED]';
export const MIN_SECRET_LENGTH = 4;

const secrets = new Set<string>();
let pattern: RegExp | undefined;

/**
 * Adds a secret to the scrub list, with the forms it takes inside a URL (percent-encoded) and inside
 * a JSON string (escaped), as log lines are JSON.
 */
export function registerSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
  const before = secrets.size;
  for (const form of [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)])
    secrets.add(form);
  if (secrets.size !== before) pattern = undefined;
}

/** Forgets every registered secret (tests). */
export function clearSecrets(): void {
  secrets.clear();
  pattern = undefined;
}

/** True when at least one secret is registered (the logger skips scrubbing otherwise). */
export function hasSecrets(): boolean {
  return secrets.size > 0;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` with every registered secret, and the password of any `scheme://user:password@` URL, replaced. */
export function scrubSecrets(text: string): string {
  let out = text.includes('://') ? text.replace(/(\/\/[^/\s:@]+:)[^/\s@]+@/g, `$1${REDACTED}@`) : text;
  if (secrets.size === 0) return out;
  // Longest first, so a secret containing another is replaced whole.
  pattern ??= new RegExp(
    [...secrets]
      .sort((a, b) => b.length - a.length)
      .map(escapeRegExp)
      .join('|'),
    'g',
  );
  out = out.replace(pattern, REDACTED);
  return out;
}
