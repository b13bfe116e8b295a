/**
 * The smallest upstream a config of later stages needs: one DNS collector `c` that requires only a
 * timestamp and the client IP, and one prefilter `p` on it that keeps every line. Fresh objects
 * per call, so a test may change its copy.
 */
export function minimalCollectorAndPrefilter() {
  return {
    log_collection: {
      collectors: [
        {
          name: 'c',
          protocol_base: 'dns',
          required_log_information: [
            ['ts', 'Timestamp', '%Y'],
            ['src_ip', 'IpAddress'],
          ],
        },
      ],
    },
    log_filtering: [{ name: 'p', relevance_method: 'no_relevance_check', collector_name: 'c' }],
  };
}
