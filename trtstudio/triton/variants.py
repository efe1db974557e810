"""Model configurations to search (Qt-free): the model's files, its default config and its variants.

A :class:`ModelSource` is what the search loads: a model-repository entry (``config.pbtxt`` and its
version folders) or an ONNX file served by a python-backend model running ONNX Runtime
(``launch.MODEL_PY``). Configs are Triton's ``ModelConfig`` as JSON (the form the repository API's
load takes as a config override), parsed from and written to ``config.pbtxt`` through the protobuf
text format of tritonclient's ``model_config_pb2``, so what is written is what Triton parses.

A :class:`Variant` changes the default config in instance count (and kind), max_batch_size and
dynamic batching (on/off, max queue delay, preferred sizes). Preferred batch sizes are never above
max_batch_size (Model Analyzer's generated configs failed to load on exactly that, model_analyzer#957).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from trtstudio.errors import InputError

ONNX_TYPES = {1: "TYPE_FP32", 2: "TYPE_UINT8", 3: "TYPE_INT8", 4: "TYPE_UINT16", 5: "TYPE_INT16", 6: "TYPE_INT32",
              7: "TYPE_INT64", 9: "TYPE_BOOL", 10: "TYPE_FP16", 11: "TYPE_FP64", 12: "TYPE_UINT32", 13: "TYPE_UINT64"}


def _pb() -> tuple[Any, Any, Any]:
    try:
        from google.protobuf import json_format, text_format
        from tritonclient.grpc import model_config_pb2
    except ImportError as exc:
        from trtstudio.errors import BackendError

        raise BackendError(f"tritonclient[grpc] is not installed ({exc}); pip install 'trtstudio[triton]'") from None
    return model_config_pb2, json_format, text_format


def parse_pbtxt(text: str, source: str | os.PathLike[str] = "config.pbtxt") -> dict[str, Any]:
    """``config.pbtxt`` text -> Triton's ModelConfig as JSON (int64 fields as strings, as protobuf writes them)."""
    mc, json_format, text_format = _pb()
    try:
        msg = text_format.Parse(text, mc.ModelConfig())
    except text_format.ParseError as exc:
        raise InputError(source, f"not a Triton model config: {exc}") from None
    out: dict[str, Any] = json_format.MessageToDict(msg, preserving_proto_field_name=True)
    return out


def to_pbtxt(config: dict[str, Any]) -> str:
    """ModelConfig JSON -> ``config.pbtxt`` text (ValueError for a field Triton's proto does not have)."""
    mc, json_format, text_format = _pb()
    try:
        msg = json_format.ParseDict(config, mc.ModelConfig())
    except json_format.ParseError as exc:
        raise ValueError(str(exc)) from None
    text: str = text_format.MessageToString(msg)
    return text


