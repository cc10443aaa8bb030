"""warren's Java kernel: one JShell behind the Jupyter protocol.

E2B's template runs IJava, which cannot be downloaded here; Debian's JDK
can. The Jupyter side is ipykernel's Kernel base class, as for our bash
kernel; the Java side is a small program of ours (warren.jshell.Main, built
with the template) that runs each cell's snippets in a JShell inside its
own JVM. Variables, imports, methods and classes persist between cells.

The two talk over pipes: a cell goes to Java as "x BASE64\\n", an interrupt
as "s\\n"; Java answers with frames (type byte, 4-byte length, payload):
'o'/'e' output, 'r' the value of the last expression, 'x' an error, 'd'
the end of the cell.
"""

import base64
import codecs
import os
import signal
import struct
import subprocess
import sys

from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel

__version__ = "1"

JAVA = "/usr/bin/java"
# The template build compiles the Java side into JAR and records the
# classes a first cell loads into ARCHIVE (AppCDS), which cuts the JVM's
# start by about a third; --dump-archive below is that build step.
JAR = "/usr/local/lib/warren/java/warren-jshell.jar"
ARCHIVE = "/usr/local/lib/warren/java/warren-jshell.jsa"
# A lean JVM: the serial collector and the C1 compiler alone start fastest
# and need the least memory; the heap may take half of what the JVM sees
# (the sandbox's memory limit where it can read it).
JVM_OPTIONS = [
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:MaxRAMPercentage=50",
    "-XX:-UsePerfData",
    "-Xshare:auto",
]


def java_argv(*extra):
    archive = ["-XX:SharedArchiveFile=" + ARCHIVE] if os.path.exists(ARCHIVE) else []
    return [JAVA, *JVM_OPTIONS, *archive, *extra, "-cp", JAR, "warren.jshell.Main"]


def dump_archive():
    """Runs one cell in a JVM that writes ARCHIVE when it exits."""
    cell = b"x " + base64.b64encode(b'System.out.println("warm"); 1 + 1') + b"\n"
    subprocess.run([JAVA, *JVM_OPTIONS, "-XX:ArchiveClassesAtExit=" + ARCHIVE, "-cp", JAR, "warren.jshell.Main"],
                   input=cell, stdout=subprocess.DEVNULL, check=True, timeout=600)


class JavaExited(Exception):
    pass


def _ignore_sigint():
    # Interrupts reach the JVM as our "s" request: SIGINT, sent to the
    # whole process group, would end the JVM instead.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class JavaKernel(Kernel):
    implementation = "warren_java"
    implementation_version = __version__
    language = "java"
    language_version = "17"
    language_info = {"name": "java", "mimetype": "text/x-java", "file_extension": ".jshell",
                     "codemirror_mode": "java", "version": "17"}
    banner = "Java (JShell, warren)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._start_java()

    def _start_java(self):
        self._buf = b""
        self.java = subprocess.Popen(java_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     preexec_fn=_ignore_sigint)

    def _write(self, data):
        fd = self.java.stdin.fileno()
        while data:
            n = os.write(fd, data)
            data = data[n:]

    def _frame(self):
        """The next frame from Java. os.read keeps no data of its own, so
        a signal handler running during it loses nothing."""
        while True:
            if len(self._buf) >= 5:
                (n,) = struct.unpack(">I", self._buf[1:5])
                if len(self._buf) >= 5 + n:
                    kind, payload = chr(self._buf[0]), self._buf[5:5 + n]
                    self._buf = self._buf[5 + n:]
                    return kind, payload
            data = os.read(self.java.stdout.fileno(), 65536)
            if not data:
                raise JavaExited()
            self._buf += data

    def _on_sigint(self, signum, frame):
        try:
            os.write(self.java.stdin.fileno(), b"s\n")
        except OSError:
            pass  # Java is gone; _frame will say so

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        if not code.strip():
            return self._ok()
        try:
            self._write(b"x " + base64.b64encode(code.encode("utf-8", "surrogatepass")) + b"\n")
        except OSError:
            return self._restarted(silent)
        # An interrupt asks Java to stop the cell; the cell still ends
        # with its frames, so the next one starts in step.
        old = signal.signal(signal.SIGINT, self._on_sigint)
        try:
            return self._collect(silent)
        except JavaExited:
            return self._restarted(silent)
        finally:
            signal.signal(signal.SIGINT, old)

    def _collect(self, silent):
        decoders = {}
        error = None
        while True:
            kind, payload = self._frame()
            if kind == "d":
                break
            if silent:
                continue
            if kind in "oe":
                name = "stdout" if kind == "o" else "stderr"
                # A write may end inside a multi-byte character.
                dec = decoders.setdefault(name, codecs.getincrementaldecoder("utf-8")("replace"))
                text = dec.decode(payload)
                if text:
                    self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})
            elif kind == "r":
                self.send_response(self.iopub_socket, "execute_result", {
                    "execution_count": self.execution_count,
                    "data": {"text/plain": payload.decode("utf-8", "replace")}, "metadata": {}})
            elif kind == "x":
                ename, evalue, trace = payload.decode("utf-8", "replace").split("\0", 2)
                error = (ename, evalue, trace.split("\n"))
                self.send_response(self.iopub_socket, "error",
                                   {"ename": ename, "evalue": evalue, "traceback": error[2]})
        if error is None:
            return self._ok()
        return {"status": "error", "execution_count": self.execution_count,
                "ename": error[0], "evalue": error[1], "traceback": error[2]}

    def _restarted(self, silent):
        """Java ended (System.exit, or killed for memory): a new JVM, with
        none of the old state, serves the next cell."""
        self.java.wait()
        status = self.java.returncode
        self._start_java()
        ename = "JavaExited"
        evalue = "the JVM exited (status %s); a new one was started and earlier state is gone" % status
        if not silent:
            self.send_response(self.iopub_socket, "error", {"ename": ename, "evalue": evalue, "traceback": [evalue]})
        return {"status": "error", "execution_count": self.execution_count,
                "ename": ename, "evalue": evalue, "traceback": [evalue]}

    def _ok(self):
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def do_shutdown(self, restart):
        try:
            self.java.kill()
        except OSError:
            pass
        return {"status": "ok", "restart": restart}


if __name__ == "__main__":
    if sys.argv[1:] == ["--dump-archive"]:
        dump_archive()
    else:
        IPKernelApp.launch_instance(kernel_class=JavaKernel)
