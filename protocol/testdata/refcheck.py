"""The part every edge reference shares: write its JSON, or with --check
recompute it and compare with the committed file (`make check-references`).

Each reference imports this module after putting this folder on sys.path
from its own location (not from the working folder), so it runs from any
folder of a clean clone:

    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "testdata"))
    import refcheck

Plain Python; nothing here computes a number.
"""
import json
import os
import sys


def load(name, path):
    """Imports the script at path (relative to the caller's file's folder is the
    caller's business) as a module called name: by its file, never by a name
    that sys.path could resolve to another folder's reference.py."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def dumps(data):
    """The committed layout: indented, keys sorted, no NaN or Inf."""
    return json.dumps(data, indent=1, sort_keys=True, allow_nan=False) + "\n"


def main(path, build, ok, text=dumps, wrote=None):
    """Runs a reference: build() makes its data, text(data) the file's text.

    With --check among the arguments the file at path must hold exactly that
    text (the script exits non-zero, naming itself and the file, if not;
    ok(data) is printed if so); without it the text is written to path and
    wrote(data), if given, printed.
    """
    data = build()
    out = text(data)
    if "--check" in sys.argv[1:]:
        with open(path) as f:
            if f.read() != out:
                sys.exit("%s --check: %s is not what the reference computes"
                         % (os.path.basename(sys.argv[0]), os.path.basename(path)))
        print(ok(data))
        return
    with open(path, "w") as f:
        f.write(out)
    if wrote is not None:
        print(wrote(data))
