"""ASTRA-sim 1.0 workload files: the reader, a writer and the bundled workloads.

The format (``../shared/reference/astra-sim-1.0/workloads.md`` §1, read as
ASTRA-sim's ``Workload::initialize_workload`` reads it):

1. a parallelism keyword (:class:`Parallelism`) and its extra tokens:
   ``HYBRID_TRANSFORMER`` and ``HYBRID_TRANSFORMER_FWD_IN_BCKWD`` read
   ``<label> <model_parallel_npu_group>``; ``_FWD_IN_BCKWD`` then reads
   ``<label> k l1..lk`` (checkpoint layers) and ``<label> m i1..im`` (the layers
   that start a recompute); ``HYBRID_DLRM`` and ``_ENHANCED`` read the last
   bottom layer. Labels are ignored (the files write ``model_parallel_NPU_group:``).
2. the layer count L;
3. L layer lines ``name reserved fwd_compute fwd_type fwd_size ig_compute
   ig_type ig_size wg_compute wg_type wg_size update_time`` and, for
   ``HYBRID_CUSTOMIZED``, the layer's own parallelism keyword.

Header tokens may be split over lines as ASTRA-sim's ``>>`` allows; each layer
is one line (every known file writes it so), which lets a short or long line be
reported as such. Values stay raw: compute in cycles (= ns), sizes in bytes;
the simulator applies ``--compute-scale`` / ``--comm-scale``.

ASTRA-sim treats any collective-type token it does not know as "no
collective"; the files only ever write ``NONE`` for that, so here ``NONE`` is
the only such token and anything else unknown (``ALLREDUCES``, ``allreduce``)
is an error, as are an unknown keyword, a wrong layer count, a non-number, a
negative value and an update time of 0 (ASTRA-sim aborts on it). Every error is
one :class:`~topologies.errors.InputError` line naming ``file:line``, the field
and the token.

Bundled workloads (``topologies/presets/workloads/``, MIT licence, Georgia Tech
and Facebook; see the README there) are loaded by short name with
:func:`load_workload`; :func:`workload_names` lists them.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import cast

from topologies.errors import InputError
from topologies.units import MAX_LATENCY_NS, MAX_SIZE_BYTES

__all__ = [
    "CommType",
    "Layer",
    "Parallelism",
    "Workload",
    "bundled_workload_path",
    "format_workload",
    "load_workload",
    "parse_workload",
    "workload_names",
    "workloads_dir",
]


class Parallelism(StrEnum):
    """The parallelism keyword of a workload file (its first token)."""

    DATA = "DATA"
    MODEL = "MODEL"
    HYBRID_DATA_MODEL = "HYBRID_DATA_MODEL"
    HYBRID_MODEL_DATA = "HYBRID_MODEL_DATA"
    HYBRID_TRANSFORMER = "HYBRID_TRANSFORMER"
    HYBRID_TRANSFORMER_FWD_IN_BCKWD = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
    HYBRID_DLRM = "HYBRID_DLRM"
    HYBRID_DLRM_ENHANCED = "HYBRID_DLRM_ENHANCED"
    HYBRID_CUSTOMIZED = "HYBRID_CUSTOMIZED"
    MICRO = "MICRO"
    DISTRIBUTED_INFERENCE = "DISTRIBUTED_INFERENCE"


class CommType(StrEnum):
    """A layer's collective type as written in the file (``NONE``: no collective)."""

    NONE = "NONE"
    ALLREDUCE = "ALLREDUCE"
    ALLGATHER = "ALLGATHER"
    REDUCESCATTER = "REDUCESCATTER"
    ALLTOALL = "ALLTOALL"
    ALLREDUCEALLTOALL = "ALLREDUCEALLTOALL"


@dataclass(frozen=True)
class Layer:
    """One layer line, raw: compute in cycles (= ns), sizes in bytes, unscaled."""

    name: str
    reserved: str
    fwd_compute_ns: int
    fwd_type: CommType
    fwd_size_bytes: int
    ig_compute_ns: int
    ig_type: CommType
    ig_size_bytes: int
    wg_compute_ns: int
    wg_type: CommType
    wg_size_bytes: int
    update_ns: int
    #: HYBRID_CUSTOMIZED only: the layer's own keyword (else ``None``).
    parallelism: Parallelism | None = None


