"""Agent files are checked when they are loaded, before the first episode (issue 46, item 4):
corrupted ``.npz`` weights of many shapes (hypothesis) and archives that are no agent each give
one error line naming the file and the key, and never mention ``allow_pickle``."""

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mrsched_gym  # noqa: F401, E402  (registers the ids)
from mrsched_gym.agents.agent_files import check_npz_fits, check_sb3_zip, read_npz
from mrsched_gym.agents.numpy_policy import META_KEY, NumpySetPolicy
from mrsched_gym.errors import InputError

SHIPPED = Path(__file__).resolve().parents[1] / "agents" / "pretrained"
NPZ = SHIPPED / "hadoop-v0.npz"


def shipped_arrays():
    with np.load(NPZ, allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def write(path, arrays, **kw):
    np.savez(path, **arrays, **kw)
    return path


def assert_one_line(err, path, key=None):
    text = str(err)
    assert "\n" not in text and str(path) in text, text
    assert "allow_pickle" not in text and "pickle.load" not in text, text
    if key is not None:
        assert repr(key) in text, text


@pytest.mark.parametrize("npz", sorted(SHIPPED.glob("*.npz")))
def test_the_shipped_weights_pass(npz):
    weights, meta = read_npz(npz)
    assert meta["hidden"] == weights["node_enc.2.weight"].shape[0]


KEYS = sorted(k for k in shipped_arrays() if k != META_KEY)
FIRST_LAYERS = ("node_enc.0.weight", "global_enc.0.weight", "cand_enc.0.weight")
HADOOP_SPACE = gym.make("mrsched/Hadoop-v0").observation_space
MUTATIONS = ["drop", "nan", "inf", "dtype", "shape", "transpose", "empty", "extra"]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=st.sampled_from(KEYS), how=st.sampled_from(MUTATIONS), where=st.integers(0, 10**6),
       dtype=st.sampled_from(["float64", "float16", "int32", "bool"]))
def test_a_corrupted_weight_is_named_with_its_key(tmp_path_factory, key, how, where, dtype):
    arrays = shipped_arrays()
    a = arrays[key].copy()
    named = key
    if how == "drop":
        del arrays[key]
    elif how in ("nan", "inf"):
        a.flat[where % a.size] = np.nan if how == "nan" else -np.inf
        arrays[key] = a
    elif how == "dtype":
        arrays[key] = a.astype(dtype)
    elif how == "shape":
        arrays[key] = np.concatenate([a, a[..., :1]], axis=-1)
    elif how == "transpose":
        if a.ndim < 2 or a.shape[0] == a.shape[1]:
            arrays[key] = a[None]
        else:
            arrays[key] = a.T.copy()
    elif how == "empty":
        arrays[key] = a[..., :0]
    else:
        named = f"{key}.extra"
        arrays[named] = a
    path = write(tmp_path_factory.mktemp("npz") / "agent.npz", arrays)
    with pytest.raises(InputError) as e:
        if how == "shape" and key in FIRST_LAYERS:    # their widths are the env's: checked
            check_npz_fits(path, HADOOP_SPACE, "Hadoop-v0")   # against it
        else:
            read_npz(path)
    # a first layer's width is free here (the env checks it); a wrong width of one of them may
    # be reported through the layer that depends on it
    assert_one_line(e.value, path)
    assert repr(named) in str(e.value) or "cand_enc.0.weight" in str(e.value), str(e.value)


META_CASES = [
    ("not json", "not JSON"), (json.dumps([1, 2]), "JSON object"),
    (json.dumps({"hidden": 64, "masked": True, "forecast": 8}), "'work_conserving'"),
    (json.dumps({"hidden": "64", "work_conserving": True, "masked": True, "forecast": 8}),
     "'hidden'"),
    (json.dumps({"hidden": 0, "work_conserving": True, "masked": True, "forecast": 8}),
     "'hidden'"),
    (json.dumps({"hidden": 32, "work_conserving": True, "masked": True, "forecast": 8}),
     "hidden 32"),
    (json.dumps({"hidden": 64, "work_conserving": 1, "masked": True, "forecast": 8}),
     "'work_conserving'"),
    (json.dumps({"hidden": 64, "work_conserving": True, "masked": True, "forecast": -1}),
     "'forecast'"),
]


