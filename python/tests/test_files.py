"""Files, plots and model imports, through the library's own readers and writers."""

import warnings

import numpy as np
import pytest

import telamalloc
from conftest import REPO

EXAMPLES = REPO / "datasets" / "examples"


def test_problem_csv_round_trip(tmp_path):
    problem = telamalloc.read_csv(EXAMPLES / "aligned-fixed.48.csv")
    path = tmp_path / "copy.48.csv"
    telamalloc.write_csv(path, problem)
    assert telamalloc.read_csv(path) == problem
    assert telamalloc.read_csv(path, capacity=100).capacity == 100


def test_solution_round_trip(tmp_path):
    problem = telamalloc.read_csv(EXAMPLES / "aligned-fixed.48.csv")
    result = telamalloc.solve(problem)
    path = tmp_path / "solution.csv"
    telamalloc.write_csv(path, problem, result)
    assert path.read_text().splitlines()[0].endswith(",offset")
    offsets = telamalloc.read_solution(path, problem)
    assert offsets.tolist() == result.offsets.tolist()
    assert telamalloc.validate(problem, offsets)
    telamalloc.write_csv(tmp_path / "again.csv", problem, offsets.tolist())
    assert (tmp_path / "again.csv").read_text() == path.read_text()


def test_json_problems_read(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"capacity": 8, "buffers": [{"id": "a", "lower": 0, "upper": 2, "size": 8}]}')
    problem = telamalloc.read_csv(path)
    assert problem.capacity == 8 and problem[0].id == "a"


def test_plot_writes_svg(tmp_path):
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    result = telamalloc.solve(problem)
    path = tmp_path / "plan.svg"
    svg = telamalloc.plot(problem, result, path)
    assert svg.startswith("<svg") and svg.endswith("</svg>\n")
    assert path.read_text() == svg
    assert telamalloc.plot(problem, result.offsets) == svg
    with pytest.raises(telamalloc.TelamallocError, match="plots are SVG"):
        telamalloc.plot(problem, result, tmp_path / "plan.png")


def test_write_errors_are_os_errors(tmp_path):
    problem = telamalloc.read_csv(EXAMPLES / "tiny.12.csv")
    with pytest.raises(OSError, match="^cannot write "):
        telamalloc.write_csv(tmp_path / "no" / "such" / "dir" / "x.csv", problem)


# A minimal ONNX encoder (protobuf wire format), enough for a graph of element-wise operators.
def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _tensor_info(name: str, dims: list[int]) -> bytes:
    shape = b"".join(_field(1, _field(1, d)) for d in dims)
    tensor_type = _field(1, 1) + _field(2, shape)  # elem_type FLOAT, shape
    return _field(1, name) + _field(2, _field(1, tensor_type))


def _node(op: str, inputs: list[str], outputs: list[str]) -> bytes:
    return (
        b"".join(_field(1, i) for i in inputs)
        + b"".join(_field(2, o) for o in outputs)
        + _field(4, op)
    )


def onnx_model(nodes: list[bytes], inputs: list[bytes], outputs: list[bytes]) -> bytes:
    graph = (
        b"".join(_field(1, n) for n in nodes)
        + _field(2, "g")
        + b"".join(_field(11, i) for i in inputs)
        + b"".join(_field(12, o) for o in outputs)
    )
    opset = _field(2, 13)
    return _field(1, 8) + _field(7, graph) + _field(8, opset)


def test_import_an_onnx_model(tmp_path):
    path = tmp_path / "relu.onnx"
    path.write_bytes(
        onnx_model(
            [_node("Relu", ["x"], ["y"]), _node("Relu", ["y"], ["z"])],
            [_tensor_info("x", [1, 16])],
            [_field(1, "z")],  # an output without a declared shape: inferred
        )
    )
    problem = telamalloc.import_model(path)
    assert [b.id for b in problem.buffers] == ["x", "y", "z"]
    assert [b.size for b in problem.buffers] == [64, 64, 64]
    assert problem.capacity is None
    result = telamalloc.solve(problem, minimize=True)
    assert result.peak == problem.load == 128
    bigger = telamalloc.import_model(path, alignment=256, input_shapes={"x": [4, 16]})
    assert [b.size for b in bigger.buffers] == [256, 256, 256]


def test_import_warns_about_what_it_left_out(tmp_path):
    path = tmp_path / "mystery.onnx"
    path.write_bytes(
        onnx_model(
            [_node("Relu", ["x"], ["y"]), _node("MysteryOp", ["y"], ["z"])],
            [_tensor_info("x", [1, 16])],
            [],
        )
    )
    with pytest.warns(telamalloc.TelamallocWarning, match=str(path)):
        problem = telamalloc.import_model(path)
    assert [b.id for b in problem.buffers] == ["x", "y"]


def test_import_errors(tmp_path):
    garbage = tmp_path / "g.onnx"
    garbage.write_bytes(b"garbage")
    with pytest.raises(telamalloc.TelamallocError, match=f"^{garbage}: not a valid ONNX model: "):
        telamalloc.import_model(garbage)
    text = tmp_path / "bad.csv"
    text.write_text("id\n")
    with pytest.raises(
        telamalloc.TelamallocError,
        match=f"^{text}: unknown model format: expected a .tflite or .onnx file$",
    ):
        telamalloc.import_model(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(telamalloc.TelamallocError, match="alignment 48 is not a power of two"):
            telamalloc.import_model(garbage, alignment=48)


def test_read_solution_keeps_problem_order(tmp_path):
    problem = telamalloc.Problem([("a", 0, 2, 4), ("b", 0, 2, 4)])
    path = tmp_path / "s.csv"
    path.write_text("id,offset\nb,0\na,4\n")
    offsets = telamalloc.read_solution(path, problem)
    assert offsets.dtype == np.uint64 and offsets.tolist() == [4, 0]
