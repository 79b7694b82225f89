"""ASTRA-sim 1.0 text workloads to Chakra ETs, node for node as chakra's text converter.

``chakra_converter Text --input F --output PREFIX --num-npus N --num-passes P``
(``src/converter/text_converter.py`` of github:mlcommons/chakra) writes one file per rank,
``PREFIX.<rank>.et``: a ``GlobalMetadata`` (``schema``, and the whole input file as
``input_file``), then the nodes of every pass. Node ids run on across ranks (rank r's are
offset by r x nodes per rank); the graphs are otherwise identical. What it does, and so what
this does too:

- the compute *cycles* of the 1.0 file go into ``duration_micros`` unchanged (ASTRA-sim 2.x
  multiplies them by 1000: a converted run is 1000x compute-heavier than the 1.0 run);
- a ``NONE`` collective becomes an ALL_REDUCE (comm type 0) of size 0, except in the DLRM
  loop, which leaves NONE weight-gradient collectives out; no ``involved_dim``, no
  ``pg_name``: every collective spans every NPU;
- the loop of each parallelism (MICRO, DATA, MODEL, HYBRID_DATA_MODEL, HYBRID_MODEL_DATA,
  HYBRID_DLRM[_ENHANCED]) is its own dependency pattern, reproduced exactly, quirks
  included (e.g. the MODEL loop skips the first layer's input-gradient collective by
  ``num_layers`` from the file's second line, not by the layers it read).

Every layer line needs its twelve columns with whole numbers where chakra calls ``int``.
"""

from __future__ import annotations

from dataclasses import dataclass

from topologies.chakra.et import Attribute, GlobalMetadata, Node
from topologies.chakra.trace import Trace
from topologies.chakra.types import CommType, NodeType
from topologies.errors import InputError

__all__ = ["CHAKRA_SCHEMAS", "CYCLES_WARNING", "build", "check_args", "convert_workload",
           "metadata"]

#: The ``schema`` strings chakra's text converter has written, by chakra version.
CHAKRA_SCHEMAS = {"0.0.4": "1.0.2-chakra.0.0.4", "1.0.0": "1.0.2-chakra.1.0.0"}
#: The one warning line of a conversion.
CYCLES_WARNING = ("chakra's text converter writes the 1.0 compute cycles as microseconds: "
                  "ASTRA-sim 2.x runs these traces 1000x compute-heavier than ASTRA-sim 1.0 "
                  "runs the text file")

_COMM_TYPES = {"ALLREDUCE": CommType.ALL_REDUCE, "ALLTOALL": CommType.ALL_TO_ALL,
               "ALLGATHER": CommType.ALL_GATHER, "REDUCESCATTER": CommType.REDUCE_SCATTER}


@dataclass
class _Layer:
    name: str
    fwd_time: int
    fwd_type: str
    fwd_size: int
    ig_time: int
    ig_type: str
    ig_size: int
    wg_time: int
    wg_type: str
    wg_size: int
    fwd_comp: Node | None = None
    fwd_comm: Node | None = None
    ig_comp: Node | None = None
    ig_comm: Node | None = None
    wg_comp: Node | None = None
    wg_comm: Node | None = None
    index: int = -1  # the layer's place in the file (0 = the first layer line)


