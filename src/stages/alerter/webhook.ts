import type { HamstringConfig } from '../../config/index.ts';
import { NonRetryableError, type ProcessResult, type Stage } from '../../runtime/index.ts';
import { decodeOutgoingAlert } from './alerter.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';
import { errorText } from '../../errors/error-text.ts';
import { registerSecret } from '../../errors/secrets.ts';

export const WEBHOOK_STAGE = 'data_alerting.webhook';

/** The endpoint answered with a status that retrying cannot change (e.g. 400, 401, 404). */
export class WebhookRefusedError extends NonRetryableError {
  override readonly name = 'WebhookRefusedError';
  override readonly code = 'WEBHOOK_REFUSED';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message, 'webhook-refused');
  }
}

/** A failed POST worth retrying: network error, timeout, 408, 425, 429 or 5xx. */
export class WebhookUnavailableError extends HamstringError {
  override readonly name = 'WebhookUnavailableError';
  readonly code = 'WEBHOOK_UNAVAILABLE';
}

/** Statuses after which the same request may succeed later. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/**
 * The URL as errors and logs may show it: scheme, host and port only. Webhook URLs often carry their
 * secret in the path or the query (Slack, Teams, `?token=`), and errors end up in logs and
 * dead-letter headers.
 */
export function shownUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return '(invalid URL)';
  }
}

/** Names of headers and query parameters whose values are credentials. */
const SECRET_NAME = /auth|token|key|secret|signature|password|cookie|sig$/i;

/** Registers the URL's password, credential-named query values and header values as secrets (src/errors/secrets.ts). */
function registerWebhookSecrets(url: string, headers: Record<string, string>): void {
  try {
    const u = new URL(url);
    registerSecret(decodeURIComponent(u.password));
    for (const [name, value] of u.searchParams) if (SECRET_NAME.test(name)) registerSecret(value);
  } catch {
    // An invalid URL fails the first POST with its own error.
  }
  for (const [name, value] of Object.entries(headers)) if (SECRET_NAME.test(name)) registerSecret(value);
}

export interface WebhookSinkOptions {
  readonly config: HamstringConfig;
  /** Injected in tests; the global `fetch` otherwise. */
  readonly fetch?: typeof fetch;
}

/**
 * A sink for a worker in `at-least-once` mode: reads `external_kafka_topic` and POSTs each alert
 * as JSON, in order, with `Idempotency-Key: <alert_id>`. The offsets commit only after every POST
 * of the batch succeeded, so a crash or an abort repeats POSTs, and the key lets the receiver drop
 * what it already has. A failing POST fails only its record: the runtime pauses that partition and
 * retries it with back-off (`environment.record_errors`), and dead-letters it to
 * `<topic><dead_letter_suffix>` when it keeps failing; a refused request (4xx other than 408, 425,
 * 429) is dead-lettered at once.
 */
export function createWebhookSink(o: WebhookSinkOptions): Stage {
  const alerting = o.config.pipeline.alerting;
  const webhook = alerting.webhook;
  if (!webhook) throw new Error('pipeline.alerting.webhook: expected {url, ...} to run the webhook sink');
  const post = o.fetch ?? fetch;
  // TLS is verified by fetch (the system's CAs; NODE_EXTRA_CA_CERTS adds a private CA); never turned off here.
  registerWebhookSecrets(webhook.url, webhook.headers);
  const where = shownUrl(webhook.url);
  return {
    name: WEBHOOK_STAGE,
    shortName: 'alerter',
    inputTopics: [alerting.external_kafka_topic],
    outputTopics: [],
    async process(records, ctx): Promise<ProcessResult> {
      const failures: ProcessResult['failures'] = [];
      const unavailable = new Map<string, unknown>();
      for (const record of records) {
        // Once the endpoint is unavailable, the rest of the partition fails with the same error
        // instead of waiting out one timeout each; every record still either reached the endpoint
        // or is retried and, in the end, dead-lettered: none commits unsent.
        const partition = `${record.topic}:${record.partition}`;
        if (unavailable.has(partition)) {
          failures.push({ record, error: unavailable.get(partition) });
          continue;
        }
        try {
          const alert = decodeOutgoingAlert(record.value);
          let response: Response;
          try {
            response = await post(webhook.url, {
              method: 'POST',
              headers: {
                ...webhook.headers,
                'content-type': 'application/json',
                'idempotency-key': alert.alert_id,
              },
              body: JSON.stringify(alert),
              signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(webhook.timeout_ms)]),
            });
            await response.arrayBuffer();
          } catch (e) {
            const cause = (e as { cause?: unknown }).cause;
            const why = cause === undefined ? errorText(e) : `${errorText(e)} (${errorText(cause)})`;
            throw new WebhookUnavailableError(`POST ${where} failed: ${why}`, { cause: e });
          }
          if (response.ok) continue;
          const message = `POST ${where} answered ${response.status} for alert ${alert.alert_id}`;
          if (isRetryableStatus(response.status)) throw new WebhookUnavailableError(message);
          throw new WebhookRefusedError(response.status, message);
        } catch (e) {
          failures.push({ record, error: e });
          if (e instanceof WebhookUnavailableError) unavailable.set(partition, e);
        }
      }
      return { outputs: [], failures };
    },
  };
}
