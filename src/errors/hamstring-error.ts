/**
 * The base of every error HAMSTRING throws on purpose, in every layer. `code` is stable: a program,
 * a test or an alert rule matches on it (or on the class), never on the message text, which may be
 * reworded. `name` stays the class name, as logs and dead-letter headers show it.
 *
 * `KafkaError` (src/kafka/) is not one: its `code` is librdkafka's numeric code.
 */
export abstract class HamstringError extends Error {
  abstract readonly code: string;
}
