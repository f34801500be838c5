"""Agent files checked when they are loaded, before the first episode: :func:`read_npz`
(the numpy weights of a set-network agent, as
:func:`~mrsched_gym.agents.training.numpy_export.export_numpy` writes them), :func:`check_npz_fits`
(those weights against an env's observations) and :func:`check_sb3_zip` (an SB3 checkpoint's
archive, before it is unpickled).

Every failure is one :class:`~mrsched_gym.errors.InputError` line naming the file and, where
there is one, the key: a file that is no archive, a member that holds Python objects (an
``.npz`` is never unpickled: ``allow_pickle=False``), a missing or unexpected key, a shape that
does not fit the recorded architecture (``hidden``), a dtype other than float32, a weight that
is NaN or infinite, metadata that is not what the export writes, input sizes that are not
the env's, or an archive that would unpack to more than :data:`MAX_UNPACKED_BYTES`.
"""

from __future__ import annotations

import json
import struct
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from mrsched_gym.agents.rule_prior import check_prior, check_prior_weight
from mrsched_gym.errors import InputError

#: The array of the .npz that holds the metadata (JSON text; re-exported by
#: :mod:`mrsched_gym.agents.numpy_policy`).
META_KEY = "__meta__"

#: The layers of the set network's actor, each a ``.weight`` and a ``.bias``.
LAYERS = ("node_enc.0", "node_enc.2", "global_enc.0", "cand_enc.0", "cand_enc.2",
          "cand_mix.0", "action_net.score", "action_net.skip")
#: The metadata fields: name -> (type, required).
META_FIELDS: dict[str, tuple[type | tuple[type, ...], bool]] = {
    "hidden": (int, True), "work_conserving": (bool, True), "masked": (bool, True),
    "forecast": (int, True), "node_mask": (bool, False), "objective": (int, False),
    "rules": (dict, False), "prior": (str, False), "prior_weight": (float, False)}


#: What an agent archive (``.npz`` or SB3 ``.zip``) may unpack to in all, by its members'
#: recorded sizes, checked before any member is read by a loader: the shipped agents unpack to
#: under 1 MiB and an SB3 checkpoint of a large network to tens of MiB, while a "zip bomb" of
#: a few MiB unpacks to gigabytes.
MAX_UNPACKED_BYTES = 512 * 2**20
#: The same for an SB3 checkpoint's ``data`` member (JSON text of a few KiB to MiB, which SB3
#: reads whole into memory).
MAX_SB3_DATA_BYTES = 64 * 2**20
#: Members of an agent archive (SB3 writes 6, an ``.npz`` one per array).
MAX_MEMBERS = 10_000
#: A zip member's local header: its signature and fixed length (the name and extra field
#: follow, then the member's data).
_LOCAL_HEADER = b"PK\x03\x04"
_LOCAL_HEADER_BYTES = 30
#: Compressed bytes read at a time when a deflated member is checked.
_CHUNK = 1 << 16


def check_unpacked_size(z: zipfile.ZipFile, where: str) -> None:
    """Raise :class:`InputError` if the members of ``z`` unpack to more than
    :data:`MAX_UNPACKED_BYTES` (or an SB3 ``data`` member to more than
    :data:`MAX_SB3_DATA_BYTES`), by their recorded sizes, or are more than
    :data:`MAX_MEMBERS`."""
    infos = z.infolist()
    if len(infos) > MAX_MEMBERS:
        raise InputError(f"{where}: {len(infos):,} members, more than the {MAX_MEMBERS:,} an "
                         f"agent file may hold (a damaged or hostile archive)")
    total = 0
    for info in infos:
        total += info.file_size
        if info.filename == "data" and info.file_size > MAX_SB3_DATA_BYTES:
            raise InputError(f"{where}: member 'data' unpacks to {info.file_size:,} bytes, "
                             f"more than the {MAX_SB3_DATA_BYTES:,} an SB3 checkpoint's data "
                             f"may hold (a damaged or hostile archive)")
    if total > MAX_UNPACKED_BYTES:
        raise InputError(f"{where}: unpacks to {total:,} bytes, more than the "
                         f"{MAX_UNPACKED_BYTES:,} an agent file may hold (a damaged or "
                         f"hostile archive)")


