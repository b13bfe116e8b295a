/** One line for a log field or a message: `Name: message` of an Error, the text of anything else. */
export function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
