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


class BashKernel(Kernel):
    implementation = "warren_bash"
    implementation_version = __version__
    language = "bash"
    language_version = "5"
    language_info = {"name": "bash", "mimetype": "text/x-sh", "file_extension": ".sh", "codemirror_mode": "shell"}
    banner = "bash (warren)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._start_bash()

    def _start_bash(self):
        # pexpect's child must not inherit an ignored SIGINT, or Ctrl-C
        # (our interrupt) would never reach the running command.
        old = signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            env = dict(os.environ, PS1=START_PROMPT, TERM="dumb")
            child = pexpect.spawn("bash", ["--norc", "--noprofile"], echo=False, env=env,
                                  encoding="utf-8", codec_errors="replace")
            init = "PS1='{0}' PS2='{1}' PROMPT_COMMAND=''; bind 'set enable-bracketed-paste off' 2>/dev/null"
            self.bash = replwrap.REPLWrapper(child, re.escape(START_PROMPT), init,
                                             new_prompt=PROMPT, continuation_prompt=CONTINUATION)
        finally:
            signal.signal(signal.SIGINT, old)

    def _stream(self, text, name="stdout"):
        if text:
            self.send_response(self.iopub_socket, "stream", {"name": name, "text": text})

    def do_execute(self, code, silent, store_history=True, user_expressions=None, allow_stdin=False):
        if not code.strip():
            return self._ok()
        interrupted = False
        try:
            output = self.bash.run_command(code.rstrip(), timeout=None)
        except KeyboardInterrupt:
            self.bash.child.sendintr()
            interrupted = True
            self.bash._expect_prompt()
            output = self.bash.child.before
        except pexpect.EOF:
            output = self.bash.child.before
            self._start_bash()
            return self._error("BashExited", "bash exited; a new session was started", silent, output)
        output = output.replace("\r\n", "\n")
        if interrupted:
            return self._error("KeyboardInterrupt", "interrupted", silent, output)
        status = self.bash.run_command("echo $?", timeout=None).strip()
        try:
            code_ = int(status.splitlines()[-1])
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
