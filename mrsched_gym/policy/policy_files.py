"""Outside policies in a sweep: policy files on the command line, policy objects in Python.

* A **code spec** names a policy in Python code: ``path/to/file.py:Class`` or
  ``package.module:Class``, with optional parameters ``:key=value,key=value`` passed to the class
  (``my_policy.py:MyPolicy:slack=60``). The attribute may also be a function or an instance (no
  parameters then). The label is the policy's ``name`` attribute, else its class name, plus the
  parameters (``MyPolicy:slack=60``). The file is read once, when the run starts, and every
  episode executes those bytes: editing the file during a run changes nothing in that run.
  Its resume fingerprint holds the bytes' hash, so an edited file runs again on ``--resume``.
* A **policy object** given to :func:`~mrsched_gym.evaluate.evaluate` is pickled once; every
  episode (in a worker process or in this one) runs on a fresh copy unpickled from those bytes,
  so its records do not depend on the number of workers or the episode order. An object that
  does not pickle (a lambda, a class defined inside a function) runs its episodes in this
  process, each on a ``copy.deepcopy`` of it (the object itself if it cannot be copied), and is
  never reused on resume.

The contract the objects implement is :mod:`mrsched_gym.policy.contract`.
"""

from __future__ import annotations

import copy
import hashlib
import importlib
import importlib.util
import inspect
import pickle
import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from mrsched_gym.errors import InputError, InputTypeError
from mrsched_gym.policy.contract import as_policy, policy_label
from mrsched_gym.policy.policy_failures import PolicyLoadError, describe, is_real_interrupt

#: Policy objects that do not pickle, by key (they run in this process only).
LOCAL_OBJECTS: dict[str, Any] = {}


# ---------------------------------------------------------------------- code specs
def is_code_spec(spec: str) -> bool:
    """Whether ``spec`` names a policy in code: its first part is a ``.py`` file or a dotted
    module path (``my_policy.py:MyPolicy``, ``pkg.module:Class``)."""
    loc = spec.partition(":")[0]
    return loc.endswith(".py") or ("." in loc and "=" not in loc and bool(
        re.fullmatch(r"[A-Za-z_][\w.]*", loc)))


def split_code_spec(spec: str, check_file: bool = True) -> tuple[str, str, str]:
    """``(location, attribute, parameter text)`` of a code spec.

    Raises:
        InputError: No attribute is named, or (with ``check_file``) the file does not exist.
    """
    loc, _, rest = spec.partition(":")
    attr, _, params = rest.partition(":")
    if not attr.strip():
        raise InputError(f"policy {spec!r}: name the class after the file or module, as "
                         f"{loc}:ClassName")
    if check_file and loc.endswith(".py") and not Path(loc).is_file():
        raise InputError(f"policy {spec!r}: policy file {loc!r} not found")
    return loc, attr.strip(), params


def source_file(loc: str) -> Path | None:
    """The source file of a code spec's location (the ``.py`` file, or the module's file)."""
    if loc.endswith(".py"):
        return Path(loc)
    try:
        found = importlib.util.find_spec(loc)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None)
    return Path(origin) if origin and Path(origin).is_file() else None


def source_digest(path: Path) -> str:
    """The first 16 hex digits of the SHA-256 of ``path``'s bytes."""
    return source_hash(path.read_bytes())


