"""The interactive shell driven through a pseudo-terminal: prompt, queries,
dot-commands, tab completion, history (in session and across sessions),
line editing, errors that keep the shell running; the shell fed by a pipe;
and progress shown on a terminal only."""

import os
import pty
import re
import select
import subprocess

import pytest
from clitool import CLI, KEY, make_dog_file, run

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
UP = "\x1b[A"
LEFT = "\x1b[D"
PROMPT = r"coffer> "


class Terminal:
    """A process on a pseudo-terminal: type into it, wait for what it shows."""

    def __init__(self, args, env=None):
        self.master, slave = pty.openpty()
        full_env = {k: v for k, v in os.environ.items() if k != "COFFER_KEY"}
        full_env.update({"TERM": "xterm"}, **(env or {}))
        self.proc = subprocess.Popen([CLI, *args], stdin=slave, stdout=slave, stderr=slave, env=full_env,
                                     close_fds=True)
        os.close(slave)
        self.seen = ""

    def type(self, text):
        os.write(self.master, text.encode())

    def expect(self, pattern, wait=30.0):
        """Reads until the screen text (escapes removed) matches `pattern`
        after what earlier expects consumed; returns the text up to it."""
        regex = re.compile(pattern)
        while True:
            m = regex.search(self.clean())
            if m:
                text = self.clean()[: m.end()]
                self.seen = self.seen[self.raw_index(m.end()):]
                return text
            ready, _, _ = select.select([self.master], [], [], wait)
            if not ready:
                raise AssertionError(f"no {pattern!r} on the terminal; it shows:\n{self.clean()}")
            try:
                data = os.read(self.master, 65536)
            except OSError:
                data = b""
            if not data:
                raise AssertionError(f"the program ended before {pattern!r}; it showed:\n{self.clean()}")
            self.seen += data.decode("utf-8", "replace")

    def clean(self):
        return ANSI.sub("", self.seen).replace("\r", "")

    def raw_index(self, clean_end):
        """The index in `seen` just past `clean_end` characters of clean()."""
        count = 0
        i = 0
        while i < len(self.seen) and count < clean_end:
            m = ANSI.match(self.seen, i)
            if m:
                i = m.end()
                continue
            if self.seen[i] != "\r":
                count += 1
            i += 1
        return i

    def finish(self):
        code = self.proc.wait(timeout=60)
        os.close(self.master)
        return code

    def enter(self, line, shows=None):
        """Waits for the shell's prompt, types `line` and Enter; with `shows`,
        returns the screen text up to it (see expect)."""
        self.expect(PROMPT)
        self.type(line + "\r")
        return self.expect(shows) if shows is not None else None

    def quit(self, line=".quit"):
        """Ends the shell from its prompt with `line`; returns its exit code."""
        self.enter(line)
        return self.finish()


@pytest.fixture
def dogs(tmp_path):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, dogs=6)
    return path


def shell(path, tmp_path, *extra, env=None):
    history = str(tmp_path / "history")
    return Terminal(["shell", path, *extra], env={"COFFER_HISTORY": history, **(env or {})})


def test_queries_dot_commands_and_quit(dogs, tmp_path):
    t = shell(dogs, tmp_path)
    t.expect(r"\.help for help")
    out = t.enter("Dog age == 3", r"\(1 object\)")
    assert "dog3" in out and "Ann" in out
    assert re.search(r"Dog\s+6", t.enter(".count", r"Person\s+1"))
    t.enter(".format jsonl")
    t.enter(".limit 2")
    out = t.enter("Dog SORT(id DESC)", r'"id":4.*\n')
    assert '"id":5' in out
    t.enter(".schema", r"class Person")
    assert t.quit() == 0


def test_errors_keep_the_shell_running(dogs, tmp_path):
    t = shell(dogs, tmp_path)
    t.enter("Dog age >", r"error: query: at offset \d+")
    t.enter("Cat", r"error: no class 'Cat'")
    t.enter(".nonsense", r"unknown command \.nonsense")
    t.enter(".format xml", r"usage: \.format")
    t.expect(PROMPT)
    t.type("\x04")  # ^D on an empty line ends the shell
    assert t.finish() == 0


def test_tab_completion_of_classes_properties_and_commands(dogs, tmp_path):
    t = shell(dogs, tmp_path)
    t.expect(PROMPT)
    t.type("Do\t")
    t.expect(r"coffer> Dog $")
    t.type("na\t")
    t.expect(r"coffer> Dog name $")
    t.type("== 'dog2' OR own\t")
    t.expect(r"coffer> Dog name == 'dog2' OR owner $")
    # Through a link: the target class's properties.
    t.type("\x08.ci\t")
    t.expect(r"OR owner\.city $")
    t.type("== 'Oslo, Norway'\r")
    t.expect(r"\(4 objects\)")
    t.expect(PROMPT)
    t.type(".cou\t")
    t.expect(r"coffer> \.count $")
    t.type("Pe\t\r")
    t.expect(r"\n1\n")
    t.expect(PROMPT)
    # Two candidates: a second tab lists them.
    t.type("Dog A\t\t")
    listing = t.expect(r"AND  ASC\ncoffer> Dog A")
    assert "age" not in listing
    t.type("\x03")  # ^C drops the line
    assert t.quit() == 0


def test_history_and_line_editing(dogs, tmp_path):
    t = shell(dogs, tmp_path)
    t.enter(".count Dog", r"\n6\n")
    t.enter(UP, r"\n6\n")  # the previous line again
    # Edit in the middle: "Dg" + left + "o" gives "Dog".
    t.enter(".count Dg" + LEFT + "o", r"\n6\n")
    assert t.quit() == 0
    history = (tmp_path / "history").read_text().splitlines()
    assert history == [".count Dog", ".quit"]
    # A new session recalls the last session's lines.
    t = shell(dogs, tmp_path)
    t.enter(UP + UP, r"\n6\n")
    assert t.quit(".exit") == 0


def test_encrypted_file_in_the_shell(tmp_path, key_files):
    path = str(tmp_path / "secret.coffer")
    make_dog_file(path, KEY, dogs=3)
    t = shell(path, tmp_path, "--key-file", key_files[0])
    t.enter(".count Dog", r"\n3\n")
    assert t.quit() == 0


def test_shell_reads_a_script_from_a_pipe(dogs, tmp_path):
    r = run("shell", dogs, stdin="Dog id == 2\n.format json\nPerson\n.count Dog\nCat\n",
            env={"COFFER_HISTORY": ""})
    assert r.code == 0
    assert "coffer>" not in r.out
    assert "dog2" in r.out and '[{"name":"Ann","city":"Oslo, Norway"}]' in r.out
    assert r.out.rstrip().endswith("6")
    assert "no class 'Cat'" in r.err


def test_progress_on_a_terminal_only(tmp_path):
    path = str(tmp_path / "dogs.coffer")
    make_dog_file(path, dogs=50)
    t = Terminal(["export", path, "--output", str(tmp_path / "out.jsonl")])
    t.expect(r"exporting: \d+ of 51 objects \(\d+/s\)")
    assert t.finish() == 0
    r = run("export", path, "--output", str(tmp_path / "piped.jsonl"))
    assert r.code == 0 and r.err == "" and r.out == ""
    assert (tmp_path / "piped.jsonl").read_text() == (tmp_path / "out.jsonl").read_text()
