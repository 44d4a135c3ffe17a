"""Reading the model's .safetensors file: safetensors' own values, the word table mapped."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

from plugins.medvidbench.scoring.embedding import package_model_dir
from plugins.medvidbench.scoring.safetensors_file import read_tensors

pytestmark = pytest.mark.unit

WORDS = "embeddings.word_embeddings.weight"


def test_the_model_reads_as_safetensors_reads_it_with_the_word_table_mapped():
    path = package_model_dir() / "model.safetensors"
    tensors = read_tensors(path, mapped={WORDS})
    expected = load_file(str(path))
    assert tensors.keys() == expected.keys()
    for name, array in tensors.items():
        assert (array.dtype, array.shape) == (expected[name].dtype, expected[name].shape), name
        assert array.tobytes() == expected[name].tobytes(), name
    assert isinstance(tensors[WORDS], np.memmap)
    assert not tensors[WORDS].flags.writeable
    assert not isinstance(tensors["encoder.layer.0.output.dense.weight"], np.memmap)
    everything = read_tensors(path, mapped="all")  # as the NAP encoder reads it
    assert all(isinstance(array, np.memmap) for array in everything.values())
    assert all(everything[name].tobytes() == array.tobytes() for name, array in tensors.items())


def write_file(path: Path, header: dict, data: bytes) -> Path:
    encoded = json.dumps(header).encode()
    path.write_bytes(len(encoded).to_bytes(8, "little") + encoded + data)
    return path


def test_a_small_file_of_several_dtypes(tmp_path):
    values = np.arange(6, dtype="<f4").reshape(2, 3)
    ids = np.array([7, -1], dtype="<i8")
    header = {
        "__metadata__": {"format": "pt"},
        "values": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "ids": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    path = write_file(tmp_path / "small.safetensors", header, values.tobytes() + ids.tobytes())
    tensors = read_tensors(path, mapped={"ids"})
    assert tensors["values"].tolist() == values.tolist()
    assert tensors["ids"].tolist() == [7, -1]


@pytest.mark.parametrize(
    ("header", "data", "message"),
    [
        (None, b"", "not a safetensors file"),
        ({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8, "outside"),
        ({"x": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, b"\0" * 16, "16 bytes"),
        ({"x": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4, "unreadable"),
        ({"x": {"dtype": "F32", "shape": [1]}}, b"\0" * 4, "unreadable"),
    ],
    ids=["too-short", "outside-the-file", "wrong-size", "unknown-dtype", "no-offsets"],
)
def test_a_broken_file_is_refused_with_its_name(tmp_path, header, data, message):
    path = tmp_path / "broken.safetensors"
    if header is None:
        path.write_bytes(b"\x05")
    else:
        write_file(path, header, data)
    with pytest.raises(ValueError, match=message) as error:
        read_tensors(path)
    assert str(path) in str(error.value)


def test_a_header_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "broken.safetensors"
    path.write_bytes((4).to_bytes(8, "little") + b"{{{{")
    with pytest.raises(ValueError, match="not JSON"):
        read_tensors(path)