def check_members(path: Path, z: zipfile.ZipFile, where: str) -> None:
    """Raise :class:`InputError` unless every member of the archive ``z`` (read from ``path``)
    holds exactly the bytes its header records: a stored member as many bytes as it records,
    a deflated one inflating to its recorded size (inflated here in pieces, never more than
    that size and one byte). A loader that reads a member whole (SB3's ``data``, numpy's
    members) inflates a piece as large as it is before cutting it to the recorded size, so
    a member recording 100 bytes while holding gigabytes would cost gigabytes there; within
    the recorded sizes (:func:`check_unpacked_size`) it cannot. Encrypted members and other
    compression methods are refused (numpy and SB3 write stored or deflated members)."""
    with open(path, "rb") as f:
        for info in z.infolist():
            name = info.filename
            if info.flag_bits & 0x1:
                raise InputError(f"{where}: member {name!r} is encrypted")
            if info.compress_type == zipfile.ZIP_STORED:
                if info.compress_size != info.file_size:
                    raise InputError(f"{where}: member {name!r} is stored as "
                                     f"{info.compress_size:,} bytes but records "
                                     f"{info.file_size:,} (a damaged or hostile archive)")
                continue
            if info.compress_type != zipfile.ZIP_DEFLATED:
                raise InputError(f"{where}: member {name!r} uses compression method "
                                 f"{info.compress_type}; agent files hold stored or deflated "
                                 f"members")
            if _inflated_size(f, info, where) != info.file_size:
                raise InputError(f"{where}: member {name!r} does not inflate to the "
                                 f"{info.file_size:,} bytes it records (a damaged or hostile "
                                 f"archive)")


def _inflated_size(f: Any, info: zipfile.ZipInfo, where: str) -> int:
    """The bytes the deflated member ``info`` of the open file ``f`` inflates to, counted up
    to its recorded size and one byte (never more held at once than one piece's output)."""
    f.seek(info.header_offset)
    header = f.read(_LOCAL_HEADER_BYTES)
    if len(header) != _LOCAL_HEADER_BYTES or header[:4] != _LOCAL_HEADER:
        raise InputError(f"{where}: member {info.filename!r} has no local header where the "
                         f"archive's directory puts it (a damaged archive)")
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    f.seek(info.header_offset + _LOCAL_HEADER_BYTES + name_len + extra_len)
    inflate = zlib.decompressobj(-15)
    limit = info.file_size + 1
    left, out = info.compress_size, 0
    try:
        while left > 0 and out < limit:
            chunk = f.read(min(_CHUNK, left))
            if not chunk:
                break
            left -= len(chunk)
            out += len(inflate.decompress(chunk, limit - out))
            while inflate.unconsumed_tail and out < limit:
                out += len(inflate.decompress(inflate.unconsumed_tail, limit - out))
    except zlib.error as e:
        raise InputError(f"{where}: member {info.filename!r} is not valid deflate data ({e})"
                         ) from None
    return out


def check_torch_members(z: zipfile.ZipFile, where: str) -> None:
    """Raise :class:`InputError` unless every ``.pth`` member of the SB3 archive ``z`` (each a
    torch file, itself a zip) is stored and holds stored records within the size caps: torch
    allocates each record's recorded size when it loads one."""
    for info in z.infolist():
        if not info.filename.endswith(".pth"):
            continue
        if info.compress_type != zipfile.ZIP_STORED:
            raise InputError(f"{where}: member {info.filename!r} is compressed; SB3 and torch "
                             f"write their files stored")
        try:
            with zipfile.ZipFile(z.open(info)) as inner:
                check_unpacked_size(inner, f"{where}, member {info.filename!r}")
                for record in inner.infolist():
                    if (record.compress_type != zipfile.ZIP_STORED
                            or record.compress_size != record.file_size):
                        raise InputError(f"{where}: member {info.filename!r}: record "
                                         f"{record.filename!r} is not stored as torch writes "
                                         f"it (a damaged or hostile file)")
        except zipfile.BadZipFile as e:
            raise InputError(f"{where}: member {info.filename!r} is not a torch file ({e})"
                             ) from None


