#!/usr/bin/env python3
"""Records docs/demo.cast (asciicast v2): the workbench driven by a script of keys in a
pseudo-terminal, on a fresh database in a temporary folder. Needs only Python 3 and a
release build (`cargo build --release`). Play it with `asciinema play docs/demo.cast`
(or any asciicast player).

    python3 scripts/record-demo.py [target/release/rulebench] [docs/demo.cast]
"""
import fcntl, json, os, pty, select, struct, sys, tempfile, termios, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/rulebench"
OUT = sys.argv[2] if len(sys.argv) > 2 else "docs/demo.cast"
COLS, ROWS = 140, 40
ESC = "\x1b"

# (pause before, keys, what it shows); a key string of more than one character is typed
# character by character, except escape sequences (a list item), written whole.
SCRIPT = [
    (2.0, "", "the page opens: sources, rules, the matrix, the explanation, policy, tests"),
    (1.2, "2", "focus Rules"),
    (0.6, "j", "Tool Calling Support"),
    (0.8, "e", "edit its logic"),
    (0.6, '{"!": ', "wrap it in a negation: the matrix recomputes on every keystroke"),
    (0.4, [ESC + ">"], "to the end of the text (Alt->)"),
    (0.3, [ESC + "[F"], "to the end of the line"),
    (0.6, "}", "valid again: the cells flip, verdicts move"),
    (2.5, ESC, "leave the editor: the edit is saved as a new revision"),
    (1.5, "2", "back to Rules"),
    (0.8, "u", "revert the rule to its previous revision (one more revision)"),
    (2.0, "6", "focus Policy"),
    (0.6, "j", "fullThreshold"),
    (0.6, "-", "lower it by 0.05"),
    (0.6, "-", "and again"),
    (0.6, "-", ""),
    (0.6, "-", "at 0.80, partial matches at 0.80 become full"),
    (2.5, "3", "focus the Matrix"),
    (0.6, "l", "next target"),
    (0.6, "l", ""),
    (0.8, "\r", "explain the selected cell"),
    (3.0, "?", "every key, generated from the keymap"),
    (2.5, ESC, ""),
    (1.0, "q", "quit"),
    (1.0, "y", ""),
]


def main():
    tmp = tempfile.mkdtemp(prefix="rulebench-demo-")
    db = os.path.join(tmp, "demo.db")
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update(TERM="xterm-256color", COLUMNS=str(COLS), LINES=str(ROWS))
        os.execv(BIN, [BIN, "--db", db, "--page", "llm-chat-clients", "-q"])
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    start = time.time()
    events = []

    def pump(seconds):
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return True
            r, _, _ = select.select([fd], [], [], left)
            if r:
                try:
                    data = os.read(fd, 65536)
                except OSError:
                    return False
                if not data:
                    return False
                events.append([round(time.time() - start, 4), "o", data.decode("utf-8", "replace")])

    for pause, keys, _ in SCRIPT:
        if not pump(pause):
            break
        for ch in (keys if isinstance(keys, list) else list(keys)):
            os.write(fd, ch.encode())
            time.sleep(0.05)
            pump(0.02)
    pump(1.0)
    try:
        os.kill(pid, 15)
    except ProcessLookupError:
        pass
    os.waitpid(pid, 0)
    header = {"version": 2, "width": COLS, "height": ROWS, "timestamp": int(start),
              "title": "rulebench: edit a rule, watch the matrix, tune a threshold, explain a cell",
              "env": {"TERM": "xterm-256color"}}
    with open(OUT, "w") as f:
        f.write(json.dumps(header) + "\n")
        for e in events:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}: {len(events)} events, {events[-1][0] if events else 0:.1f} s")


if __name__ == "__main__":
    main()