@dataclass
class ModelSource:
    """A model the search can load under any name: its files (relative path -> bytes, as the load
    API's ``file:`` overrides take them) and its default config (JSON)."""

    name: str
    files: dict[str, bytes]
    config: dict[str, Any]
    origin: str
    kind: str = "entry"  # or "onnx" (served by a python-backend model running ONNX Runtime)

    @classmethod
    def from_entry(cls, folder: str | os.PathLike[str]) -> ModelSource:
        """A model-repository entry: ``folder/config.pbtxt`` and its version folders."""
        root = Path(folder)
        cfg_path = root / "config.pbtxt"
        if not root.is_dir() or not cfg_path.is_file():
            raise InputError(folder, "not a model-repository entry (a folder with config.pbtxt and version folders)")
        config = parse_pbtxt(cfg_path.read_text(), cfg_path)
        files = {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
                 if p.is_file() and p.name != "config.pbtxt" and p.relative_to(root).parts[0].isdigit()
                 and "__pycache__" not in p.parts}
        if not files:
            raise InputError(folder, "has no version folder with files (e.g. 1/model.onnx)")
        config["name"] = root.name
        return cls(root.name, files, config, str(root), "entry")

    @classmethod
    def from_onnx(cls, path: str | os.PathLike[str], shapes: dict[str, tuple[int, ...]] | None = None) -> ModelSource:
        """An ONNX file as a python-backend model running ONNX Runtime (``launch.MODEL_PY``): batched
        (max_batch_size 8, dynamic batching with a 100 µs queue delay, one CPU instance, as
        ``trtstudio triton-config`` writes) when every input's and output's first dim is dynamic
        or 1. ``shapes`` (full shapes, batch first) fix the other dynamic dims."""
        from trtstudio.backends.model_io import read_onnx
        from trtstudio.triton.launch import MODEL_PY

        model = read_onnx(path)
        shapes = shapes or {}
        tensors = [("input", t) for t in model.inputs] + [("output", t) for t in model.outputs]
        batched = all(t.fixed_dims(-1)[:1] in ([-1], [1]) for _, t in tensors)
        config: dict[str, Any] = {"name": Path(path).stem, "backend": "python", "max_batch_size": 8 if batched else 0,
                                  "input": [], "output": []}
        for key, t in tensors:
            if t.elem_type not in ONNX_TYPES:
                raise InputError(path, f"{key} {t.name!r}: element type {t.elem_type} has no Triton data type")
            dims = list(t.fixed_dims(-1))
            if t.name in shapes:
                given = list(shapes[t.name])
                if len(given) != len(dims) or any(d >= 0 and d != g for d, g in zip(dims, given, strict=True)):
                    raise InputError("--shapes", f"input {t.name!r} takes shape {dims}, got {given}")
                dims = given
            dims = dims[1:] if batched else dims
            if key == "input" and any(d < 0 for d in dims):
                raise InputError("--shapes", f"input {t.name!r} has dynamic dims {t.fixed_dims(-1)}; give --shapes "
                                             f"{t.name}:1x... to serve it with fixed dims")
            config[key].append({"name": t.name, "data_type": ONNX_TYPES[t.elem_type], "dims": dims or [1]})
        config["instance_group"] = [{"count": 1, "kind": "KIND_CPU"}]
        config["parameters"] = {"intra_op_threads": {"string_value": "1"}}
        if batched:
            config["dynamic_batching"] = {"max_queue_delay_microseconds": 100}
        files = {"1/model.onnx": Path(path).read_bytes(), "1/model.py": MODEL_PY.encode()}
        return cls(Path(path).stem, files, config, str(path), "onnx")

    def write_entry(self, folder: str | os.PathLike[str], config: dict[str, Any]) -> Path:
        """Write a model-repository entry (``folder/config.pbtxt`` + the files) for ``config``."""
        out = Path(folder)
        text = to_pbtxt(config | {"name": out.name})
        for rel, data in self.files.items():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_bytes(data)
        tmp = out / "config.pbtxt.tmp"
        tmp.write_text(text)
        os.replace(tmp, out / "config.pbtxt")
        return out / "config.pbtxt"


