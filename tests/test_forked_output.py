"""``trtstudio layers --json`` writes its document in two parts (bigdocs.forked.ForkedHead: a forked child
encodes the layers while the rules run): the bytes are those written in one go, whatever the
output is (file, pipe closed early) and whatever goes wrong in either process. Real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the forked writer is Linux only")

ROOT = Path(__file__).resolve().parents[1]
TREX = ROOT.parent / "shared/fixtures/trt-real/NVIDIA_TensorRT_trex/release-11.0/tests/inputs"
LOG = ROOT.parent / "shared/fixtures/trt-real/NVIDIA_trt-samples-for-hackathon-cn/history/result-05__trt10.16.0__7590a9b4.log"


def _layers(args: list[str], *, fork: bool, stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("TRTSTUDIO_NO_FORK", None)
    if not fork:
        env["TRTSTUDIO_NO_FORK"] = "1"
    return subprocess.run([sys.executable, "-m", "trtstudio.cli", "layers", *args, "--json"], stdout=stdout,
                          stderr=subprocess.PIPE, env=env, timeout=120, check=False)


def _engine_doc(names: list[str]) -> dict[str, object]:
    layers = []
    prev = "input"
    for i, name in enumerate(names):
        layers.append({
            "Name": name, "LayerType": "CaskConvolution" if i % 2 == 0 else "Reformat",
            "Inputs": [{"Name": prev, "Location": "Device", "Dimensions": [1, 60, 8, 8],
                        "Format/Datatype": "Row major linear FP32" if i == 1 else "Channel major FP16 format"}],
            "Outputs": [{"Name": f"t{i}", "Location": "Device", "Dimensions": [1, 60, 8, 8],
                         "Format/Datatype": "Channel major FP16 format"}],
            "TacticName": "sm80_xmma_gemm_simt" if i % 2 == 0 else None, "Kernel": [3, 3],
            "Metadata": f"[ONNX Layer: n{i}]",
        })
        prev = f"t{i}"
    return {"Layers": layers, "Bindings": ["input", prev]}


def test_the_forked_output_is_the_one_written_in_one_go(tmp_path: Path) -> None:
    eng = tmp_path / "e.layers.json"
    eng.write_text(json.dumps(_engine_doc([f"conv{i}" for i in range(40)])))
    cases = [[str(eng)]]
    if TREX.is_dir():
        cases.append([str(TREX / "mobilenet.qat.onnx.engine.graph.json"),
                      str(TREX / "mobilenet.qat.onnx.engine.profile.json")])
    if LOG.is_file():  # not JSON: read once, the child forked after the read
        cases.append([str(LOG)])
    for files in cases:
        forked, serial = _layers(files, fork=True), _layers(files, fork=False)
        assert forked.returncode == serial.returncode == 0, forked.stderr
        assert forked.stdout == serial.stdout
        assert forked.stderr == serial.stderr
        doc = json.loads(forked.stdout)
        assert doc["layers"] and doc["findings"], "the rules found nothing to write"


def test_with_a_model_and_into_a_file(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["input" if i == 0 else f"t{i - 1}"], [f"t{i}"], name=f"n{i}") for i in range(6)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 60, 8, 8])],
                              [helper.make_tensor_value_info("t5", TensorProto.FLOAT, [1, 60, 8, 8])])
    model = tmp_path / "m.onnx"
    model.write_bytes(helper.make_model(graph).SerializeToString())
    eng = tmp_path / "e.layers.json"
    eng.write_text(json.dumps(_engine_doc([f"conv{i}" for i in range(6)])))
    outs = []
    for fork in (True, False):
        out = tmp_path / f"out{fork}.json"
        with out.open("wb") as fh:
            res = _layers([str(eng), "--onnx", str(model)], fork=fork, stdout=fh.fileno())
        assert res.returncode == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    doc = json.loads(outs[0])
    assert doc["mapping"]["model"] == str(model) and doc["mapping"]["mapped_nodes"] == 6


def test_a_reader_that_goes_away_is_no_error(tmp_path: Path) -> None:
    eng = tmp_path / "e.layers.json"
    eng.write_text(json.dumps(_engine_doc([f"conv{i}" for i in range(3000)])))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    res = subprocess.run(f"{sys.executable} -m trtstudio.cli layers {eng} --json | head -c 100",
                         shell=True, capture_output=True, env=env, timeout=120, check=False)
    assert res.returncode == 0 and len(res.stdout) == 100
    assert b"Traceback" not in res.stderr and b"error" not in res.stderr


CHILD_FAILS = r"""
import sys
from trtstudio.bigdocs.forked import ForkedHead
from trtstudio.jsonio import dumps
head = [("a", 1), ("big", lambda: [2**70])]      # orjson cannot encode 2**70: the child gives up
fh = ForkedHead(head)
n = fh.finish([("c", "x")])
if n is None:
    sys.stdout.buffer.write(dumps({"a": 1, "big": [2**70], "c": "x"}))
