/**
 * Clients given up while one of their native calls is still pending. They stay referenced for the
 * life of the process: if V8 collected one, the binding's destructor would run under librdkafka's
 * feet (a segfault). A small, deliberate leak in a rare failure case.
 */
const abandoned = new Set<unknown>();

export function abandon(client: unknown): void {
  abandoned.add(client);
}

export function abandonedCount(): number {
  return abandoned.size;
}