@dataclass(frozen=True)
class Variant:
    """One configuration: instances (count and kind), max_batch_size, dynamic batching, and for a
    TensorRT plan the optimization profile its instances use.

    ``queue_delay_us`` None: dynamic batching off. ``preferred``: preferred batch sizes (each
    <= max_batch_size; empty lets Triton batch up to max_batch_size). ``profile``: the instance
    group's ``profile`` (optimization profile names, a TensorRT plan's; empty: Triton's default,
    the first). ``gpus``: the instance group's ``gpus`` (``count`` instances on each; KIND_GPU). Empty
    ``kind``, ``profile`` and ``gpus`` keep what the model's own config says."""

    instances: int
    max_batch_size: int
    queue_delay_us: int | None
    preferred: tuple[int, ...] = ()
    kind: str = ""  # "KIND_CPU", "KIND_GPU"; "" keeps the default config's
    profile: tuple[str, ...] = ()
    gpus: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if self.gpus and self.kind not in ("KIND_GPU", ""):
            raise ValueError(f"GPUs {list(self.gpus)} are for KIND_GPU instances, not {self.kind}")
        if self.instances < 1 or self.max_batch_size < 0:
            raise ValueError(f"invalid variant {self}")
        if self.queue_delay_us is not None and self.max_batch_size == 0:
            raise ValueError("dynamic batching needs max_batch_size > 0")
        if any(p < 1 or p > self.max_batch_size for p in self.preferred):
            raise ValueError(f"preferred batch sizes {list(self.preferred)} must be within 1..{self.max_batch_size}")

    @property
    def key(self) -> str:
        """Short, name-safe label: ``i2_b8_q100`` (``qoff``: no dynamic batching; ``p4-8``: preferred sizes)."""
        q = "off" if self.queue_delay_us is None else str(self.queue_delay_us)
        pref = f"_p{'-'.join(str(p) for p in self.preferred)}" if self.preferred else ""
        kind = {"KIND_GPU": "_gpu", "KIND_CPU": "_cpu"}.get(self.kind, "")
        prof = f"_prof{'-'.join(self.profile)}" if self.profile else ""
        gpus = f"_g{'-'.join(str(g) for g in self.gpus)}" if self.gpus else ""
        return f"i{self.instances}_b{self.max_batch_size}_q{q}{pref}{kind}{gpus}{prof}"

    def describe(self) -> str:
        batching = ("no dynamic batching" if self.queue_delay_us is None else
                    f"dynamic batching {self.queue_delay_us} µs" + (f" preferred {list(self.preferred)}" if self.preferred else ""))
        kind = f" {self.kind.replace('KIND_', '')}" if self.kind else ""
        where = f" on each of GPUs {', '.join(map(str, self.gpus))}" if self.gpus else ""
        prof = f", optimization profile {', '.join(self.profile)}" if self.profile else ""
        return f"{self.instances}{kind} instance(s){where}, max_batch_size {self.max_batch_size}, {batching}{prof}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"preferred": list(self.preferred), "profile": list(self.profile), "gpus": list(self.gpus),
                               "key": self.key}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Variant:
        return cls(int(d["instances"]), int(d["max_batch_size"]), None if d.get("queue_delay_us") is None
                   else int(d["queue_delay_us"]), tuple(int(p) for p in d.get("preferred") or ()), str(d.get("kind") or ""),
                   tuple(str(p) for p in d.get("profile") or ()), tuple(int(g) for g in d.get("gpus") or ()))

    @classmethod
    def of_config(cls, config: dict[str, Any]) -> Variant:
        """The variant a config is (its first instance group; preferred sizes above max_batch_size dropped)."""
        groups = config.get("instance_group") or [{}]
        mbs = int(config.get("max_batch_size") or 0)
        db = config.get("dynamic_batching")
        delay = None if db is None or mbs == 0 else int(db.get("max_queue_delay_microseconds") or 0)
        pref = tuple(int(p) for p in (db or {}).get("preferred_batch_size") or () if 0 < int(p) <= mbs) if delay is not None else ()
        g = groups[0]
        return cls(int(g.get("count") or 1), mbs, delay, pref, str(g.get("kind") or ""),
                   tuple(str(p) for p in g.get("profile") or ()), tuple(int(x) for x in g.get("gpus") or ()))

    def apply(self, base: dict[str, Any], name: str) -> dict[str, Any]:
        """``base`` (ModelConfig JSON) with this variant's instances, batching and ``name``."""
        cfg = copy.deepcopy(base)
        cfg["name"] = name
        cfg["max_batch_size"] = self.max_batch_size
        group = dict((cfg.get("instance_group") or [{}])[0])
        group["count"] = self.instances
        if self.kind:
            group["kind"] = self.kind
        if self.profile:  # (empty: the model's own, as kind)
            group["profile"] = list(self.profile)
        if self.gpus:
            group["gpus"] = list(self.gpus)
        cfg["instance_group"] = [group]
        cfg.pop("dynamic_batching", None)
        if self.queue_delay_us is not None:
            db: dict[str, Any] = {"max_queue_delay_microseconds": self.queue_delay_us}
            if self.preferred:
                db["preferred_batch_size"] = list(self.preferred)
            cfg["dynamic_batching"] = db
        return cfg


