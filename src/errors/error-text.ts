import { scrubSecrets } from './secrets.ts';

/**
 * One line for a log field or a message: `Name: message` of an Error, the text of anything else.
 * Registered secrets are replaced (src/errors/secrets.ts): error texts end up in logs, dead-letter
 * headers, reports and HTTP responses.
 */
export function errorText(e: unknown): string {
  return scrubSecrets(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
}
