package warren.jshell;

import java.io.ByteArrayInputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import jdk.jshell.Diag;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import jdk.jshell.UnresolvedReferenceException;
import jdk.jshell.execution.LocalExecutionControl;
import jdk.jshell.spi.ExecutionControl;
import jdk.jshell.spi.ExecutionControlProvider;
import jdk.jshell.spi.ExecutionEnv;

/**
 * The Java side of warren's Java kernel: one JShell, run in this JVM, fed
 * cells by warren_java_kernel.py (the Jupyter side).
 *
 * Requests arrive on stdin, one a line: "x BASE64" runs a cell, "s" stops
 * the running one; the end of stdin ends the program after its cells. Answers go out on the real stdout as frames: one type
 * byte, a 4-byte big-endian length, the UTF-8 payload. Types: 'o' and 'e'
 * are the user's stdout and stderr, one frame per write (E2B's Java kernel
 * forwards each write as a chunk of its own); 'r' is the value of the cell's
 * last expression; 'x' an error (name, value and traceback lines, separated
 * by NUL); 'd' ends the cell.
 */
public final class Main {
    private final Channel channel;
    private final ValueControl control = new ValueControl();
    private final JShell shell;
    private volatile boolean stopping;
    // Queued after the last request; compared by identity.
    private static final String END = new String("end of requests");

    private Main(Channel channel, PrintStream out, PrintStream err) {
        this.channel = channel;
        ValueControl c = control;
        ExecutionControlProvider provider = new ExecutionControlProvider() {
            @Override
            public String name() {
                return "warren";
            }

            @Override
            public ExecutionControl generate(ExecutionEnv env, Map<String, String> parameters) {
                return c;
            }
        };
        shell = JShell.builder().executionEngine(provider, Map.of())
                .in(new ByteArrayInputStream(new byte[0])).out(out).err(err).build();
        // Lets the interpreter's hidden snippets call Env.
        shell.addToClasspath(System.getProperty("java.class.path"));
    }