def source_hash(data: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()[:16]


def read_source(loc: str) -> bytes | None:
    """The bytes of a code spec's policy file (``None`` for a module path), read once when a
    run starts: every episode of the run executes these bytes (:func:`load_code_object`)."""
    return Path(loc).read_bytes() if loc.endswith(".py") else None


#: The compiled code of the policy files met in this process, by (path, digest).
FILE_CODE: dict[tuple[str, str], Any] = {}


def load_file_module(path: str, digest: str, source: bytes | None = None) -> ModuleType:
    """Execute the policy file ``path`` (version ``digest``; its bytes ``source``, default the
    file as it is now) as a new module, with its folder on ``sys.path`` meanwhile (so it can
    import the modules beside it). Executed afresh at each call (each episode builds its
    policy so): nothing the file's code keeps in its module or its classes (a class attribute
    counting calls) carries from one episode to the next, so records do not depend on the
    number of workers or the order of episodes. The compiled code is kept per version."""
    stem = re.sub(r"\W", "_", Path(path).stem)
    name = f"mrsched_policy_{stem}_{digest[:8]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    previous = sys.modules.get(name)
    sys.modules[name] = module                  # dataclasses and pickle look classes up here
    folder = str(Path(path).parent)
    sys.path.insert(0, folder)                  # its sibling modules import, as for a script
    try:
        code = FILE_CODE.get((path, digest))
        if code is None:
            code = compile(Path(path).read_bytes() if source is None else source, path, "exec")
            FILE_CODE[path, digest] = code
        exec(code, module.__dict__)             # noqa: S102 - the user's policy file
    except BaseException:
        if previous is None:
            del sys.modules[name]
        else:
            sys.modules[name] = previous
        raise
    finally:
        sys.path.remove(folder)
    return module


def load_code_object(spec: str, params: dict[str, Any], source: bytes | None = None,
                     resolved: str | None = None,
                     imported: Callable[[], None] | None = None) -> Any:
    """The policy a code spec names: its class instantiated with ``params``, or the function or
    instance it names (no parameters then; a deep copy of an instance, so no state carries
    over from another episode).

    Args:
        spec: The code spec.
        params: The class's parameters.
        source: The policy file's bytes as read when the run started (:func:`read_source`):
            the file is executed from them, so an edit during the run changes nothing. Default:
            the file as it is now.
        resolved: The policy file's absolute path, as resolved when the run started (a
            policy process loads it so, whatever its working directory).
        imported: Called once the file or module is imported, before the construction.

    Raises:
        InputError: The module is not found, has no such attribute, or the class refuses the
            parameters (each message names the spec).
        PolicyLoadError: The policy's own code raised at import or construction, anything,
            ``BaseException`` included (``sys.exit()``): one line naming the spec and the
            phase, the traceback kept (a real interrupt passes through).
    """
    loc, attr, _ = split_code_spec(spec, check_file=resolved is None)
    try:
        if loc.endswith(".py"):
            path = Path(resolved or loc)
            text = path.read_bytes() if source is None else source
            module = load_file_module(str(path.resolve()), source_hash(text), text)
        else:
            module = importlib.import_module(loc)
    except ModuleNotFoundError as e:
        if loc.endswith(".py") or not e.name or not (loc + ".").startswith(e.name + "."):
            raise load_failure(spec, "import", f"{loc} failed to load: {describe(e)}",
                               e) from None
        raise InputError(f"policy {spec!r}: module {loc!r} cannot be imported ({e})") from None
    except BaseException as e:                   # noqa: BLE001 - the user's code failed
        if is_real_interrupt(e):
            raise
        raise load_failure(spec, "import", f"{loc} failed to load: {describe(e)}",
                           e) from None
    if imported is not None:
        imported()
    if not hasattr(module, attr):
        public = sorted(n for n, v in vars(module).items()
                        if isinstance(v, type) and not n.startswith("_")
                        and getattr(v, "__module__", None) == module.__name__)
        raise InputError(f"policy {spec!r}: {loc} has no {attr!r} (its classes: "
                         f"{', '.join(public) or 'none'})")
    target = getattr(module, attr)
    if isinstance(target, type):
        try:
            inspect.signature(target).bind(**params)
        except TypeError as e:
            raise InputError(f"policy {spec!r}: bad parameter for {attr}: "
                             f"{attr}.__init__() {e}") from None
        except ValueError:
            pass                                 # a signature that cannot be read
        try:
            return target(**params)
        except ValueError as e:
            raise InputError(f"policy {spec!r}: {e}") from None
        except BaseException as e:               # noqa: BLE001 - the user's code failed
            if is_real_interrupt(e):
                raise
            raise load_failure(spec, "construction",
                               f"its construction ({attr}(...)) raised {describe(e)}",
                               e) from None
    if params:
        raise InputError(f"policy {spec!r}: {attr} is not a class, so it takes no parameters")
    try:                                         # an instance: a fresh copy per episode
        return copy.deepcopy(target)
    except Exception:                            # noqa: BLE001 - fall back to the object
        return target


def load_failure(spec: str, phase: str, what: str, exc: BaseException) -> PolicyLoadError:
    """The :class:`PolicyLoadError` of ``exc``, raised by policy ``spec``'s code in ``phase``
    (call it in the ``except`` block: the traceback is ``exc``'s)."""
    trace = "".join(traceback.format_exception(exc))
    return PolicyLoadError(f"policy {spec!r}: {what}", spec, phase, trace)


def code_params(spec: str, text: str,
                parse_value: Callable[[str], Any]) -> tuple[tuple[str, Any], ...]:
    """The parameters ``key=value,key=value`` of a code spec (``text``), values read by
    ``parse_value``.

    Raises:
        InputError: An item that is not ``key=value``, or a key given twice (naming ``spec``).
    """
    params: list[tuple[str, Any]] = []
    for item in filter(None, text.split(",")):
        k, eq, v = item.partition("=")
        if not eq or not k.strip():
            raise InputError(f"policy {spec!r}: parameter {item!r} is not key=value")
        if k.strip() in dict(params):
            raise InputError(f"policy {spec!r}: parameter {k.strip()!r} given more than once")
        params.append((k.strip(), parse_value(v.strip())))
    return tuple(params)


def checked_label(obj: Any, where: str) -> str:
    """The label of a policy object (:func:`~mrsched_gym.policy.contract.policy_label`), after
    checking that it is a policy and that its label is not taken by the built-in policies.

    Raises:
        InputError: ``obj`` is no policy, or its label names a baseline or an agent.
    """
    from mrsched_gym.baselines import BASELINES
    try:
        name = policy_label(obj)
        as_policy(obj, name)
    except InputTypeError as e:                  # "policy LABEL: what" -> named by where
        raise InputError(f"policy {where!r}: {str(e).partition(': ')[2]}") from None
    if name.partition(":")[0] in BASELINES or name.startswith(("agent:", "rllib:")):
        raise InputError(f"policy {where!r}: its name {name!r} is a built-in policy's; give it "
                         f"a name of its own (a name attribute), or use the built-in {name!r}")
    return name


def code_fingerprint(target: str, params: tuple[tuple[str, Any], ...],
                     source: bytes | None = None) -> str:
    """A code spec's resume fingerprint: the spec, its source file's hash (of ``source``, the
    bytes the run executes, if given) and its parameters."""
    if source is not None:
        digest = source_hash(source)
    else:
        path = source_file(target.partition(":")[0])
        digest = source_digest(path) if path is not None else "unknown"
    extra = "".join(f",{k}={v}" for k, v in params)
    return f"{target}:{digest}{extra}"


# ---------------------------------------------------------------------- policy objects
def object_parts(obj: Any) -> tuple[str, str, bytes | None]:
    """``(label, key, payload)`` of a policy object. The payload is its pickle, ``None`` when it
    does not pickle and unpickle (it is then kept in :data:`LOCAL_OBJECTS` under ``key``). The
    key is the object's resume fingerprint: its class, the hash of its pickle and of its class's
    source file; an object that does not pickle gets one unique to this process (never reused).

    Raises:
        InputError: ``obj`` is no policy, or its label is taken by a built-in policy.
    """
    if isinstance(obj, type) or inspect.isfunction(obj):
        where = str(obj.__name__)
    else:
        own = getattr(obj, "name", None)
        where = own if isinstance(own, str) and own and own.isprintable() and len(own) <= 100 \
            else type(obj).__name__
    label = checked_label(obj, where)
    payload: bytes | None
    try:
        payload = pickle.dumps(obj)
        pickle.loads(payload)
    except Exception:                            # noqa: BLE001 - any pickling failure
        payload = None
    # a function's own module and name; an instance's class's
    named = obj if inspect.isfunction(obj) else type(obj)
    module = getattr(named, "__module__", None) or "?"
    name = f"{module}.{getattr(named, '__qualname__', type(obj).__name__)}"
    if payload is None:
        key = f"local:{name}@{id(obj)}"
        LOCAL_OBJECTS[key] = obj
        return label, key, None
    path = getattr(sys.modules.get(module), "__file__", None)
    src = ":" + source_digest(Path(path)) if path and Path(path).is_file() else ""
    return label, f"object:{name}:{hashlib.sha256(payload).hexdigest()[:16]}{src}", payload


def object_copy(key: str, payload: bytes | None) -> Any:
    """A fresh copy of a policy object for one episode (see the module docstring).

    Raises:
        InputError: An object that does not pickle, asked for outside the process that holds
            it.
    """
    if payload is not None:
        return pickle.loads(payload)
    if key not in LOCAL_OBJECTS:
        raise InputError(f"policy object {key}: it does not pickle, so it runs only in the "
                         f"process it was given in")
    obj = LOCAL_OBJECTS[key]
    try:
        return copy.deepcopy(obj)
    except Exception:                            # noqa: BLE001 - fall back to the object
        return obj


__all__ = ["FILE_CODE", "LOCAL_OBJECTS", "checked_label", "code_fingerprint", "code_params",
           "is_code_spec", "load_code_object", "load_failure", "load_file_module", "object_copy",
           "object_parts", "source_digest", "source_file",
           "split_code_spec"]
