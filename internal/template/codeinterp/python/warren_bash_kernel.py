"""warren's bash kernel: one persistent bash session behind the Jupyter protocol.

Debian packages no bash kernel, so the code-interpreter template carries this
one. It is built on ipykernel's Kernel base class (the protocol) and pexpect's
REPL wrapper (the session), both already in the template. Variables, the
working directory and exported environment persist between executions, as in
a terminal. A non-zero exit status of the last command is reported as an
error, so an SDK user sees failures the way a Python exception shows.
"""

import os
import re
import signal
import time

import pexpect
from ipykernel.kernelapp import IPKernelApp
from ipykernel.kernelbase import Kernel
from pexpect import replwrap

__version__ = "1"

# The REPL wrapper waits for these prompts; they must be text no command
# prints by accident.
PROMPT = "[warren-ps1-5c1e]$ "
CONTINUATION = "[warren-ps2-5c1e]> "
START_PROMPT = "warren-start-5c1e> "


def _prompt_tail(text):
    """Length of the longest end of text that could begin a prompt."""
    for n in range(min(len(text), max(len(PROMPT), len(CONTINUATION))), 0, -1):
        tail = text[-n:]
        if PROMPT.startswith(tail) or CONTINUATION.startswith(tail):
            return n
    return 0


class BashKernel(Kernel):
    implementation = "warren_bash"
    implementation_version = __version__
    language = "bash"
    language_version = "5"
    language_info = {"name": "bash", "mimetype": "text/x-sh", "file_extension": ".sh", "codemirror_mode": "shell"}
    banner = "bash (warren)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._pending = ""  # output read from bash, not yet sent
        self._start_bash()

    def _start_bash(self):
        # pexpect's child must not inherit an ignored SIGINT, or Ctrl-C
        # (our interrupt) would never reach the running command.
        old = signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            env = dict(os.environ, PS1=START_PROMPT, TERM="dumb")
            child = pexpect.spawn("bash", ["--norc", "--noprofile"], echo=False, env=env,
                                  encoding="utf-8", codec_errors="replace")
            # PROMPT_COMMAND puts our prompts back before every prompt, so
            # code that sets PS1 or PS2 cannot leave the kernel waiting for a
            # prompt that never comes (bash keeps $? across it).
            init = ("PROMPT_COMMAND=\"PS1='{0}'; PS2='{1}'\"; PS1='{0}' PS2='{1}'; "
                    "bind 'set enable-bracketed-paste off' 2>/dev/null")
            self.bash = replwrap.REPLWrapper(child, re.escape(START_PROMPT), init,
                                             new_prompt=PROMPT, continuation_prompt=CONTINUATION)
        finally:
            signal.signal(signal.SIGINT, old)

    def _stream(self, text, name="stdout"):
        if text:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def _run_line(self, line, stream):
        """Sends one line and reads until bash prompts again.

        Output is streamed as it arrives (stream=True) rather than when the
        command ends, keeping back only a tail that could be the start of a
        prompt. Returns the prompt seen and the output not yet streamed.
        """
        child = self.bash.child
        child.sendline(line)
        # Anything pexpect's own expect() left buffered comes first.
        self._pending, child.buffer = child.buffer, ""
        sent_at = time.monotonic()
        while True:
            for prompt in (PROMPT, CONTINUATION):
                i = self._pending.find(prompt)
                if i >= 0:
                    return prompt, self._pending[:i]
            try:
                self._pending += child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                pass
            if stream and time.monotonic() - sent_at > 0.05 or len(self._pending) > 65536:
                cut = len(self._pending) - _prompt_tail(self._pending)
                if cut > 0 and self._pending[cut - 1] == "\r":
                    cut -= 1  # never split a CRLF between two messages
                if cut > 0 and stream:
                    self._stream(self._pending[:cut].replace("\r\n", "\n"))
                    self._pending = self._pending[cut:]
                sent_at = time.monotonic()

    def _run(self, code, stream):
        """Runs code line by line as a terminal would; returns the output
        not streamed and whether bash was left waiting for more input."""
        out = []
        prompt = PROMPT
        for line in code.splitlines() or [""]:
            prompt, rest = self._run_line(line, stream)
            out.append(rest)
        if prompt == CONTINUATION:
            # Incomplete input (an open quote or block): cancel it so the
            # session is usable again.
            self.bash.child.sendintr()
            self.bash._expect_prompt()
        return "".join(out).replace("\r\n", "\n"), prompt == CONTINUATION

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        if not code.strip():
            return self._ok()
        try:
            output, incomplete = self._run(code.rstrip(), not silent)
        except KeyboardInterrupt:
            self.bash.child.sendintr()
            self.bash._expect_prompt()
            output = (self._pending + self.bash.child.before).replace("\r\n", "\n")
            return self._error("KeyboardInterrupt", "interrupted", silent, output)
        except pexpect.EOF:
            output = self._pending + (self.bash.child.before or "")
            self._start_bash()
            return self._error("BashExited", "bash exited; a new session was started", silent, output)
        if incomplete:
            return self._error("IncompleteInput", "the code ends inside an unfinished command", silent, output)
        status, _ = self._run("echo $?", False)
        try:
            code_ = int(status.strip().splitlines()[-1])
        except (ValueError, IndexError):
            code_ = 0
        if code_ != 0:
            return self._error("CommandError", "exit status %d" % code_, silent, output)
        if not silent:
            self._stream(output)
        return self._ok()

    def _ok(self):
        return {"status": "ok", "execution_count": self.execution_count, "payload": [], "user_expressions": {}}

    def _error(self, ename, evalue, silent, output):
        if not silent:
            self._stream(output)
            content = {"ename": ename, "evalue": evalue, "traceback": [output.rstrip("\n") or evalue]}
            self.send_response(self.iopub_socket, "error", content)
        return {"status": "error", "execution_count": self.execution_count,
                "ename": ename, "evalue": evalue, "traceback": [evalue]}


if __name__ == "__main__":
    IPKernelApp.launch_instance(kernel_class=BashKernel)
