package warren.jshell;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Environment variables of the Java kernel. As in E2B's Java kernel they
 * are system properties: the JVM cannot change its own process
 * environment. The interpreter's hidden snippets call these methods with
 * string literals; the code the user runs never sees them.
 */
public final class Env {
    // Executions of a kernel are serialised, so one level is enough.
    private static Map<String, String> saved = new LinkedHashMap<>();

    private Env() {}

    /** Sets key/value pairs for the rest of the kernel's life. */
    public static void set(String... kv) {
        for (int i = 0; i + 1 < kv.length; i += 2) {
            System.setProperty(kv[i], kv[i + 1]);
        }
    }

    /** Remembers the current values of the keys, then sets the pairs. */
    public static void save(String... kv) {
        Map<String, String> old = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            old.put(kv[i], System.getProperty(kv[i]));
        }
        saved = old;
        set(kv);
    }

    /** Puts back what save found: a property that was unset is cleared. */
    public static void restore() {
        for (Map.Entry<String, String> e : saved.entrySet()) {
            if (e.getValue() == null) {
                System.clearProperty(e.getKey());
            } else {
                System.setProperty(e.getKey(), e.getValue());
            }
        }
        saved = new LinkedHashMap<>();
    }
}