@dataclass(frozen=True)
class Workload:
    """A parsed workload file."""

    parallelism: Parallelism
    layers: tuple[Layer, ...]
    #: The bundled name, or the file's stem ("" for text without a file).
    name: str
    #: The file it was read from ("" for text).
    file: str
    #: HYBRID_TRANSFORMER*: the model-parallel NPU group G.
    model_parallel_npu_group: int | None = None
    #: HYBRID_TRANSFORMER_FWD_IN_BCKWD: checkpoint layers, in file order.
    checkpoints: tuple[int, ...] = ()
    #: HYBRID_TRANSFORMER_FWD_IN_BCKWD: layers that start a recompute, in file order.
    checkpoint_initiates: tuple[int, ...] = ()
    #: HYBRID_DLRM*: the last bottom-MLP layer.
    dlrm_last_bottom_layer: int | None = None
    #: Free-form labels of the header, kept for the writer.
    labels: tuple[str, ...] = field(default=(), compare=False, repr=False)


_TRANSFORMERS = (Parallelism.HYBRID_TRANSFORMER, Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD)
_DLRMS = (Parallelism.HYBRID_DLRM, Parallelism.HYBRID_DLRM_ENHANCED)
_INT = re.compile(r"[+-]?\d+")
_DEFAULT_LABELS = ("model_parallel_NPU_group:", "checkpoints:", "checkpoint_initiates:")

#: The layer-line columns after the name, as ASTRA-sim names them.
_COLUMNS = (
    "reserved", "fwd_compute", "fwd_type", "fwd_size", "ig_compute", "ig_type", "ig_size",
    "wg_compute", "wg_type", "wg_size", "update_time",
)


def _known(enum: type[StrEnum]) -> str:
    return ", ".join(e.value for e in enum)


class _Tokens:
    """The header's tokens with their line numbers, read one at a time."""

    def __init__(self, lines: list[list[str]], file: str) -> None:
        self.items = [(n, tok) for n, toks in enumerate(lines, 1) for tok in toks]
        self.pos = 0
        self.file = file
        self.line = 1

    def where(self, line: int | None = None) -> str:
        return f"{self.file or 'workload'}:{self.line if line is None else line}"

    def next(self, what: str) -> str:
        if self.pos >= len(self.items):
            raise InputError(f"the file ends where {what} should be", what, None, self.where())
        self.line, tok = self.items[self.pos]
        self.pos += 1
        return tok

    def integer(self, what: str, minimum: int = 0) -> int:
        tok = self.next(what)
        return _integer(tok, what, self.where(), minimum)


def _integer(tok: str, what: str, where: str, minimum: int = 0,
             maximum: tuple[int | float, str] | None = None) -> int:
    if not _INT.fullmatch(tok):
        raise InputError("not an integer", what, tok, where)
    if len(tok.lstrip("+-0")) > 30:  # far past any count, time or size (and int()'s limit)
        raise InputError("more than 30 digits, beyond any count, time or size", what, tok,
                         where)
    value = int(tok)
    if value < minimum:
        reason = "negative" if value < 0 and minimum == 0 else f"must be >= {minimum}"
        raise InputError(reason, what, tok, where)
    if maximum is not None and value > maximum[0]:
        raise InputError(f"more than {maximum[1]}, the largest accepted", what, tok, where)
    return value


def _comm_type(tok: str, what: str, where: str) -> CommType:
    try:
        return CommType(tok)
    except ValueError:
        raise InputError(f"unknown collective type (known: {_known(CommType)})",
                         what, tok, where) from None


def _keyword(tok: str, what: str, where: str) -> Parallelism:
    try:
        return Parallelism(tok)
    except ValueError:
        raise InputError(f"unknown parallelism keyword (known: {_known(Parallelism)})",
                         what, tok, where) from None


