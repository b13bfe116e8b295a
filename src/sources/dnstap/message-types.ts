/** dnstap `Message.Type` names, in the order of their enum values (1-based on the wire). */
export const MESSAGE_TYPES = [
  'AUTH_QUERY',
  'AUTH_RESPONSE',
  'RESOLVER_QUERY',
  'RESOLVER_RESPONSE',
  'CLIENT_QUERY',
  'CLIENT_RESPONSE',
  'FORWARDER_QUERY',
  'FORWARDER_RESPONSE',
  'STUB_QUERY',
  'STUB_RESPONSE',
  'TOOL_QUERY',
  'TOOL_RESPONSE',
  'UPDATE_QUERY',
  'UPDATE_RESPONSE',
] as const;
export type DnstapMessageType = (typeof MESSAGE_TYPES)[number];
