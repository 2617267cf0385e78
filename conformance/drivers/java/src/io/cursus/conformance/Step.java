package io.cursus.conformance;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One plan line: {@code <op> name=value ...}. Values are kept as written, except that
 * {@code ""} stands for the empty string.
 */
final class Step {
    final int index;
    final String op;
    /** The arguments in plan order. */
    final List<Map.Entry<String, String>> args;
    /** Why the line could not be parsed, or null. */
    final String malformed;

    private Step(int index, String op, List<Map.Entry<String, String>> args, String malformed) {
        this.index = index;
        this.op = op;
        this.args = args;
        this.malformed = malformed;
    }

    /** The steps of a plan: every line except empty ones and {@code #} comments. */
    static List<Step> parse(List<String> lines) {
        List<Step> steps = new ArrayList<>();
        for (String raw : lines) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            steps.add(parseLine(steps.size(), line));
        }
        return steps;
    }

    private static Step parseLine(int index, String line) {
        String[] tokens = line.split("\\s+");
        List<Map.Entry<String, String>> args = new ArrayList<>();
        for (int i = 1; i < tokens.length; i++) {
            int eq = tokens[i].indexOf('=');
            if (eq <= 0) {
                return new Step(index, tokens[0], List.of(), "argument without name=value: " + tokens[i]);
            }
            String name = tokens[i].substring(0, eq);
            if (!name.matches("[a-z_.]+")) {
                return new Step(index, tokens[0], List.of(), "bad argument name: " + name);
            }
            String value = tokens[i].substring(eq + 1);
            if (value.equals("\"\"")) {
                value = "";
            }
            args.add(Map.entry(name, value));
        }
        return new Step(index, tokens[0], List.copyOf(args), null);
    }

    /** Arguments named {@code config.<option>} are configuration (PROTOCOL.md, "Plan file"). */
    private static final String CONFIG_PREFIX = "config.";

    /**
     * Splits the arguments into the op's own (by name) and the configuration (the
     * {@code config.} ones, prefix removed, in plan order).
     */
    Map<String, String> own(List<Map.Entry<String, String>> config) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> a : args) {
            if (a.getKey().startsWith(CONFIG_PREFIX)) {
                config.add(Map.entry(a.getKey().substring(CONFIG_PREFIX.length()), a.getValue()));
            } else {
                out.put(a.getKey(), a.getValue());
            }
        }
        return out;
    }
}