def _layer(toks: list[str], customized: bool, where: str) -> Layer:
    want = len(_COLUMNS) + 1 + int(customized)
    if len(toks) != want:
        cols = "name " + " ".join(_COLUMNS) + (" parallelism" if customized else "")
        raise InputError(f"a layer line has {want} tokens ({cols}), this one {len(toks)}",
                         "layer", toks[0], where)
    name = toks[0]
    vals = dict(zip(_COLUMNS, toks[1:], strict=False))

    def num(col: str, minimum: int = 0) -> int:
        limit = (MAX_SIZE_BYTES, "1 PiB") if col.endswith("_size") else \
            (MAX_LATENCY_NS, f"{MAX_LATENCY_NS:g} ns")
        return _integer(vals[col], f"{name} {col}", where, minimum, limit)

    def typ(col: str) -> CommType:
        return _comm_type(vals[col], f"{name} {col}", where)

    _integer(vals["reserved"], f"{name} reserved", where, minimum=-(2**31))
    update = num("update_time")
    if update == 0:
        raise InputError("an update time of 0 makes ASTRA-sim abort (an event at 'now'); "
                         "use 1 or more", f"{name} update_time", vals["update_time"], where)
    return Layer(
        name=name, reserved=vals["reserved"],
        fwd_compute_ns=num("fwd_compute"), fwd_type=typ("fwd_type"),
        fwd_size_bytes=num("fwd_size"),
        ig_compute_ns=num("ig_compute"), ig_type=typ("ig_type"), ig_size_bytes=num("ig_size"),
        wg_compute_ns=num("wg_compute"), wg_type=typ("wg_type"), wg_size_bytes=num("wg_size"),
        update_ns=update,
        parallelism=_keyword(toks[-1], f"{name} parallelism", where) if customized else None,
    )


def _layer_list(tokens: _Tokens, what: str) -> tuple[list[int], int]:
    count = tokens.integer(f"{what} count")
    line = tokens.line
    return [tokens.integer(what) for _ in range(count)], line


def parse_workload(text: str, file: str = "") -> Workload:
    """Parse ASTRA-sim 1.0 workload text (``file`` names it in errors and the result)."""
    lines = [line.split() for line in text.splitlines()]
    tokens = _Tokens(lines, file)
    if not tokens.items:
        raise InputError("empty workload file: expected a parallelism keyword",
                         "parallelism", None, tokens.where(1))
    keyword = _keyword(tokens.next("parallelism"), "parallelism", tokens.where())
    labels: list[str] = []
    group = None
    checkpoints: list[int] = []
    initiates: list[int] = []
    spans: list[tuple[str, list[int], int]] = []
    last_bottom = None
    if keyword in _TRANSFORMERS:
        label = tokens.next("model_parallel_npu_group label")
        if _INT.fullmatch(label):
            raise InputError("expected a label before the model-parallel group, as in "
                             "'model_parallel_NPU_group: 4'", "model_parallel_npu_group label",
                             label, tokens.where())
        labels.append(label)
        group = tokens.integer("model_parallel_npu_group", minimum=1)
        if keyword is Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD:
            labels.append(tokens.next("checkpoints label"))
            checkpoints, line = _layer_list(tokens, "checkpoints")
            spans.append(("checkpoints", checkpoints, line))
            labels.append(tokens.next("checkpoint_initiates label"))
            initiates, line = _layer_list(tokens, "checkpoint_initiates")
            spans.append(("checkpoint_initiates", initiates, line))
    elif keyword in _DLRMS:
        last_bottom = tokens.integer("dlrm_last_bottom_layer")
        spans.append(("dlrm_last_bottom_layer", [last_bottom], tokens.line))
    count = tokens.integer("layer count", minimum=1)
    count_line = tokens.line
    if tokens.pos < len(tokens.items) and tokens.items[tokens.pos][0] == count_line:
        raise InputError("unexpected token after the layer count (layers start on the next "
                         "line)", "layer count", tokens.items[tokens.pos][1], tokens.where())
    layer_lines = [(n, toks) for n, toks in enumerate(lines, 1) if n > count_line and toks]
    if len(layer_lines) != count:
        where = tokens.where(layer_lines[count][0] if len(layer_lines) > count else count_line)
        raise InputError(f"the file has {len(layer_lines)} layer lines, not {count}",
                         "layer count", count, where)
    customized = keyword is Parallelism.HYBRID_CUSTOMIZED
    layers = tuple(_layer(toks, customized, tokens.where(n)) for n, toks in layer_lines)
    for what, values, line in spans:
        for value in values:
            if value >= count:
                raise InputError(f"no such layer (the file has {count}, numbered from 0)",
                                 what, value, tokens.where(line))
    for layer in initiates:
        if not any(c <= layer for c in checkpoints):
            raise InputError("a recompute needs a checkpoint at or before its layer",
                             "checkpoint_initiates", layer, tokens.where(spans[-1][2]))
    return Workload(
        parallelism=keyword, layers=layers, name=Path(file).stem if file else "", file=file,
        model_parallel_npu_group=group, checkpoints=tuple(checkpoints),
        checkpoint_initiates=tuple(initiates), dlrm_last_bottom_layer=last_bottom,
        labels=tuple(labels),
    )