"""

TAIL_NEEDS_STDLIB = r"""
from trtstudio.bigdocs.forked import ForkedHead
fh = ForkedHead([("a", [1.5, float("nan")])])
n = fh.finish([("path", "bad\udcff"), ("z", [float("inf")])])   # a lone surrogate: the standard library
import sys
print(n, file=sys.stderr)
"""

PARENT_FAILS = r"""
from trtstudio.bigdocs.forked import ForkedHead
fh = ForkedHead([("a", lambda: list(range(10)))])
fh.cancel()
print("cancelled")
"""


def _script(code: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


def test_what_either_process_cannot_encode() -> None:
    res = _script(CHILD_FAILS)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"a": 1, "big": [2**70], "c": "x"}  # written once, by the parent
    res = _script(TAIL_NEEDS_STDLIB)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"a": [1.5, None], "path": "bad\udcff", "z": [None]}
    assert res.stdout.endswith(b"}\n") and res.stderr.strip() == b"2"  # NaN and inf counted in both parts
    res = _script(PARENT_FAILS)
    assert res.stdout == b"cancelled\n" and res.returncode == 0  # the child wrote nothing


CHILD_KILLED_BEFORE_GO = r"""
import os, signal, sys, time
from trtstudio.bigdocs.forked import ForkedHead
from trtstudio.jsonio import dumps
fh = ForkedHead([("a", 1)])
time.sleep(0.5)  # it has encoded and waits for go
os.kill(fh._pid, signal.SIGKILL)
n = fh.finish([("c", "x")])
if n is None:
    sys.stdout.buffer.write(dumps({"a": 1, "c": "x"}))
"""

CHILD_KILLED_WHILE_WRITING = r"""
import os, signal, sys, threading
from trtstudio.bigdocs.forked import ForkedHead
fh = ForkedHead([("a", "x" * 1_000_000)])  # more than a pipe holds: it blocks writing, nobody reads yet
threading.Timer(1.0, lambda: os.kill(fh._pid, signal.SIGKILL)).start()
try:
    fh.finish([("c", "x")])
except OSError as exc:
    print("refused:", exc, file=sys.stderr)
"""


def test_a_child_that_dies_never_passes_for_a_whole_document() -> None:
    res = _script(CHILD_KILLED_BEFORE_GO)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"a": 1, "c": "x"}  # nothing from the child: the parent wrote it all
    proc = subprocess.Popen([sys.executable, "-c", CHILD_KILLED_WHILE_WRITING], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        proc.wait(timeout=60)  # stdout is not read meanwhile: the child's write blocks until it is killed
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert b"refused:" in err and b"incomplete" in err
    assert not out.endswith(b"}\n")  # no tail after a head that was cut


PARENT_FAILS_INTO_FILE = r"""
import sys, time
from trtstudio.bigdocs.forked import ForkedHead
sys.stdout.buffer.write(b"kept\n"); sys.stdout.flush()
fh = ForkedHead([("a", lambda: list(range(100000)))])
time.sleep(1.0)  # the child has written the head into the file
fh.cancel()
print("cancelled")
"""

CHILD_KILLED_AFTER_WRITING_INTO_FILE = r"""
import os, signal, sys, time
from trtstudio.bigdocs.forked import ForkedHead
from trtstudio.jsonio import dumps
fh = ForkedHead([("a", lambda: list(range(100000)))])
time.sleep(1.0)  # written early, waiting for go
os.kill(fh._pid, signal.SIGKILL)
if fh.finish([("c", "x")]) is None:
    sys.stdout.buffer.write(dumps({"a": list(range(100000)), "c": "x"}))