def open_archive(path: Path, where: str) -> zipfile.ZipFile:
    """``path`` opened as a zip archive after its file size is checked against
    :data:`MAX_UNPACKED_BYTES` (the archive's directory is read whole when it is opened)."""
    size = path.stat().st_size
    if size > MAX_UNPACKED_BYTES + (1 << 20):
        raise InputError(f"{where}: {size:,} bytes, more than an agent file may hold "
                         f"({MAX_UNPACKED_BYTES:,} unpacked)")
    return zipfile.ZipFile(path)


def read_npz(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The weights and metadata of an agent's ``.npz``, every check passed (module docstring).

    Raises:
        InputError: One line naming the file and the key at fault.
    """
    path = Path(path)
    where = f"agent file {path}"
    if not path.is_file():
        from mrsched_gym.errors import not_a_file
        raise InputError(f"{where}: {not_a_file(path, 'agent file')}")
    if not zipfile.is_zipfile(path):
        raise InputError(f"{where}: not an .npz archive of numpy weights (not a zip file at "
                         f"all); export an agent with agents/training/numpy_export.py")
    try:
        with open_archive(path, where) as archive:
            check_unpacked_size(archive, where)
            check_members(path, archive, where)
    except (OSError, EOFError, zipfile.BadZipFile, ValueError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"{where}: not a readable .npz archive ({type(e).__name__}: {e})"
                         ) from None
    arrays: dict[str, np.ndarray] = {}
    try:
        with np.load(path, allow_pickle=False) as z:
            for key in z.files:
                try:
                    arrays[key] = z[key]
                except ValueError as e:
                    what = ("holds Python objects (pickled), not numbers"
                            if "pickle" in str(e) else f"is not a numpy array ({e})")
                    raise InputError(f"{where}: key {key!r} {what}; an agent's .npz holds "
                                     f"number arrays only") from None
                except InputError:
                    raise
                except Exception as e:              # noqa: BLE001 - zlib, CRC, header...
                    raise InputError(f"{where}: key {key!r} cannot be read (a corrupt "
                                     f"archive: {type(e).__name__}: {e})") from None
    except InputError:
        raise
    except Exception as e:                          # noqa: BLE001 - any unreadable archive
        why = ("it does not start as a zip archive" if "pickle" in str(e)   # numpy's guess
               else f"{type(e).__name__}: {e}")
        raise InputError(f"{where}: not a readable .npz archive ({why})") from None
    meta = read_meta(arrays.pop(META_KEY, None), where)
    check_weights(arrays, int(meta["hidden"]), where)
    return arrays, meta


def read_meta(raw: np.ndarray | None, where: str) -> dict[str, Any]:
    """The metadata entry as a dict, checked against :data:`META_FIELDS`."""
    if raw is None:
        raise InputError(f"{where}: key {META_KEY!r} (the metadata) is missing")
    if raw.shape != () or raw.dtype.kind != "U":
        raise InputError(f"{where}: key {META_KEY!r} must be one JSON text, got a "
                         f"{raw.dtype} array of shape {raw.shape}")
    try:
        meta = json.loads(str(raw))
    except ValueError as e:
        raise InputError(f"{where}: key {META_KEY!r} is not JSON ({e})") from None
    if not isinstance(meta, dict):
        raise InputError(f"{where}: key {META_KEY!r} must be a JSON object")
    for name, (kind, required) in META_FIELDS.items():
        if name not in meta:
            if required:
                raise InputError(f"{where}: key {META_KEY!r}: field {name!r} is missing")
            continue
        value = meta[name]
        ok = isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
        if not ok:
            raise InputError(f"{where}: key {META_KEY!r}: field {name!r} must be a "
                             f"{getattr(kind, '__name__', kind)}, got {value!r}")
        if kind is int and value < (1 if name == "hidden" else 0):
            raise InputError(f"{where}: key {META_KEY!r}: field {name!r} must be "
                             f"{'>= 1' if name == 'hidden' else '>= 0'}, got {value}")
    for name, check in (("prior", check_prior), ("prior_weight", check_prior_weight)):
        try:
            if name in meta:
                check(meta[name])
        except ValueError as e:
            raise InputError(f"{where}: key {META_KEY!r}: field {name!r}: {e}") from None
    if ("prior" in meta) != ("prior_weight" in meta):
        raise InputError(f"{where}: key {META_KEY!r}: 'prior' and 'prior_weight' go together")
    return meta


def check_weights(arrays: dict[str, np.ndarray], h: int, where: str) -> None:
    """Every layer's keys present (and no other), float32, finite, shaped for ``hidden`` =
    ``h``; the input widths of the first layers are checked against an env later
    (:func:`check_npz_fits`)."""
    expected = {f"{layer}.{part}" for layer in LAYERS for part in ("weight", "bias")}
    for key in sorted(expected - set(arrays)):
        raise InputError(f"{where}: key {key!r} is missing (a set-network actor has "
                         f"{', '.join(LAYERS)}, each a .weight and a .bias)")
    for key in sorted(set(arrays) - expected):
        raise InputError(f"{where}: key {key!r} is not a weight of a set-network actor")
    rows = {"action_net.score": 1, "action_net.skip": 1}
    widths = {"node_enc.2": h, "cand_enc.2": h, "cand_mix.0": 2 * h, "action_net.score": h,
              "action_net.skip": 2 * h}
    for layer in LAYERS:
        n = rows.get(layer, h)
        weight, bias = arrays[f"{layer}.weight"], arrays[f"{layer}.bias"]
        for key, arr, shape in ((f"{layer}.weight", weight, (n, widths.get(layer))),
                                (f"{layer}.bias", bias, (n,))):
            if arr.dtype != np.float32:
                raise InputError(f"{where}: key {key!r} has dtype {arr.dtype}; the weights "
                                 f"are float32")
            fits = arr.ndim == len(shape) and all(
                want is None or got == want for got, want in zip(arr.shape, shape, strict=True))
            if not fits or arr.shape[-1] == 0:
                want = "x".join("?" if s is None else str(s) for s in shape)
                raise InputError(f"{where}: key {key!r} has shape {arr.shape}; hidden {h} "
                                 f"(the metadata) makes it {want}")
            if not np.isfinite(arr).all():
                bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
                raise InputError(f"{where}: key {key!r} holds {bad} NaN or infinite "
                                 f"weight(s); every weight must be finite")
    h_in = arrays["cand_enc.0.weight"].shape[1]
    if h_in <= h:
        raise InputError(f"{where}: key 'cand_enc.0.weight' has {h_in} inputs; it takes the "
                         f"candidate's features plus the hidden {h}")


def check_npz_fits(path: str | Path, space: Any, where: str) -> None:
    """Raise :class:`InputError` unless the weights of ``path`` take the observations of
    ``space`` (an env's observation space; ``where`` names the env): the node and candidate
    feature widths, and a decision vector at least as long as the agent's.

    Raises:
        InputError: The file fails :func:`read_npz`, or an input width differs.
    """
    arrays, meta = read_npz(path)
    h = int(meta["hidden"])
    g = arrays["node_enc.0.weight"].shape[1]
    f = arrays["cand_enc.0.weight"].shape[1] - h
    d = arrays["global_enc.0.weight"].shape[1] - int(meta["forecast"]) - g - h \
        - int(meta.get("objective", 0))
    spaces = getattr(space, "spaces", {})
    theirs = {name: spaces[name].shape[-1] for name in ("nodes", "candidates", "decision")
              if name in spaces}
    ours = {"nodes": g, "candidates": f, "decision": d}
    for name, width in theirs.items():
        # a longer decision vector is a world with more decision kinds: the agent skips those
        # (agents/observations.py, fit_decision)
        if ours[name] != width and not (name == "decision" and ours[name] < width):
            key = {"nodes": "node_enc.0.weight", "candidates": "cand_enc.0.weight",
                   "decision": "global_enc.0.weight"}[name]
            raise InputError(f"agent file {path}: key {key!r} takes {name} of {ours[name]} "
                             f"features; {where} gives {width} (an agent trained on another "
                             f"observation layout)")


def check_sb3_zip(path: str | Path) -> None:
    """Raise :class:`InputError` unless ``path`` is a readable zip holding an SB3 model's
    ``data`` and ``policy.pth`` within the size caps, every member holding what it records and
    every torch file in it stored (checked before anything in it is unpickled:
    :func:`check_unpacked_size`, :func:`check_members`, :func:`check_torch_members`).

    Raises:
        InputError: One line naming the file: not a zip, a corrupt zip, a zip of something
            else, or one past a cap.
    """
    path = Path(path)
    where = f"agent file {path}"
    if not zipfile.is_zipfile(path):
        raise InputError(f"{where}: not a zip archive, so not an SB3 agent checkpoint")
    try:
        with open_archive(path, where) as z:
            names = z.namelist()
            check_unpacked_size(z, where)
            check_members(path, z, where)
            bad = z.testzip()
            if bad is None and "data" in names and "policy.pth" in names:
                check_torch_members(z, where)
    except (OSError, EOFError, zipfile.BadZipFile, ValueError) as e:
        if isinstance(e, InputError):
            raise
        raise InputError(f"{where}: a corrupt zip archive ({e})") from None
    if bad is not None:
        raise InputError(f"{where}: a corrupt zip archive (member {bad!r} fails its CRC)")
    missing = [n for n in ("data", "policy.pth") if n not in names]
    if missing:
        shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
        raise InputError(f"{where}: not an SB3 agent checkpoint: no {' or '.join(missing)} "
                         f"inside (it holds {shown or 'nothing'})")


def load_error(e: BaseException) -> str:
    """One short line for why a checkpoint did not load: the exception's type and the first
    line of its message, at most 160 characters (torch's and SB3's messages run to kilobytes,
    and torch's advises loading with ``weights_only=False``, which would run the file's
    pickled code)."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:     # "Error(s) in loading ...:" and the first
        text = f"{text} {lines[1]}"
    if len(text) > 160:
        text = text[:157] + "..."
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def check_finite_state(state: Iterable[tuple[str, Any]], where: str) -> None:
    """Raise :class:`InputError` naming the first floating-point entry of ``state`` (name,
    array or CPU tensor pairs: a network's ``state_dict().items()``) that holds a NaN or an
    infinite value. A damaged or tampered checkpoint is refused: NaN logits act as the first
    legal action, so such a network would be ranked as a fixed rule."""
    for name, value in state:
        if hasattr(value, "is_floating_point"):      # a torch tensor (bfloat16 has no numpy
            if not value.is_floating_point():        # type): checked as float32
                continue
            value = value.float()
        arr = np.asarray(value)
        if arr.dtype.kind == "f" and not np.isfinite(arr).all():
            bad = int(arr.size - np.count_nonzero(np.isfinite(arr)))
            raise InputError(f"{where}: parameter {name!r} holds {bad} NaN or infinite "
                             f"value(s); every weight must be finite")


__all__ = ["LAYERS", "MAX_SB3_DATA_BYTES", "MAX_UNPACKED_BYTES", "META_FIELDS", "META_KEY",
           "MAX_MEMBERS", "check_finite_state", "check_members", "check_npz_fits", "check_sb3_zip",
           "check_torch_members", "check_unpacked_size", "check_weights", "load_error",
           "open_archive", "read_meta", "read_npz"]