def format_workload(workload: Workload) -> str:
    """ASTRA-sim 1.0 text for ``workload`` (tab-separated; parses back to an equal one)."""
    labels = list(workload.labels) or list(_DEFAULT_LABELS)
    labels += list(_DEFAULT_LABELS[len(labels):])
    head = [workload.parallelism.value]
    if workload.parallelism in _TRANSFORMERS:
        head += [labels[0], str(workload.model_parallel_npu_group)]
        if workload.parallelism is Parallelism.HYBRID_TRANSFORMER_FWD_IN_BCKWD:
            for label, values in ((labels[1], workload.checkpoints),
                                  (labels[2], workload.checkpoint_initiates)):
                head += [label, str(len(values)), *map(str, values)]
    elif workload.parallelism in _DLRMS:
        head.append(str(workload.dlrm_last_bottom_layer))
    out = ["\t".join(head), str(len(workload.layers))]
    for ly in workload.layers:
        row = [ly.name, ly.reserved, ly.fwd_compute_ns, ly.fwd_type, ly.fwd_size_bytes,
               ly.ig_compute_ns, ly.ig_type, ly.ig_size_bytes, ly.wg_compute_ns, ly.wg_type,
               ly.wg_size_bytes, ly.update_ns]
        if ly.parallelism is not None:
            row.append(ly.parallelism)
        out.append("\t".join(map(str, row)))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------- bundled files

#: Short name -> file in ``topologies/presets/workloads/`` (copied unchanged).
_BUNDLED = {
    "vgg16": "vgg16.txt",
    "gpt3": "gpt3.txt",
    "resnet50": "Resnet50_DataParallel.txt",
    "dlrm": "DLRM_HybridParallel.txt",
    "transformer": "Transformer_HybridParallel.txt",
    "transformer-fwd-in-bckwd": "Transformer_HybridParallel_Fwd_In_Bckwd.txt",
    "mlp-data-model": "MLP_HybridParallel_Data_Model.txt",
    "mlp-model-data": "MLP_HybridParallel_Model_Data.txt",
    "mlp-model": "MLP_ModelParallel.txt",
    "micro-allreduce": "microAllReduce.txt",
    "micro-alltoall": "microAllToAll.txt",
}
#: Other accepted spellings: ``mlp`` and the files' own stems (case-insensitive).
_ALIASES = {"mlp": "mlp-model"} | {
    Path(f).stem.lower(): name for name, f in _BUNDLED.items()
}


def workloads_dir() -> Path:
    """The folder holding the bundled workload files."""
    return Path(os.fspath(cast("os.PathLike[str]",
                              resources.files("topologies").joinpath("presets", "workloads"))))


def workload_names() -> list[str]:
    """The short names of the bundled workloads, sorted."""
    return sorted(_BUNDLED)


def _canonical(spec: str) -> str | None:
    key = spec.lower().removesuffix(".txt")
    if key in _BUNDLED:
        return key
    return _ALIASES.get(key)


def bundled_workload_path(name: str) -> Path | None:
    """The file of bundled workload ``name`` (short name or file stem), or ``None``."""
    canonical = _canonical(name)
    return workloads_dir() / _BUNDLED[canonical] if canonical else None


def _read(path: Path, shown: str) -> str:
    from topologies.files import read_input_text

    try:
        return read_input_text(path, "WORKLOAD")
    except InputError as err:  # the workload as the user named it
        raise InputError(err.reason, "WORKLOAD", shown) from None


def load_workload(spec: str) -> Workload:
    """A workload from a path to an existing file or a bundled name (``vgg16``, ``gpt3``, ...).

    An existing file wins over a bundled name. Anything else raises
    ``InputError(field="WORKLOAD")`` listing the bundled names.
    """
    path = Path(spec)
    if path.is_file():
        return parse_workload(_read(path, spec), spec)
    if (path.exists() or path.is_symlink()) and _canonical(spec) is None:
        _read(path, spec)  # a folder, a FIFO, a device, a dangling link: says which
    canonical = _canonical(spec)
    if canonical is None:
        raise InputError(f"no such file or bundled workload (known: {', '.join(workload_names())})",
                         "WORKLOAD", spec)
    bundled = workloads_dir() / _BUNDLED[canonical]
    return replace(parse_workload(_read(bundled, spec), str(bundled)), name=canonical)