"""


def test_a_head_written_early_into_a_file_is_taken_back(tmp_path: Path) -> None:
    """Into a regular file the child writes the head before go; whatever then fails, the file holds
    what it held before plus either nothing or the whole document once."""
    out = tmp_path / "out.json"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", PARENT_FAILS_INTO_FILE], stdout=fh, stderr=subprocess.PIPE,
                             timeout=60, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == b"kept\ncancelled\n"  # the head written before the failure is gone
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", CHILD_KILLED_AFTER_WRITING_INTO_FILE], stdout=fh,
                             stderr=subprocess.PIPE, timeout=60, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    assert json.loads(out.read_bytes()) == {"a": list(range(100000)), "c": "x"}  # one document, not two heads


def test_a_file_written_in_place_is_written_only_on_go(tmp_path: Path) -> None:
    """Standard output open on the middle of a file (``1<>file``): cutting it back would lose what
    follows, so the child waits for go there and a failure leaves the file as it was."""
    out = tmp_path / "out.json"
    out.write_bytes(b"0123456789" * 1000)
    code = ("import os, sys\nos.lseek(1, 100, os.SEEK_SET)\n"
            "from trtstudio.bigdocs.forked import _file_offset\nprint(_file_offset(1), file=sys.stderr)\n" + PARENT_FAILS)
    with out.open("r+b") as fh:
        res = subprocess.run([sys.executable, "-c", code], stdout=fh, stderr=subprocess.PIPE, timeout=60,
                             check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip() == b"None"
    data = out.read_bytes()
    assert len(data) == 10000 and data[:100] == (b"0123456789" * 10) and data[100:110] == b"cancelled\n"


PARENT_KILLED_WHILE_THE_CHILD_ENCODES = r"""
import os, signal, time
from trtstudio.bigdocs.forked import ForkedHead

def slow():
    time.sleep(1.0)  # the parent is killed meanwhile
    return list(range(100000))