@pytest.mark.parametrize("meta, says", META_CASES)
def test_bad_metadata_is_named(tmp_path, meta, says):
    arrays = shipped_arrays()
    arrays[META_KEY] = np.array(meta)
    path = write(tmp_path / "agent.npz", arrays)
    with pytest.raises(InputError, match=says) as e:
        read_npz(path)
    assert_one_line(e.value, path)


def test_missing_metadata_and_pickled_members_are_named(tmp_path):
    arrays = shipped_arrays()
    del arrays[META_KEY]
    path = write(tmp_path / "nometa.npz", arrays)
    with pytest.raises(InputError) as e:
        read_npz(path)
    assert_one_line(e.value, path, META_KEY)
    arrays = shipped_arrays()
    arrays["node_enc.0.bias"] = np.array([{"x": 1}], dtype=object)
    path = tmp_path / "pickled.npz"
    np.savez(path, **arrays)                       # an object array is stored as a pickle
    with pytest.raises(InputError, match="holds Python objects") as e:
        read_npz(path)
    assert_one_line(e.value, path, "node_enc.0.bias")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(cut=st.integers(0, 10**6), garbage=st.binary(max_size=200),
       flips=st.lists(st.integers(0, 10**6), min_size=1, max_size=4, unique=True))
def test_files_that_are_no_npz_say_so(tmp_path_factory, cut, garbage, flips):
    data = NPZ.read_bytes()
    folder = tmp_path_factory.mktemp("bad")
    mangled = bytearray(data)
    for i in flips:
        mangled[i % len(data)] ^= 0xFF
    for name, content in (("text.npz", b"hello, not weights\n"), ("garbage.npz", garbage),
                          ("cut.npz", data[:cut % len(data)]),
                          ("mangled.npz", bytes(mangled))):
        path = folder / name
        path.write_bytes(content)
        try:
            weights, _ = read_npz(path)
        except InputError as e:
            assert_one_line(e, path)
        else:                       # a flipped byte no reader uses (a header's version field)
            assert name == "mangled.npz", name
            original = shipped_arrays()
            assert all(np.array_equal(weights[k], original[k]) for k in weights)


def test_the_numpy_policy_loads_through_the_checks(tmp_path):
    arrays = shipped_arrays()
    arrays["action_net.skip.weight"][0, 0] = np.nan
    path = write(tmp_path / "nan.npz", arrays)
    with pytest.raises(InputError, match="'action_net.skip.weight' holds 1 NaN"):
        NumpySetPolicy.load(path)


def test_sb3_archives_that_are_no_agent_are_one_line(tmp_path):
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("notes.txt", "mine")
    text = tmp_path / "text.zip"
    text.write_text("hello")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("data", "{}" * 500)
        z.writestr("policy.pth", b"x" * 500)
    raw = bytearray(buf.getvalue())
    raw[60] ^= 0xFF                                  # inside the first member: a CRC error
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(bytes(raw))
    for path, says in ((other, "no data or policy.pth"), (text, "not a zip"),
                       (corrupt, "corrupt")):
        with pytest.raises(InputError, match=says) as e:
            check_sb3_zip(path)
        assert_one_line(e.value, path)


