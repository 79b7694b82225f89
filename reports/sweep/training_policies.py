"""The policies of a training study: ``name`` or ``name/discipline``, checked before any run.

``themis train-report --policies`` and a sweep spec's ``[[training]]`` tables
name the methods a training study runs. Each entry is a registered policy
(ASTRA-sim's spellings too), a training-only one (``themis-running``), or a
fixed route (``2,0,1``), optionally followed by ``/`` and a discipline
(``themis/scf``, ``2,0,1/fifo``); an entry without one takes the discipline(s)
it is given. A policy that chooses the discipline itself (:data:`OWN_DISCIPLINE`:
``auto`` keeps its best candidate's) is one method, ``auto/best``, whatever the
disciplines (``auto/scf`` also names it, labelled so). Names are checked by the
training simulator itself (:func:`check_policies` runs each on a one-collective
probe iteration of the network), so whatever ``themis train --policy`` accepts is
accepted here, and a bad name, a route that is not a permutation of the network's dimensions or a
discipline the timing model refuses is one line naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from topologies.errors import InputError


@dataclass(frozen=True)
class TrainingPolicy:
    """One method of a training study: ``label`` is ``policy/intra`` (canonical names
    where the registries give one), ``given`` the entry as the user wrote it."""

    label: str
    policy: str
    intra: str
    given: str = ""

    @classmethod
    def of(cls, policy: str, intra: str, given: str = "") -> TrainingPolicy:
        """The method ``policy`` under ``intra``."""
        return cls(f"{policy}/{intra}", policy, intra, given or f"{policy}/{intra}")


def split_policy_list(text: str, flag: str) -> list[str]:
    """A comma-separated CLI list of entries; consecutive numbers form one route, which
    may end in ``/discipline`` (``themis/scf,2,0,1/fifo`` is two entries)."""
    from reports.methods import is_route

    if not text.strip():
        raise InputError("names nothing (give comma-separated policies)", flag, text)
    out: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise InputError("empty entry in the policy list", flag, text)
        head = part.split("/", 1)[0].strip()
        if is_route(head) and out and "/" not in out[-1] and is_route(out[-1]):
            out[-1] = f"{out[-1]},{part}"
        else:
            out.append(part)
    return out


#: Policies that choose the discipline themselves (``themis.planning.training_auto``: the
#: best candidate's), and the discipline their run is given (it does not use it). Such
#: a policy is one method ``name/best``.
OWN_DISCIPLINE: dict[str, str] = {"auto": "scf"}
#: The discipline word of :data:`OWN_DISCIPLINE`'s methods.
BEST = "best"


def _policy_name(text: str, field: str, file: str) -> str:
    """The canonical name of a registered policy or route; other names as written
    (training-only policies: :func:`check_policies` decides)."""
    from reports.methods import canonical_policy, is_route

    if is_route(text):
        return canonical_policy(text, field, file)
    try:
        return canonical_policy(text, field, file)
    except InputError:
        return text.strip()


def parse_policies(values: Sequence[object], intras: Sequence[str], field: str,
                   file: str = "", indexed: bool = True) -> list[TrainingPolicy]:
    """The methods of ``values`` (entries ``name`` or ``name/discipline``), an entry
    without a discipline once per discipline of ``intras`` (canonical names);
    duplicates dropped. Errors name ``field[i]`` (``field`` alone when not ``indexed``)."""
    from reports.methods import canonical_intra

    out: list[TrainingPolicy] = []
    for i, value in enumerate(values):
        key = f"{field}[{i}]" if indexed else field
        if not isinstance(value, str) or not value.strip():
            raise InputError("must be a policy name, optionally /discipline", key, value,
                             file)
        name, sep, intra = value.strip().partition("/")
        if not name.strip() or (sep and not intra.strip()):
            raise InputError("expected a policy name, optionally /discipline (like "
                             "themis/scf)", key, value, file)
        policy = _policy_name(name.strip(), key, file)
        candidates: list[TrainingPolicy]
        if policy in OWN_DISCIPLINE and (not sep or intra.strip() == BEST):
            candidates = [TrainingPolicy(f"{policy}/{BEST}", policy, OWN_DISCIPLINE[policy],
                                         value.strip())]
        elif sep and intra.strip() == BEST:
            raise InputError("/best is for a policy that chooses its own discipline "
                             f"({', '.join(OWN_DISCIPLINE)}); name a discipline", key, value,
                             file)
        else:
            candidates = [TrainingPolicy.of(policy, q, value.strip())
                          for q in ([canonical_intra(intra.strip(), key, file)] if sep
                                    else intras)]
        for method in candidates:
            if method.label not in {m.label for m in out}:
                out.append(method)
    if not out:
        raise InputError("names no policy", field, list(values), file)
    return out


#: The probe iteration: one data-parallel layer whose weight gradient is one all-reduce.
PROBE = "DATA\n1\nprobe -1 1 NONE 0 1 NONE 0 1 ALLREDUCE {size} 1\n"
#: Its chunks (names, disciplines and routes do not depend on the count; few keep a
#: planning policy's probe short).
PROBE_CHUNKS = 2


def check_policies(network: Any, config: Any, policies: Sequence[TrainingPolicy],
                   fields: Sequence[str], file: str = "", group: int | None = None) -> None:
    """Run every policy once on a probe iteration of ``network`` (the logical network of
    a model-parallel group ``group``) with ``config``: a name the training simulator
    refuses is an :class:`InputError` naming ``fields[i]`` and the entry as given."""
    from themis.training import simulate_training
    from themis.training.dims import logical_network
    from topologies.workload import parse_workload

    lnet = logical_network(network, group)[0]
    probe = parse_workload(PROBE.format(size=PROBE_CHUNKS * 4096), "probe.txt")
    for method, field in zip(policies, fields, strict=True):
        try:
            simulate_training(probe, lnet, replace(config, policy=method.policy,
                                                  intra=method.intra, chunks=PROBE_CHUNKS,
                                                  passes=1),
                              bound=False)
        except InputError as err:
            if err.file and err.file != "probe.txt":
                raise
            split = f", split by a model-parallel group of {group}" if group else ""
            raise InputError(f"{err.reason} (network {network.shape()}{split})", field,
                             method.given, file) from None


__all__ = ["BEST", "OWN_DISCIPLINE", "PROBE", "PROBE_CHUNKS", "TrainingPolicy",
           "check_policies", "parse_policies", "split_policy_list"]