fh = ForkedHead([("a", slow)])
time.sleep(0.2)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_child_never_writes_after_its_parent_is_gone(tmp_path: Path) -> None:
    """The parent killed (timeout, OOM killer) while the child encodes: the child dies with it and
    writes nothing, then or later, over what the next command writes into the same file."""
    import time

    out = tmp_path / "out.json"
    with out.open("wb") as fh:
        # no pipe the orphan would hold open: run() returns when the parent dies, not when the child does
        res = subprocess.run([sys.executable, "-c", PARENT_KILLED_WHILE_THE_CHILD_ENCODES], stdout=fh,
                             stderr=subprocess.DEVNULL, timeout=60, check=False,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == -9
    out.write_bytes(b"the next command's output\n")
    time.sleep(2.0)  # long after the orphan would have encoded and written
    assert out.read_bytes() == b"the next command's output\n"


MANY_IN_ONE_PROCESS = r"""
import os, sys
from trtstudio.bigdocs.forked import ForkedHead
for i in range(5):
    ForkedHead([("a", lambda: list(range(1000)))]).finish([("b", i)])
import time
time.sleep(0.5)
ForkedHead([("a", 1)]).finish([("b", 2)])  # reaps the ended ones
me = str(os.getpid())
zombies = 0
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            stat = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        zombies += stat[0] == "Z" and stat[1] == me
print(zombies, file=sys.stderr)
"""


def test_children_not_waited_for_are_reaped(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", MANY_IN_ONE_PROCESS], stdout=fh, stderr=subprocess.PIPE,
                             timeout=60, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    assert int(res.stderr.strip()) <= 1  # at most the last one, still ending


CHUNKED = r"""
import sys
from trtstudio.bigdocs.forked import Chunked, ForkedHead
items = [{"i": i, "x": [1.5, float("nan")] if i % 7 == 0 else [i]} for i in range(1000)]
pieces = lambda: (items[i:i + 64] for i in range(0, len(items), 64))
fh = ForkedHead([("a", 1), ("empty", Chunked(lambda: iter([[], []]))), ("items", Chunked(pieces))])
n = fh.finish([("more", Chunked(pieces, count=lambda: 1000)), ("z", [float("inf")])])
print(n, file=sys.stderr)
"""

CHUNK_FAILS_INTO_FILE = r"""
import sys
from trtstudio.bigdocs.forked import Chunked, ForkedHead
from trtstudio.jsonio import dumps
sys.stdout.buffer.write(b"kept\n"); sys.stdout.flush()
pieces = lambda: iter([list(range(100000)), [2**70]])  # orjson cannot encode the second piece
fh = ForkedHead([("a", Chunked(pieces))])
if fh.finish([("c", "x")]) is None:
    sys.stdout.buffer.write(dumps({"a": list(range(100000)) + [2**70], "c": "x"}))
"""


def test_arrays_written_a_piece_at_a_time(tmp_path: Path) -> None:
    """Chunked arrays, in the head and the rest: the bytes of the document written in one go, NaN
    counted piece by piece or as the array says; a piece the child cannot encode after it wrote the
    ones before into the file leaves one whole document, written by the parent."""
    from trtstudio.jsonio import dumps

    items = [{"i": i, "x": [1.5, float("nan")] if i % 7 == 0 else [i]} for i in range(1000)]
    want = dumps({"a": 1, "empty": [], "items": items, "more": items, "z": [float("inf")]}, check_finite=False)
    for where in ("pipe", "file"):
        out = tmp_path / "chunked.json"
        with out.open("wb") as fh:
            res = subprocess.run([sys.executable, "-c", CHUNKED], stdout=fh if where == "file" else subprocess.PIPE,
                                 stderr=subprocess.PIPE, timeout=60, check=False,
                                 env=dict(os.environ, PYTHONPATH=str(ROOT)))
        assert res.returncode == 0, res.stderr
        assert (out.read_bytes() if where == "file" else res.stdout) == want
        assert int(res.stderr) == 143 + 1000 + 1  # items' NaNs, the count the rest's array gave, the inf
    out = tmp_path / "fails.json"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", CHUNK_FAILS_INTO_FILE], stdout=fh, stderr=subprocess.PIPE,
                             timeout=60, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    data = out.read_bytes()
    assert data.startswith(b"kept\n{") and json.loads(data[5:]) == {"a": list(range(100000)) + [2**70], "c": "x"}


CHANGED_WHILE_READ = r"""
import json, os, sys, time
from trtstudio import cli
from trtstudio.commands import layers

eng, new_doc = sys.argv[1], sys.argv[2]
parent = os.getpid()
read = layers._read

def rewritten_then_read(args):
    if os.getpid() == parent:  # the child has read the old file meanwhile; this process reads the new one
        time.sleep(1.0)
        with open(eng, "w") as fh:
            fh.write(new_doc)
    return read(args)

layers._read = rewritten_then_read
sys.exit(cli.main(["layers", eng, "--json"]))
"""


def test_a_file_changed_while_both_processes_read_it(tmp_path: Path) -> None:
    """The child reads the inputs itself: when a file changed between its read and this process's,
    the output is this process's read alone, written whole (not the old layers with new findings)."""
    eng = tmp_path / "e.layers.json"
    old, new = _engine_doc([f"conv{i}" for i in range(40)]), _engine_doc([f"other{i}" for i in range(7)])
    eng.write_text(json.dumps(old))
    out = tmp_path / "out.json"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", CHANGED_WHILE_READ, str(eng), json.dumps(new)], stdout=fh,
                             stderr=subprocess.PIPE, timeout=120, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0, res.stderr
    serial = _layers([str(eng)], fork=False)  # the file now holds the new document
    assert out.read_bytes() == serial.stdout
    assert [lay["name"] for lay in json.loads(serial.stdout)["layers"]] == [f"other{i}" for i in range(7)]


REST_FAILS_INTO_FILE = r"""
import sys
from trtstudio.bigdocs.forked import Chunked, ForkedHead
sys.stdout.buffer.write(b"kept\n"); sys.stdout.flush()

def pieces():
    for i in range(20):
        yield [{"i": i, "text": "x" * 1000}] * 500  # 0.5 MB a piece: some are written meanwhile
    raise RuntimeError("the rules failed")

fh = ForkedHead([("a", lambda: list(range(1000)))])
try:
    fh.finish([("b", Chunked(pieces)), ("c", 1)])
except RuntimeError as exc:
    print("failed:", exc, file=sys.stderr)
"""

REST_PIECE_NEEDS_STDLIB = r"""
from trtstudio.bigdocs.forked import Chunked, ForkedHead
fh = ForkedHead([("a", 1)])
n = fh.finish([("b", Chunked(lambda: iter([[1, 2], [2**70, float("nan")], ["\u00e9"]]))), ("c", "x")])
import sys
print(n, file=sys.stderr)
"""


def test_the_rest_written_while_it_is_encoded(tmp_path: Path) -> None:
    """The parent writes the rest a piece at a time as it encodes it: a failure half way leaves the
    file as it was (into a regular file) and raises; a piece orjson cannot encode is written by
    the standard library, the others by orjson."""
    out = tmp_path / "out.json"
    with out.open("wb") as fh:
        res = subprocess.run([sys.executable, "-c", REST_FAILS_INTO_FILE], stdout=fh, stderr=subprocess.PIPE,
                             timeout=60, check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0 and b"failed: the rules failed" in res.stderr, res.stderr
    assert out.read_bytes() == b"kept\n"
    res = _script(REST_PIECE_NEEDS_STDLIB)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {"a": 1, "b": [1, 2, 2**70, None, "\u00e9"], "c": "x"}
    assert res.stdout == b'{"a":1,"b":[1,2,1180591620717411303424,null,"\xc3\xa9"],"c":"x"}\n'
    assert res.stderr.strip() == b"1"


REST_FAILS_INTO_A_PIPE = r"""
import sys, time
from trtstudio.bigdocs.forked import Chunked, ForkedHead

def head():
    time.sleep(float(sys.argv[1]))  # the child still reads when the parent fails
    return [("a", list(range(10)))]

def pieces():
    yield [1, 2, 3]
    raise RuntimeError("the rules failed")

fh = ForkedHead(head)
try:
    fh.finish([("b", Chunked(pieces))])
except RuntimeError as exc:
    print("failed:", exc, file=sys.stderr)
"""

CANCELLED_FROM_TWO_THREADS = r"""
import threading, time
from trtstudio.bigdocs.forked import ForkedHead
errors = []
for _ in range(8):
    fh = ForkedHead(lambda: time.sleep(30) or [("a", 1)])
    gate = threading.Barrier(2)
    def cancel():
        gate.wait()
        try:
            fh.cancel()
        except BaseException as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=cancel) for _ in range(2)]
    for t in threads: t.start()
    for t in threads: t.join()
print(errors)
"""


def test_a_failure_in_the_rest_writes_nothing_into_a_pipe_and_waits_for_nobody() -> None:
    """The parent fails while it encodes the rest, the child still at its read: into a pipe nothing
    is written (the child is stopped, not let write its head), and the failure is reported at once,
    not after the child's read. Two threads cancelling at once (Ctrl-C reaching the writer thread's
    hand-over and the caller) both return quietly."""
    import time

    start = time.monotonic()
    res = subprocess.run([sys.executable, "-c", REST_FAILS_INTO_A_PIPE, "30"], capture_output=True, timeout=60,
                         check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.returncode == 0 and b"failed: the rules failed" in res.stderr, res.stderr
    assert res.stdout == b""
    assert time.monotonic() - start < 20, "the failing parent waited for the child's read"
    res = subprocess.run([sys.executable, "-c", REST_FAILS_INTO_A_PIPE, "0.5"], capture_output=True, timeout=60,
                         check=False, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert res.stdout == b"" and b"failed: the rules failed" in res.stderr
    res = _script(CANCELLED_FROM_TWO_THREADS)
    assert res.returncode == 0 and res.stdout.strip() == b"[]", (res.stdout, res.stderr)