def _int(word: str, what: str, line_no: int, file: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise InputError(f"chakra's converter needs a whole number for the {what}",
                         f"line {line_no}", word, file) from None


def _layer(line: str, line_no: int, file: str) -> _Layer:
    col = line.strip().split()
    if len(col) < 12:
        raise InputError(f"a layer needs 12 columns, this line has {len(col)} (chakra's "
                         "converter stops on it)", f"line {line_no}", line.strip()[:80], file)
    return _Layer(col[0], _int(col[2], "forward compute", line_no, file), col[3],
                  _int(col[4], "forward size", line_no, file),
                  _int(col[5], "input-gradient compute", line_no, file), col[6],
                  _int(col[7], "input-gradient size", line_no, file),
                  _int(col[8], "weight-gradient compute", line_no, file), col[9],
                  _int(col[10], "weight-gradient size", line_no, file))


class _Builder:
    """Rank 0's nodes in chakra's order (ids from 0; other ranks are offset copies)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        #: Per collective node id: (its layer's index, phase fwd | ig | wg, the 1.0 type).
        self.comms: dict[int, tuple[int, str, str]] = {}

    def node(self, name: str, kind: NodeType) -> Node:
        n = Node(id=len(self.nodes), name=name, type=int(kind))
        self.nodes.append(n)
        return n

    def comp(self, layer: str, phase: str, time: int) -> Node:
        n = self.node(f"COMP_NODE_{layer}_{phase}", NodeType.COMP_NODE)
        n.duration_micros = time
        return n

    def comm(self, layer: str, comm_type: str, size: int, of: _Layer, phase: str) -> Node:
        n = self.node(f"COMM_COLL_NODE_{layer}_{comm_type}", NodeType.COMM_COLL_NODE)
        self.comms[n.id] = (of.index, phase, comm_type)
        n.attrs.append(Attribute("comm_type", "int64", int(_COMM_TYPES.get(comm_type, 0))))
        n.attrs.append(Attribute("comm_size", "int64", size))
        return n


def _dep(child: Node, parent: Node | None) -> None:
    if parent is None:  # chakra's converter crashes here (a dependency on no node)
        raise InputError("chakra's converter fails on this workload: node "
                         f"{child.name} depends on a node its loop never made", "layers",
                         child.name)
    child.data_deps.append(parent.id)


def _micro(b: _Builder, layers: list[_Layer], passes: int) -> None:
    for _ in range(passes):
        for layer in layers:
            b.comm(layer.name, layer.wg_type, layer.wg_size, layer, "wg")


def _data(b: _Builder, layers: list[_Layer], passes: int) -> None:
    for _ in range(passes):
        fwd = None
        for idx, layer in enumerate(layers):
            fwd = b.comp(layer.name, "FWD", layer.fwd_time)
            if idx:
                _dep(fwd, layers[idx - 1].fwd_comp)
            if layer.wg_comm is not None:
                _dep(fwd, layer.wg_comm)
            layer.fwd_comp = fwd
        for idx, layer in enumerate(reversed(layers)):
            wg = b.comp(layer.name, "BWD_WG", layer.wg_time)
            _dep(wg, fwd if idx == 0 else layers[len(layers) - idx].ig_comp)
            comm = b.comm(layer.name, layer.wg_type, layer.wg_size, layer, "wg")
            _dep(comm, wg)
            layer.wg_comm = comm
            if idx != len(layers) - 1:
                ig = b.comp(layer.name, "BWD_IG", layer.ig_time)
                _dep(ig, wg)
                layer.ig_comp = ig
    for layer in layers:
        layer.wg_comm = None


def _model(b: _Builder, layers: list[_Layer], passes: int, num_layers: int) -> None:
    for _ in range(passes):
        fwd_comm = None
        for idx, layer in enumerate(layers):
            fwd = b.comp(layer.name, "FWD", layer.fwd_time)
            if idx:
                _dep(fwd, layers[idx - 1].fwd_comm)
            if layer.wg_comp is not None:
                _dep(fwd, layer.wg_comp)
            layer.fwd_comp = fwd
            fwd_comm = b.comm(layer.name, layer.fwd_type, layer.fwd_size, layer, "fwd")
            layer.fwd_comm = fwd_comm
            _dep(fwd_comm, fwd)
        for idx, layer in enumerate(reversed(layers)):
            ig = b.comp(layer.name, "BWD_IG", layer.ig_time)
            if idx == 0:
                _dep(ig, fwd_comm)
            else:
                _dep(ig, layers[len(layers) - idx].wg_comp)
                _dep(ig, layers[len(layers) - idx].ig_comm)
            if idx != num_layers - 1:
                ig_comm = b.comm(layer.name, layer.ig_type, layer.ig_size, layer, "ig")
                _dep(ig_comm, ig)
                layer.ig_comm = ig_comm
            wg = b.comp(layer.name, "BWD_WG", layer.wg_time)
            _dep(wg, ig)
            layer.wg_comp = wg
    for layer in layers:
        layer.wg_comp = None


def _hybrid(b: _Builder, layers: list[_Layer], passes: int, num_layers: int,
            ig_suffix: str) -> None:
    for _ in range(passes):
        fwd_comm = None
        for idx, layer in enumerate(layers):
            fwd = b.comp(layer.name, "FWD", layer.fwd_time)
            if layer.wg_comm is not None:
                _dep(fwd, layer.wg_comm)
            if idx:
                _dep(fwd, layers[idx - 1].fwd_comm)
            fwd_comm = b.comm(layer.name, layer.fwd_type, layer.fwd_size, layer, "fwd")
            _dep(fwd_comm, fwd)
            layer.fwd_comm = fwd_comm
        for idx, layer in enumerate(reversed(layers)):
            ig = b.comp(layer.name, "BWD_IG", layer.ig_time)
            if idx == 0:
                _dep(ig, fwd_comm)
            else:
                _dep(ig, layers[len(layers) - idx].wg_comp)
                _dep(ig, layers[len(layers) - idx].ig_comm)
            if idx != num_layers - 1:
                ig_comm = b.comm(layer.name + ig_suffix, layer.ig_type, layer.ig_size, layer, "ig")
                _dep(ig_comm, ig)
                layer.ig_comm = ig_comm
            wg = b.comp(layer.name, "BWD_WG", layer.wg_time)
            _dep(wg, ig)
            layer.wg_comp = wg
            wg_comm = b.comm(layer.name, layer.wg_type, layer.wg_size, layer, "wg")
            _dep(wg_comm, wg)
            layer.wg_comm = wg_comm
    for layer in layers:
        layer.wg_comm = None


def _dlrm(b: _Builder, layers: list[_Layer], passes: int, last_bottom: int) -> None:
    for _ in range(passes):
        fwd = None
        for idx, layer in enumerate(layers):
            fwd = b.comp(layer.name, "FWD", layer.fwd_time)
            if layer.wg_comm is not None:
                _dep(fwd, layer.wg_comm)
            elif layer.wg_comp is not None:
                _dep(fwd, layer.wg_comp)
            if idx:
                _dep(fwd, layers[idx - 1].fwd_comp)
            if idx == last_bottom:
                _dep(fwd, layers[0].fwd_comm)
            layer.fwd_comp = fwd
            if layer.fwd_type == "ALLTOALL":
                comm = b.comm(layer.name, layer.fwd_type, layer.fwd_size, layer, "fwd")
                _dep(comm, fwd)
                layer.fwd_comm = comm
        for idx, layer in enumerate(reversed(layers)):
            wg = b.comp(layer.name, "BWD_WG", layer.wg_time)
            if idx == 0:
                _dep(wg, fwd)
            else:
                if layers[len(layers) - idx].ig_comp is not None:
                    _dep(wg, layers[len(layers) - idx].ig_comp)
                if layers[len(layers) - idx - 1].ig_comm is not None:
                    _dep(wg, layers[len(layers) - idx - 1].ig_comm)
            layer.wg_comp = wg
            if layer.wg_type != "NONE":
                comm = b.comm(layer.name, layer.wg_type, layer.wg_size, layer, "wg")
                _dep(comm, wg)
                layer.wg_comm = comm
            ig = None
            if idx != len(layers) - 1:
                ig = b.comp(layer.name, "BWD_IG", layer.ig_time)
                _dep(ig, wg)
                layer.ig_comp = ig
            if len(layers) - idx - 1 == last_bottom + 1:
                first = layers[0]
                comm = b.comm(first.name, first.ig_type, first.ig_size, first, "ig")
                _dep(comm, ig)
                first.ig_comm = comm
        for layer in layers:
            layer.wg_comm = layer.wg_comp = layer.ig_comm = layer.ig_comp = None


def build(text: str, passes: int, file: str) -> tuple[str, _Builder]:
    """The keyword of the 1.0 workload ``text`` and rank 0's nodes as chakra builds them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2:
        raise InputError("a workload needs its parallelism line and its layer count",
                         "document", None, file)
    first = lines[0].strip().split()
    if not first:
        raise InputError("no parallelism on the first line", "line 1", lines[0], file)
    kind = first[0]
    num_layers = _int(lines[1].strip(), "layer count", 2, file)
    layers = [_layer(line, i + 3, file) for i, line in enumerate(lines[2:])]
    for i, layer in enumerate(layers):
        layer.index = i
    b = _Builder()
    if kind == "MICRO":
        _micro(b, layers, passes)
    elif kind == "DATA":
        _data(b, layers, passes)
    elif kind == "MODEL":
        _model(b, layers, passes, num_layers)
    elif kind == "HYBRID_DATA_MODEL":
        _hybrid(b, layers, passes, num_layers, "_IG_COMM_")
    elif kind == "HYBRID_MODEL_DATA":
        _hybrid(b, layers, passes, num_layers, "")
    elif kind in ("HYBRID_DLRM", "HYBRID_DLRM_ENHANCED"):
        if len(first) < 2:
            raise InputError("HYBRID_DLRM needs its last bottom layer after the keyword",
                             "line 1", lines[0], file)
        _dlrm(b, layers, passes, _int(first[1], "last bottom layer", 1, file))
    else:
        raise InputError("chakra's converter does not take this parallelism", "line 1", kind,
                         file)
    return kind, b


def check_args(schema: str, npus: int, passes: int) -> None:
    if schema not in CHAKRA_SCHEMAS:
        raise InputError(f"unknown chakra version (one of {', '.join(CHAKRA_SCHEMAS)})",
                         "--schema", schema)
    if npus < 1 or passes < 1:
        raise InputError("must be at least 1", "--npus" if npus < 1 else "--passes",
                         npus if npus < 1 else passes)


def _ranks(meta: GlobalMetadata, rank0: list[Node], npus: int,
           per_rank: int) -> dict[int, Trace]:
    """Every rank's copy of rank 0's nodes, ids offset by rank x ``per_rank`` (chakra's
    numbering)."""
    out = {}
    for rank in range(npus):
        shift = rank * per_rank
        nodes = [Node(id=n.id + shift, name=n.name, type=n.type,
                      data_deps=[d + shift for d in n.data_deps],
                      duration_micros=n.duration_micros, attrs=list(n.attrs))
                 for n in rank0]
        out[rank] = Trace(meta, nodes)
    return out


def metadata(text: str, schema: str) -> GlobalMetadata:
    return GlobalMetadata(attrs=[Attribute("schema", "string", CHAKRA_SCHEMAS[schema]),
                                 Attribute("input_file", "string", text)])


def convert_workload(text: str, npus: int, passes: int = 1, schema: str = "1.0.0",
                     file: str = "") -> dict[int, Trace]:
    """The ETs chakra's text converter makes of the 1.0 workload ``text``: rank -> trace.

    ``schema`` picks the chakra version whose ``schema`` string is written (``0.0.4``, what
    ASTRA-sim 2.x's reference runs used, or ``1.0.0``). Raises :class:`InputError` where
    chakra's converter stops (an unknown parallelism, a bad number, a short line).
    """
    check_args(schema, npus, passes)
    _, b = build(text, passes, file)
    return _ranks(metadata(text, schema), b.nodes, npus, len(b.nodes))