    public static void main(String[] args) throws Exception {
        Channel channel = new Channel(new FileOutputStream(FileDescriptor.out));
        // Subclasses, so that println writes the text and the line end
        // separately as E2B's kernel does (PrintStream itself joins them).
        PrintStream out = new PrintStream(new ChunkStream(channel, 'o'), true, StandardCharsets.UTF_8) { };
        PrintStream err = new PrintStream(new ChunkStream(channel, 'e'), true, StandardCharsets.UTF_8) { };
        // Our requests come on stdin: user code reading System.in gets EOF.
        FileInputStream requests = new FileInputStream(FileDescriptor.in);
        System.setIn(new ByteArrayInputStream(new byte[0]));
        System.setOut(out);
        System.setErr(err);
        Main m = new Main(channel, out, err);
        BlockingQueue<String> cells = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> m.readRequests(requests, cells), "warren-requests");
        reader.setDaemon(true);
        reader.start();
        m.warmUp();
        while (true) {
            String code = cells.take();
            if (code == END) {
                System.exit(0);
            }
            m.stopping = false;
            m.runCell(code);
            out.flush();
            err.flush();
            channel.send('d', "");
        }
    }

    /** Reads requests until stdin closes, which ends the JVM. */
    private void readRequests(FileInputStream in, BlockingQueue<String> cells) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.US_ASCII))) {
            for (String line; (line = r.readLine()) != null; ) {
                if (line.equals("s")) {
                    stopping = true;
                    shell.stop();
                } else if (line.startsWith("x ")) {
                    byte[] code = Base64.getDecoder().decode(line.substring(2));
                    cells.add(new String(code, StandardCharsets.UTF_8));
                }
            }
        } catch (IOException | RuntimeException e) {
            // Nothing more will come.
        }
        // The cells already sent still run; then the JVM exits normally,
        // which is when the template build's class archive is written.
        cells.add(END);
    }

    /**
     * Compiles and runs a throwaway method so that javac's classes are
     * loaded while the Jupyter side starts, not during the first cell. It
     * defines no name the user could see ($1 and the like).
     */
    private void warmUp() {
        for (SnippetEvent ev : shell.eval("void warren$warm() { }")) {
            shell.drop(ev.snippet());
        }
    }

    /** Runs each snippet of code in turn, stopping at the first error. */
    private void runCell(String code) {
        SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
        String rest = code;
        String value = null;
        while (!rest.isBlank() && !stopping) {
            SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(rest);
            String src = info.source();
            switch (info.completeness()) {
                case EMPTY:
                    rest = "";
                    continue;
                case COMPLETE:
                case COMPLETE_WITH_SEMI:
                    rest = info.remaining();
                    break;
                default:
                    // Incomplete or unknown: let the compiler say what is wrong.
                    src = rest;
                    rest = "";
            }
            Outcome o = evalSnippet(src);
            if (o.error) {
                return;
            }
            value = o.value;
        }
        if (stopping) {
            interrupted();
        } else if (value != null) {
            channel.send('r', value);
        }
    }

    private static final class Outcome {
        final boolean error;
        final String value; // the text of an expression's non-null value

        Outcome(boolean error, String value) {
            this.error = error;
            this.value = value;
        }
    }

    private Outcome evalSnippet(String src) {
        control.reset();
        List<SnippetEvent> events = shell.eval(src);
        String value = null;
        boolean any = false;
        for (SnippetEvent ev : events) {
            if (ev.causeSnippet() != null) {
                continue; // a dependent snippet updated, not this one
            }
            any = true;
            Snippet s = ev.snippet();
            if (ev.status() == Snippet.Status.REJECTED) {
                compileError(s, src);
                return new Outcome(true, null);
            }
            if (ev.exception() != null) {
                if (stopping) {
                    interrupted();
                } else {
                    exception(ev.exception());
                }
                return new Outcome(true, null);
            }
            if (isExpression(s) && control.hasValue()) {
                value = control.text();
            }
        }
        if (!any) {
            error("CompilationException", "the code is incomplete", List.of(src.strip()));
            return new Outcome(true, null);
        }
        return new Outcome(false, value);
    }

    private static boolean isExpression(Snippet s) {
        return s.kind() == Snippet.Kind.EXPRESSION
                || s.subKind() == Snippet.SubKind.TEMP_VAR_EXPRESSION_SUBKIND;
    }

    private void interrupted() {
        error("InterruptedException", "the execution was interrupted", List.of("InterruptedException: the execution was interrupted"));
    }

    /** Reports the compiler's errors with the line each points at. */
    private void compileError(Snippet s, String src) {
        List<String> trace = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        shell.diagnostics(s).filter(Diag::isError).forEach(d -> {
            // JShell's wrapper class has no name a user would know.
            String msg = d.getMessage(Locale.ROOT).replaceAll("\\n\\s*location: class\\s*$", "");
            messages.add(msg);
            trace.add(msg);
            String text = s.source();
            int pos = (int) Math.max(0, Math.min(d.getPosition(), text.length()));
            int start = text.lastIndexOf('\n', pos - 1) + 1;
            int end = text.indexOf('\n', pos);
            trace.add(text.substring(start, end < 0 ? text.length() : end));
            trace.add(" ".repeat(pos - start) + "^");
        });
        if (messages.isEmpty()) {
            messages.add("the snippet was rejected: " + src.strip());
            trace.add(messages.get(0));
        }
        error("CompilationException", String.join("\n", messages), trace);
    }

    /** Reports an exception the user's code threw, with its causes. */
    private void exception(JShellException ex) {
        String name;
        if (ex instanceof EvalException) {
            name = ((EvalException) ex).getExceptionClassName();
        } else if (ex instanceof UnresolvedReferenceException) {
            name = "UnresolvedReferenceException";
        } else {
            name = ex.getClass().getName();
        }
        String message = ex.getMessage() == null ? "" : ex.getMessage();
        if (ex instanceof UnresolvedReferenceException) {
            Snippet s = ((UnresolvedReferenceException) ex).getSnippet();
            message = "attempted to use " + s.kind().toString().toLowerCase(Locale.ROOT)
                    + " that cannot be used until its unresolved references are declared: " + s.source().strip();
        }
        List<String> trace = new ArrayList<>();
        for (Throwable t = ex; t != null; t = t.getCause()) {
            String cls = t instanceof EvalException ? ((EvalException) t).getExceptionClassName() : t.getClass().getName();
            trace.add((t == ex ? "" : "Caused by: ") + cls + (t.getMessage() == null ? "" : ": " + t.getMessage()));
            for (StackTraceElement f : t.getStackTrace()) {
                if (f.getClassName().startsWith("warren.jshell.") || f.getClassName().startsWith("jdk.internal.reflect.")) {
                    break; // our own frames below the user's code
                }
                trace.add("\tat " + f);
            }
        }
        error(name, message, trace);
    }

    private void error(String name, String value, List<String> trace) {
        channel.send('x', name + "\0" + value + "\0" + String.join("\n", trace));
    }

    /**
     * Runs snippets in this JVM, as JShell's local engine does, and keeps
     * the value object of the last one: E2B's kernel shows a value as
     * String.valueOf does, where JShell would quote strings.
     */
    static final class ValueControl extends LocalExecutionControl {
        // Set by the execution thread, read after it has finished.
        private static volatile Method target;
        private static volatile Object result;
        private static volatile boolean ran;

        void reset() {
            ran = false;
            result = null;
        }

        boolean hasValue() {
            return ran && result != null;
        }

        String text() {
            return String.valueOf(result);
        }

        @Override
        protected String invoke(Method doit) throws Exception {
            target = doit;
            ran = false;
            return super.invoke(Main.class.getMethod("capture"));
        }
    }

    /** Called in the execution thread in place of a snippet's do-it method. */
    public static Object capture() throws Throwable {
        try {
            Object v = ValueControl.target.invoke(null);
            ValueControl.result = v;
            ValueControl.ran = true;
            return v;
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Writes frames; the user's threads and ours share it. */
    static final class Channel {
        private final OutputStream out;

        Channel(OutputStream out) {
            this.out = out;
        }

        void send(char type, String payload) {
            send(type, payload.getBytes(StandardCharsets.UTF_8), 0, -1);
        }

        synchronized void send(char type, byte[] b, int off, int len) {
            if (len < 0) {
                len = b.length - off;
            }
            byte[] head = {(byte) type, (byte) (len >>> 24), (byte) (len >>> 16), (byte) (len >>> 8), (byte) len};
            try {
                out.write(head);
                out.write(b, off, len);
                out.flush();
            } catch (IOException e) {
                Runtime.getRuntime().halt(0); // the kernel is gone
            }
        }
    }

    /** An output stream whose every write is one frame. */
    static final class ChunkStream extends OutputStream {
        private final Channel channel;
        private final char type;

        ChunkStream(Channel channel, char type) {
            this.channel = channel;
            this.type = type;
        }

        @Override
        public void write(int b) {
            channel.send(type, new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            if (len > 0) {
                channel.send(type, b, off, len);
            }
        }
    }
}