@pytest.mark.parametrize("make", ["nan", "text", "shape"])
def test_compare_refuses_a_bad_agent_file_before_any_episode(tmp_path, make):
    arrays = shipped_arrays()
    path = tmp_path / "bad.npz"
    if make == "nan":
        arrays["cand_mix.0.weight"][3, 3] = np.inf
        write(path, arrays)
    elif make == "text":
        path.write_text("not weights")
    else:
        arrays["node_enc.0.weight"] = arrays["node_enc.0.weight"][:, :5].copy()
        write(path, arrays)
    out = subprocess.run([sys.executable, "-m", "mrsched_gym", "compare", "--policies", "fifo",
                          f"agent:{path}", "--seeds", "1", "--workers", "1", "--quiet",
                          "--no-plots", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: agent file") and str(path) in lines[0]
    assert "allow_pickle" not in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ bombs, NaN models, messages
def _zeros_member(z, name, n_bytes):
    """A member of ``n_bytes`` zeros, written in chunks (a few hundred KiB compressed)."""
    chunk = bytes(2**20)
    with z.open(name, "w", force_zip64=True) as f:
        for _ in range(n_bytes // len(chunk)):
            f.write(chunk)
        f.write(bytes(n_bytes % len(chunk)))


def test_an_sb3_zip_whose_data_unpacks_past_its_cap_is_refused_unread(tmp_path):
    from mrsched_gym.agents.agent_files import MAX_SB3_DATA_BYTES
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        _zeros_member(z, "data", MAX_SB3_DATA_BYTES + 1)
        z.writestr("policy.pth", b"x")
    assert bomb.stat().st_size < MAX_SB3_DATA_BYTES // 100
    with pytest.raises(InputError, match="member 'data' unpacks to 67,108,865 bytes") as e:
        check_sb3_zip(bomb)
    assert_one_line(e.value, bomb)


@pytest.mark.parametrize("kind", ["npz", "zip"])
def test_an_archive_past_the_total_cap_is_refused_before_any_member_is_read(
        tmp_path, monkeypatch, kind):
    import mrsched_gym.agents.agent_files as files
    monkeypatch.setattr(files, "MAX_UNPACKED_BYTES", 3 * 2**20)   # a small cap, small files
    path = tmp_path / f"big.{kind}"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        _zeros_member(z, "node_enc.0.weight.npy" if kind == "npz" else "policy.pth",
                      2 * 2**20)
        _zeros_member(z, "node_enc.0.bias.npy" if kind == "npz" else "data", 2 * 2**20)
    read = files.read_npz if kind == "npz" else files.check_sb3_zip
    with pytest.raises(InputError, match="unpacks to 4,194,304 bytes, more than the 3,145,728"
                       ) as e:
        read(path)
    assert_one_line(e.value, path)
    # under the cap the same archive gets as far as its contents (zeros are no weights, and
    # an SB3 checkpoint's torch file is stored, never deflated)
    monkeypatch.setattr(files, "MAX_UNPACKED_BYTES", 5 * 2**20)
    with pytest.raises(InputError) as e:
        read(path)
    assert "unpacks to" not in str(e.value)
    assert kind == "npz" or "'policy.pth' is compressed" in str(e.value)


def test_a_load_error_is_one_short_line_without_torchs_advice():
    from mrsched_gym.agents.agent_files import load_error
    advice = ("Weights only load failed. This file can still be loaded, to do so you have two "
              "options, do those steps only if you trust the source of the checkpoint.\n"
              "(1) In PyTorch 2.6, we changed the default value of the `weights_only` argument "
              "in `torch.load` from `False` to `True`. Re-running `torch.load` with "
              "`weights_only` set to `False` will likely succeed\n" * 20)
    text = load_error(RuntimeError(advice))
    assert "\n" not in text and len(text) <= 180 and "weights_only" not in text
    assert text.startswith("RuntimeError: Weights only load failed")
    assert load_error(KeyError(3319893990)) == "KeyError: 3319893990"
    assert load_error(RuntimeError("Error(s) in loading state_dict for M:\n\tsize mismatch "
                                   "for w")) == ("RuntimeError: Error(s) in loading state_dict "
                                                 "for M: size mismatch for w")


def test_an_sb3_model_with_a_nan_weight_is_refused(tmp_path):
    pytest.importorskip("stable_baselines3")
    import torch
    from stable_baselines3 import PPO

    from mrsched_gym.agents.policy import load_agent, load_sb3
    model = PPO("MlpPolicy", gym.make("mrsched/Hadoop-flat-v0"), n_steps=64, device="cpu")
    good = tmp_path / "good.zip"
    model.save(good)
    assert load_sb3(good) is not None
    with torch.no_grad():
        model.policy.action_net.weight[0, 0] = float("nan")
    bad = tmp_path / "nan.zip"
    model.save(bad)
    for load in (load_sb3, load_agent):
        with pytest.raises(InputError, match="parameter 'action_net.weight' holds 1 NaN") as e:
            load(bad)
        assert_one_line(e.value, bad)


def test_an_agent_spec_that_is_a_folder_or_no_zip_is_named(tmp_path):
    from mrsched_gym.evaluate import parse_policy
    with pytest.raises(InputError, match="is a folder, not a checkpoint file"):
        parse_policy(f"agent:{tmp_path}")
    named = tmp_path / "model.pt"                 # the content decides, not the name
    named.write_text("not a model")
    with pytest.raises(InputError, match="not a zip archive") as e:
        parse_policy(f"agent:{named}")
    assert_one_line(e.value, named)


def _lying_member(path, name, recorded, holds, stored=False):
    """A zip whose member ``name`` records ``recorded`` bytes of zeros but holds ``holds``."""
    import zlib
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED) as z:
        z.writestr(name, bytes(recorded))
    raw = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(name)
    start = info.header_offset + 30 + len(name.encode())
    old_data = raw[start:start + info.compress_size]
    if stored:
        new_data = bytes(holds)
    else:
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        new_data = c.compress(bytes(holds)) + c.flush()
    raw[start:start + len(old_data)] = new_data
    # the directory and local header keep recording the old sizes: fix only the compressed
    # size (both headers), as a hostile archive would, so the reader finds the whole stream
    import struct
    delta = len(new_data) - len(old_data)
    struct.pack_into("<L", raw, info.header_offset + 18, len(new_data))
    cd = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<L", raw, cd + 20, len(new_data))
    eocd = raw.rfind(b"PK\x05\x06")
    (offset,) = struct.unpack_from("<L", raw, eocd + 16)
    struct.pack_into("<L", raw, eocd + 16, offset + delta)
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("kind", ["npz", "zip"])
def test_a_member_holding_more_than_it_records_is_refused(tmp_path, kind):
    """100 recorded bytes of a member that inflates to 64 MiB: a loader reading it whole would
    inflate all of it before cutting it to 100 bytes (and its CRC can be made to match)."""
    name = "data" if kind == "zip" else "a.npy"
    path = _lying_member(tmp_path / f"lie.{kind}", name, 100, 64 * 2**20)
    with zipfile.ZipFile(path) as z:                 # the archive reads as well-formed
        assert z.getinfo(name).file_size == 100
    read = check_sb3_zip if kind == "zip" else read_npz
    with pytest.raises(InputError, match=f"member '{name}' does not inflate to the 100 bytes"
                       ) as e:
        read(path)
    assert_one_line(e.value, path)


def test_a_torch_file_with_a_compressed_record_is_refused(tmp_path):
    path = tmp_path / "model.zip"
    pth = io.BytesIO()
    with zipfile.ZipFile(pth, "w", zipfile.ZIP_DEFLATED) as inner:
        inner.writestr("archive/data.pkl", bytes(1000))
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", "{}")
        z.writestr("policy.pth", pth.getvalue())
    with pytest.raises(InputError, match="record 'archive/data.pkl' is not stored") as e:
        check_sb3_zip(path)
    assert_one_line(e.value, path)


@pytest.mark.parametrize("zip_name", ["hadoop-v0.zip"])
def test_the_shipped_sb3_checkpoint_passes(zip_name):
    check_sb3_zip(SHIPPED / zip_name)
