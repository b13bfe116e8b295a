package hamstring.bench;

import java.util.HashMap;
import java.util.Map;

/** `key=value` command-line arguments; every peer takes its settings this way. */
final class Args {
  private final Map<String, String> values = new HashMap<>();

  Args(String[] argv) {
    for (String a : argv) {
      int eq = a.indexOf('=');
      if (eq <= 0) throw new IllegalArgumentException("expected key=value, got " + a);
      values.put(a.substring(0, eq), a.substring(eq + 1));
    }
  }

  String get(String key) {
    String v = values.get(key);
    if (v == null) throw new IllegalArgumentException("missing argument " + key + "=...");
    return v;
  }

  String get(String key, String fallback) {
    return values.getOrDefault(key, fallback);
  }

  boolean has(String key) {
    return values.containsKey(key);
  }
}