@dataclass
class Space:
    """The values each dimension may take, in the order quick mode walks them."""

    instances: list[int] = field(default_factory=lambda: [1, 2, 4])
    max_batch_sizes: list[int] = field(default_factory=lambda: [1, 2, 4, 8, 16])
    queue_delays_us: list[int | None] = field(default_factory=lambda: [None, 0, 100, 1000])
    preferred: bool = False  # also try preferred sizes = [max_batch_size]
    # a TensorRT plan's optimization profiles to try, each an instance group's ``profile`` (): Triton's default)
    profiles: list[tuple[str, ...]] = field(default_factory=lambda: [()])
    gpus: tuple[int, ...] = ()  # every variant's instances on each of these GPUs (KIND_GPU); (): Triton's choice

    def for_model(self, default: Variant) -> Space:
        """This space within what the model allows: no batching dims for a model that cannot batch."""
        if default.max_batch_size == 0:
            return Space(sorted(set(self.instances)), [0], [None], False, self.profiles, self.gpus)
        return self

    def variant(self, i: int, b: int, q: int, kind: str = "", p: int = 0) -> Variant | None:
        """The variant at these indexes (None where it is not valid: batching without a batch dim)."""
        mbs, delay = self.max_batch_sizes[b], self.queue_delays_us[q]
        if delay is not None and mbs == 0:
            return None
        return Variant(self.instances[i], mbs, delay, (), kind, self.profiles[p], self.gpus)

    def grid(self, kind: str = "") -> list[Variant]:
        """Every valid variant (exhaustive mode), preferred-size variants included when asked."""
        out: list[Variant] = []
        for i, b, q, p in itertools.product(range(len(self.instances)), range(len(self.max_batch_sizes)),
                                            range(len(self.queue_delays_us)), range(len(self.profiles))):
            v = self.variant(i, b, q, kind, p)
            if v is None:
                continue
            out.append(v)
            if self.preferred and v.queue_delay_us is not None and v.max_batch_size > 1:
                out.append(Variant(v.instances, v.max_batch_size, v.queue_delay_us, (v.max_batch_size,), kind,
                                   v.profile, v.gpus))
        return out

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def is_tensorrt_plan(config: dict[str, Any]) -> bool:
    """Whether a config serves a TensorRT plan (the only models with optimization profiles)."""
    return config.get("platform") == "tensorrt_plan" or config.get("backend") == "tensorrt"


def plan_profiles(text: str | None, source: ModelSource, what: str = "--profiles") -> list[tuple[str, ...]]:
    """``"0,1"`` -> the optimization profiles to try, one per variant (:attr:`Space.profiles`);
    ``[()]`` (the model's own) for none given. InputError naming ``what`` for a model that is no
    TensorRT plan, or a profile that is no whole number."""
    if not (text or "").strip():
        return [()]
    if not is_tensorrt_plan(source.config):
        served = source.config.get("platform") or source.config.get("backend") or "another backend"
        raise InputError(what, f"only a TensorRT plan (platform tensorrt_plan) has optimization profiles; "
                               f"{source.name} is served by {served}")
    return [(str(p),) for p in parse_list(str(text), what)]


def gpu_list(text: str | None, kind: str | None, source: ModelSource, what: str = "--gpus") -> tuple[int, ...]:
    """``"0,1"`` -> the GPUs every variant's instances go on (:attr:`Space.gpus`); () for none given.
    ``kind``: the variants' instance kind asked for (``cpu``/``gpu``; None keeps the model's).
    InputError naming ``what`` where the instances are not on GPUs."""
    if not (text or "").strip():
        return ()
    own = Variant.of_config(source.config).kind
    if (kind or "").lower() != "gpu" and not (kind is None and own == "KIND_GPU"):
        are = "KIND_CPU" if kind == "cpu" else own or "of the kind Triton chooses"
        hint = "give --kind gpu" if what.startswith("--") else "the model's config must ask for KIND_GPU"
        raise InputError(what, f"places GPU instances: {hint} (the variants' instances are {are})")
    return tuple(parse_list(str(text), what))


def parse_list(text: str, what: str, allow_off: bool = False) -> list[Any]:
    """``"1,2,4"`` -> ``[1, 2, 4]``; with ``allow_off``, ``off`` stands for None. InputError naming ``what``."""
    out: list[Any] = []
    for item in text.replace(" ", "").split(","):
        if not item:
            continue
        if allow_off and item.lower() == "off":
            out.append(None)
            continue
        try:
            v = int(item)
        except ValueError:
            raise InputError(what, f"{item!r} is not a whole number" + (" or off" if allow_off else "")) from None
        if v < 0 or (v == 0 and what == "--instances"):
            raise InputError(what, f"{v} is out of range")
        out.append(v)
    if not out:
        raise InputError(what, "give a comma-separated list")
    return list(dict.fromkeys(out))


def config_json(config: dict[str, Any]) -> str:
    """The config override the repository API's load takes (JSON text)."""
    return json.dumps(config)
